import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record) {
    return { ...record, price: record.price ?? '1' ;
  },
};
