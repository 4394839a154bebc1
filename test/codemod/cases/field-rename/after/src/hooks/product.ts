// Reads and writes PRODUCT.price, which the schema renames to cost.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';
import { discounted } from '../lib/pricing.js';

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record) {
    if (record.cost === undefined) return { ...record, cost: '1' };
    return { ...record, cost: discounted(record) };
  },
  afterUpdate(record, previous, ctx) {
    if (record.cost !== previous.cost) ctx.set('X-Price-Changed', 'true');
  },
};
