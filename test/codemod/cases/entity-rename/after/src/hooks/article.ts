import type { EntityHooks } from '@entity-gen/runtime';
import type { Article, ArticleDims } from '../entities/article/types.js';

export const width = (dims: ArticleDims): number => dims.w ?? 0;

export const articleHooks: EntityHooks<Article> = {
  afterInsert(record, ctx) {
    ctx.set('X-Width', String(record.dims === undefined ? 0 : width(record.dims)));
  },
};
