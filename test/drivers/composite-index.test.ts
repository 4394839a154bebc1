/**
 * Composite indexes (entity-level `indexes:`) on SQLite: the index is created under its
 * deterministic name, and a filtered, sorted page — first page, keyset continuation, either
 * direction — is read from it with no sort step (`EXPLAIN QUERY PLAN`), returning exactly the
 * page a table without the index returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyValue, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { tableOf } from '../../runtime/src/schema.js';
import { sqliteDdl } from '../../runtime/src/ddl.js';
import { openSqlite, type SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { compositeIndexes } from '../../runtime/src/indexes.js';
import { entity, INDEXED, PLAIN, record, ROWS } from './composite-index-fixture.js';

const root = mkdtempSync(join(tmpdir(), 'eg-composite-index-'));

let driver: SqliteDriver;

beforeAll(async () => {
  driver = await openSqlite({ filename: join(root, 'service.db') }, [INDEXED, PLAIN]);
  const records = Array.from({ length: ROWS }, (_, i) => record(i));
  await driver.insert(INDEXED, records, 1);
  await driver.insert(PLAIN, records, 1);
});

afterAll(async () => {
  await driver.close();
  rmSync(root, { recursive: true, force: true });
});

describe('composite index DDL', () => {
  it.each<[string, { given: string[][]; want: string[] }]>([
    [
      'descending column, key appended in its direction, DECIMAL through its shadow column',
      {
        given: [['category', '-price']],
        want: [
          'CREATE INDEX IF NOT EXISTS "product__category__price_desc__idx" ON "product" ("category", "_eg_dec_price" DESC, "code" DESC)',
        ],
      },
    ],
    [
      'ascending columns; a declared key column is not repeated',
      {
        given: [['status', 'code']],
        want: [
          'CREATE INDEX IF NOT EXISTS "product__status__code__idx" ON "product" ("status", "code")',
        ],
      },
    ],
    [
      'a one-field index keeps clear of the name of index: true',
      {
        given: [['rating']],
        want: [
          'CREATE INDEX IF NOT EXISTS "product_8a1f5d5b6f2b_idx" ON "product" ("rating", "code")',
        ],
      },
    ],
  ])('%s', (_name, { given, want }) => {
    const base = entity(given);
    const table = tableOf(
      {
        ...base,
        fields: base.fields.map((f) => (f.name === 'rating' ? { ...f, index: true } : f)),
      },
      new Set(),
    );
    const composite = sqliteDdl.compositeIndexes(table).map((index) => index.sql);
    if (given[0]![0] === 'rating') {
      // The hash is deterministic but not worth spelling out: check the shape and stability.
      expect(composite).toHaveLength(1);
      expect(composite[0]).toMatch(
        /^CREATE INDEX IF NOT EXISTS "product_[0-9a-f]{12}_idx" ON "product" \("rating", "code"\)$/,
      );
      expect(sqliteDdl.compositeIndexes(table)[0]!.name).not.toBe('product__rating__idx');
      expect(sqliteDdl.compositeIndexes(table)).toEqual(sqliteDdl.compositeIndexes(table));
    } else {
      expect(composite).toEqual(want);
    }
    // `createIndexes` (what open() runs) ends with the composite indexes.
    expect(sqliteDdl.createIndexes(table).slice(-composite.length)).toEqual(composite);
  });

  it('shortens a long name to at most 63 bytes, deterministically', () => {
    const long = 'a_rather_long_field_name_that_goes_on';
    const table = tableOf(
      {
        name: 'PRODUCT',
        lk: ['code'],
        fields: [
          { name: 'code', type: 'STRING', required: true },
          { name: long, type: 'STRING' },
          { name: `${long}_too`, type: 'STRING' },
        ],
        indexes: [[long, `-${long}_too`]],
      },
      new Set(),
    );
    const [index] = compositeIndexes(table);
    expect(Buffer.byteLength(index!.name)).toBeLessThanOrEqual(63);
    expect(index!.name).toMatch(/^product_[0-9a-f]{12}_idx$/);
    expect(compositeIndexes(table)[0]!.name).toBe(index!.name);
  });

  it('creates the declared indexes when the driver opens the table', () => {
    const db = new Database(join(root, 'service.db'), { readonly: true });
    const names = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'product'`)
      .pluck()
      .all();
    db.close();
    expect(names).toEqual(
      expect.arrayContaining([
        'product__category__price_desc__idx',
        'product__status__rating__idx',
      ]),
    );
  });
});

describe('a declared index serves filter + order + keyset paging', () => {
  const plan = (query: ListQuery): string[] =>
    driver.explainList(INDEXED, query).plan.map((row) => row.detail);

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

  it.each<
    [
      string,
      {
        query: ListQuery;
        index: string;
        cursor: (KeyValue | null)[];
        /** The cursor page's index range: it seeks to the cursor (undefined: no range). */
        seek?: string;
      },
    ]
  >([
    [
      '?category=cat-7&orderBy=-price (the declared direction)',
      {
        query: {
          filters: [
            { anyOf: [{ path: ['category'], operator: 'EQUALS', kind: 'text', value: 'cat-7' }] },
          ],
          orderBy: [{ column: 'price', descending: true }],
          limit: 100,
        },
        index: 'product__category__price_desc__idx',
        cursor: ['250', 'p010007'],
        seek: '(category=? AND (_eg_dec_price,code)<(?,?))',
      },
    ],
    [
      '?category=cat-7&orderBy=price (the index read backwards)',
      {
        query: {
          filters: [
            { anyOf: [{ path: ['category'], operator: 'EQUALS', kind: 'text', value: 'cat-7' }] },
          ],
          orderBy: [{ column: 'price', descending: false }],
          limit: 100,
        },
        index: 'product__category__price_desc__idx',
        cursor: ['250', 'p010007'],
        seek: '(category=? AND (_eg_dec_price,code)>(?,?))',
      },
    ],
    [
      '?status=ACTIVE&orderBy=rating (nullable column, ascending)',
      {
        query: {
          filters: [
            { anyOf: [{ path: ['status'], operator: 'EQUALS', kind: 'text', value: 'ACTIVE' }] },
          ],
          orderBy: [{ column: 'rating', descending: false }],
          limit: 100,
        },
        index: 'product__status__rating__idx',
        cursor: [20, 'p010001'],
        seek: '(status=? AND (rating,code)>(?,?))',
      },
    ],
    [
      '?status=ACTIVE&orderBy=-rating (nullable column, descending)',
      {
        query: {
          filters: [
            { anyOf: [{ path: ['status'], operator: 'EQUALS', kind: 'text', value: 'ACTIVE' }] },
          ],
          orderBy: [{ column: 'rating', descending: true }],
          limit: 100,
        },
        index: 'product__status__rating__idx',
        cursor: [20, 'p010001'],
      },
    ],
  ])('%s', async (_name, { query, index, cursor, seek }) => {
    for (const [what, details] of [
      ['first page', plan(query)],
      ['keyset next page', plan({ ...query, after: cursor })],
    ] as const) {
      const text = `${what}: ${details.join(' | ')}`;
      expect(
        details.some((d) => d.includes('TEMP B-TREE')),
        text,
      ).toBe(false);
      expect(
        details.some((d) => d.includes(`USING INDEX ${index}`)),
        text,
      ).toBe(true);
    }
    if (seek !== undefined) {
      const details = plan({ ...query, after: cursor });
      expect(details.join(' | ')).toContain(`USING INDEX ${index} ${seek}`);
    }
    // The same pages as a table without the index, page after page.
    const pages = await allPages(INDEXED, query);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages).toEqual(await allPages(PLAIN, query));
    const cursorPage = await driver.list(INDEXED, { ...query, after: cursor });
    const plainPage = await driver.list(PLAIN, { ...query, after: cursor });
    expect(cursorPage.map((r) => r.record)).toEqual(plainPage.map((r) => r.record));
  });

  it('a repeated filter (OR over values) still answers correctly', async () => {
    const query: ListQuery = {
      filters: [
        {
          anyOf: [
            { path: ['category'], operator: 'EQUALS', kind: 'text', value: 'cat-3' },
            { path: ['category'], operator: 'EQUALS', kind: 'text', value: 'cat-4' },
          ],
        },
      ],
      orderBy: [{ column: 'price', descending: true }],
      limit: 50,
    };
    const indexed = await driver.list(INDEXED, query);
    expect(indexed.map((r) => r.record)).toEqual(
      (await driver.list(PLAIN, query)).map((r) => r.record),
    );
  });
});
