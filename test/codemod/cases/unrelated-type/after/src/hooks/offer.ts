// OFFER has a price field too; only PRODUCT.price is renamed, so nothing here changes.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Offer, OfferInput } from '../entities/offer/types.js';

export const sample: OfferInput = { id: 1, price: '9.50' };

export const offerHooks: EntityHooks<Offer> = {
  beforeInsert(record) {
    const { price } = record;
    return { ...record, price: price === '0' ? '0.01' : record.price };
  },
};
