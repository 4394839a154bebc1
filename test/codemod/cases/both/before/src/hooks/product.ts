// Reads and writes PRODUCT.price, which the schema renames to cost.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';
import { discounted } from '../lib/pricing.js';

/** An unrelated type with a property of the same name: left alone. */
interface Quote {
  price: number;
}
const quote: Quote = { price: 10 };
/** A local variable named like the new field: destructuring keeps its own name. */
const cost = 2;

export function cheap(product: Product): boolean {
  const { price } = product;
  return Number(price) + cost < quote.price;
}

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record) {
    if (record.price === undefined) return { ...record, price: '1' };
    return { ...record, price: discounted(record) };
  },
  afterUpdate(record, previous, ctx) {
    if (record.price !== previous.price) ctx.set('X-Price-Changed', 'true');
  },
};
