import type { Article, ArticleInput, ArticlePatch } from '../entities/article/types.js';

export function discounted(product: Article): string {
  return (Number(product.cost ?? 0) * 0.9).toFixed(2);
}

export const sample: ArticleInput = { code: 'p1', cost: 12 };
export const patch: ArticlePatch = { cost: null };
