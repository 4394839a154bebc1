/**
 * Composite indexes (entity-level `indexes:`) on PostgreSQL: the driver creates them, and a
 * filtered, sorted page — first page, keyset continuation, either direction — is read from the
 * declared index with no Sort node in `EXPLAIN`, returning exactly the page a table without the
 * index returns. The table is large enough (and ANALYZEd) that the planner's choice means
 * something. Runs when `TEST_DATABASE_URL` names a PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import type { KeyValue, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { INDEXED, PLAIN, record, ROWS } from './composite-index-fixture.js';

describeWith(POSTGRES, 'PostgreSQL composite indexes', (url) => {
  const schema = `eg_test_${process.pid}_${randomBytes(4).toString('hex')}_cidx`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };

  let driver: PostgresDriver;

  beforeAll(async () => {
    driver = new PostgresDriver({ url, env: {}, schema, poolMax: 2 });
    await driver.open([INDEXED, PLAIN]);
    const records = Array.from({ length: ROWS }, (_, i) => record(i));
    for (let from = 0; from < ROWS; from += 5_000) {
      await driver.insert(INDEXED, records.slice(from, from + 5_000), 1);
      await driver.insert(PLAIN, records.slice(from, from + 5_000), 1);
    }
    await admin(async (client) => {
      await client.query(`ANALYZE "${schema}"."product"`);
      await client.query(`ANALYZE "${schema}"."product_plain"`);
    });
  });

  afterAll(async () => {
    await driver?.close();
    await admin((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  });

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
      const page = await driver.list(table, { ...query, ...(after ? { after } : {}) });
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
      const plan = (await driver.explainList(INDEXED, q)).join('\n');
      expect(plan, `${what}:\n${plan}`).not.toMatch(/\bSort\b/);
      expect(plan, `${what}:\n${plan}`).toMatch(
        new RegExp(`Index Scan (Backward )?using ${index}`),
      );
    }
    const pages = await allPages(INDEXED, query);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages).toEqual(await allPages(PLAIN, query));
    const cursorPage = await driver.list(INDEXED, { ...query, after: cursor });
    const plainPage = await driver.list(PLAIN, { ...query, after: cursor });
    expect(cursorPage.map((r) => r.record)).toEqual(plainPage.map((r) => r.record));
  });
});
