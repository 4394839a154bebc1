// Quote.price and an OFFER literal's price, next to PRODUCT records: neither is renamed.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';
import { quote } from '../lib/quotes.js';

export const productHooks: EntityHooks<Product> = {
  afterInsert(record, ctx) {
    ctx.set('X-Quote', String(quote(record, { id: 0, price: '1' }).price));
  },
};
