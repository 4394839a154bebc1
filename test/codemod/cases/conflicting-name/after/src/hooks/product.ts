// PRODUCT.price becomes cost, and this file already has a variable named cost in scope
// everywhere: a rename that renamed the locals along with the property would read it instead.
import type { EntityHooks } from '@entity-gen/runtime';
import type { Product, ProductInput } from '../entities/product/types.js';

/** The handling fee, named like the field's new name. */
const cost = 5;

/** Destructuring. */
export function total(product: Product): number {
  const { cost: price } = product;
  return Number(price) + cost;
}

/** Destructuring a parameter, with a default and a rest element. */
export function summary({ cost: price = '0', ...rest }: Partial<Product>): string {
  return `${rest.code ?? '?'}: ${price} + ${cost}`;
}

/** Object shorthand, with a local named like the old field. */
export function input(code: string, price: string): ProductInput {
  return { code, cost: price };
}

/** Property access, next to the local. */
export function margin(product: Product): number {
  return Number(product.cost) - cost;
}

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record) {
    const { cost: price, ...others } = record;
    const cheap = Number(price) < cost;
    return cheap ? { ...others, cost: String(cost) } : { ...others, cost: price };
  },
};
