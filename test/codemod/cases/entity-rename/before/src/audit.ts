import { productHooks } from './hooks/product.js';
import type { Product } from './entities/product/types.js';

export const hooked = productHooks.afterInsert !== undefined;
export const label = (product: Product): string => `PRODUCT ${product.code}`;
