import { expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import type { KeyValue, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { indexedTables } from '../helpers/pg-indexed-tables.js';
import { INDEXED, PLAIN, record, ROWS } from './composite-index-fixture.js';

describeWith(POSTGRES, 'PostgreSQL composite indexes', (url) => {
  const tables = indexedTables(url, 'cidx', { indexed: INDEXED, plain: PLAIN }, ROWS, record);
  const { schema, admin } = tables;

  it('creates each declared index with the key appended and the listing’s NULL order', async () => {
    const definitions = await admin(async (client) => {
      const result = await client.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'product' ORDER BY indexname`,
        [schema],
      );
      return result.rows.map((row) => row.indexdef);
    });
    expect(definitions).toEqual(
      expect.arrayContaining([
        `CREATE INDEX product__category__price_desc__idx ON ${schema}.product USING btree (category NULLS FIRST, price DESC NULLS LAST, code DESC)`,
        `CREATE INDEX product__status__rating__idx ON ${schema}.product USING btree (status NULLS FIRST, rating NULLS FIRST, code)`,
      ]),
    );
  });

  const equals = (column: string, value: string): ListQuery['filters'] => [
    { anyOf: [{ path: [column], operator: 'EQUALS', kind: 'text', value }] },
  ];

  /** Every page of `query` by keyset cursor, as record codes. */
  const allPages = async (table: TableDescriptor, query: ListQuery): Promise<string[][]> => {
    const pages: string[][] = [];
    let after: (KeyValue | null)[] | undefined;
    for (;;) {
      const page = await tables.driver().list(table, { ...query, ...(after ? { after } : {}) });
      if (page.length === 0) return pages;
      pages.push(page.map((r) => r.record['code'] as string));
      const last = page.at(-1)!.record;
      after = [
        ...query.orderBy.map((term) => (last[term.column] ?? null) as KeyValue | null),
        last['code'] as string,
      ];
    }
  };

  it.each<[string, { query: ListQuery; index: string; cursor: (KeyValue | null)[] }]>([
    [
      '?category=cat-7&orderBy=-price (the declared direction)',
      {
        query: {
          filters: equals('category', 'cat-7'),
          orderBy: [{ column: 'price', descending: true }],
          limit: 100,
        },
        index: 'product__category__price_desc__idx',
        cursor: ['250', 'p010007'],
      },
    ],
    [
      '?category=cat-7&orderBy=price (the index read backwards)',
      {
        query: {
          filters: equals('category', 'cat-7'),
          orderBy: [{ column: 'price', descending: false }],
          limit: 100,
        },
        index: 'product__category__price_desc__idx',
        cursor: ['250', 'p010007'],
      },
    ],
    [
      '?status=ACTIVE&orderBy=rating (nullable column, ascending)',
      {
        query: {
          filters: equals('status', 'ACTIVE'),
          orderBy: [{ column: 'rating', descending: false }],
          limit: 100,
        },
        index: 'product__status__rating__idx',
        cursor: [20, 'p010001'],
      },
    ],
    [
      '?status=ACTIVE&orderBy=-rating (nullable column, descending)',
      {
        query: {
          filters: equals('status', 'ACTIVE'),
          orderBy: [{ column: 'rating', descending: true }],
          limit: 100,
        },
        index: 'product__status__rating__idx',
        cursor: [20, 'p010001'],
      },
    ],
  ])('%s: read from the index, no Sort node', async (_name, { query, index, cursor }) => {
    for (const [what, q] of [
      ['first page', query],
      ['keyset next page', { ...query, after: cursor }],
    ] as const) {
      const plan = (await tables.driver().explainList(INDEXED, q)).join('\n');
      expect(plan, `${what}:\n${plan}`).not.toMatch(/\bSort\b/);
      expect(plan, `${what}:\n${plan}`).toMatch(
        new RegExp(`Index Scan (Backward )?using ${index}`),
      );
    }
    const pages = await allPages(INDEXED, query);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages).toEqual(await allPages(PLAIN, query));
    const cursorPage = await tables.driver().list(INDEXED, { ...query, after: cursor });
    const plainPage = await tables.driver().list(PLAIN, { ...query, after: cursor });
    expect(cursorPage.map((r) => r.record)).toEqual(plainPage.map((r) => r.record));
  });
});
