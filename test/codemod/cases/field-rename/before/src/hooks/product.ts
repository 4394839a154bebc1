// Reads and writes PRODUCT.price, which the schema renames to cost.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';
import { discounted } from '../lib/pricing.js';

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record) {
    if (record.price === undefined) return { ...record, price: '1' };
    return { ...record, price: discounted(record) };
  },
  afterUpdate(record, previous, ctx) {
    if (record.price !== previous.price) ctx.set('X-Price-Changed', 'true');
  },
};
