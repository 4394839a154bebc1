import type { Product, ProductInput, ProductPatch } from '../entities/product/types.js';

export function discounted(product: Product): string {
  return (Number(product.cost ?? 0) * 0.9).toFixed(2);
}

export const sample: ProductInput = { code: 'p1', cost: 12 };
export const patch: ProductPatch = { cost: null };
