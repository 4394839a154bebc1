import type { EntityHooks } from '@entity-gen/runtime';
import type { Product, ProductDims } from '../entities/product/types.js';

export const width = (dims: ProductDims): number => dims.w ?? 0;

export const productHooks: EntityHooks<Product> = {
  afterInsert(record, ctx) {
    ctx.set('X-Width', String(record.dims === undefined ? 0 : width(record.dims)));
  },
};
