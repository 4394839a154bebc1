/**
 * The table both composite-index suites (SQLite and PostgreSQL) read pages from: PRODUCT with two
 * composite indexes, the same table without them as the reference, and its rows.
 */
import type { TableDescriptor } from '../../runtime/src/driver.js';
import { tableOf, type EntitySchema } from '../../runtime/src/schema.js';

export const entity = (indexes?: string[][]): EntitySchema => ({
  name: 'PRODUCT',
  lk: ['code'],
  fields: [
    { name: 'code', type: 'STRING', required: true },
    { name: 'category', type: 'STRING' },
    { name: 'price', type: 'DECIMAL', required: true },
    { name: 'rating', type: 'INTEGER' },
    { name: 'status', type: 'ENUM', enums: ['ACTIVE', 'RETIRED'] },
  ],
  ...(indexes === undefined ? {} : { indexes }),
});

export const INDEXED = tableOf(
  entity([
    ['category', '-price'],
    ['status', 'rating'],
  ]),
  new Set(),
);
/** The same table under another name, without the indexes: the reference answers. */
export const PLAIN: TableDescriptor = { ...tableOf(entity(), new Set()), table: 'product_plain' };

export const ROWS = 20_000;
export const code = (i: number): string => `p${String(i).padStart(6, '0')}`;
export const record = (i: number): Record<string, unknown> => ({
  code: code(i),
  ...(i % 13 === 0 ? {} : { category: `cat-${i % 20}` }),
  // Many equal prices, so the key tie-break matters.
  price: ((i * 7919) % 500).toFixed(2),
  ...(i % 9 === 0 ? {} : { rating: (i * 31) % 50 }),
  status: i % 3 === 0 ? 'RETIRED' : 'ACTIVE',
});
