import { articleHooks } from './hooks/article.js';
import type { Article } from './entities/article/types.js';

export const hooked = articleHooks.afterInsert !== undefined;
export const label = (product: Article): string => `PRODUCT ${product.code}`;
