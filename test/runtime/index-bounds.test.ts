/**
 * Which lists a composite index serves and bounds (the SQLite driver answers those on its main
 * connection; every other list runs in a reader, off the event loop): the cases of the API docs'
 * table for `indexes: [[category, -price]]` on PRODUCT keyed by `code`.
 */
import { describe, expect, it } from 'vitest';
import type { FilterGroup, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { indexBoundsList } from '../../runtime/src/indexes.js';

const PRODUCT: TableDescriptor = {
  entity: 'PRODUCT',
  table: 'product',
  key: ['code'],
  columns: [
    { name: 'code', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'name', kind: 'text', fieldType: 'STRING', required: true, indexed: true },
    { name: 'category', kind: 'text', fieldType: 'ENTITY_REF', required: false, indexed: true },
    { name: 'price', kind: 'decimal', fieldType: 'DECIMAL', required: true, indexed: true },
    { name: 'stock', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
  indexes: [
    [
      { column: 'category', descending: false },
      { column: 'price', descending: true },
    ],
  ],
};

const equals = (field: string, value: string): FilterGroup => ({
  anyOf: [{ path: [field], operator: 'EQUALS', kind: 'text', value }],
});
const page = (overrides: Partial<ListQuery>): ListQuery => ({
  filters: [equals('category', 'tools')],
  orderBy: [{ column: 'price', descending: true }],
  limit: 101,
  offset: 0,
  ...overrides,
});

describe('indexBoundsList', () => {
  it('holds for the filtered page in the index order, either direction, and a seeking cursor', () => {
    expect(indexBoundsList(PRODUCT, page({}), 1001)).toBe(true);
    expect(
      indexBoundsList(PRODUCT, page({ orderBy: [{ column: 'price', descending: false }] }), 1001),
    ).toBe(true);
    expect(
      indexBoundsList(PRODUCT, { ...page({}), offset: undefined, after: ['12.5', 'P1'] }, 1001),
    ).toBe(true);
    // A filter on every declared column leaves the key order, in the index's direction.
    const both: ListQuery = {
      filters: [equals('category', 'tools'), equals('price', '3')],
      orderBy: [{ column: 'code', descending: true }],
      limit: 10,
    };
    expect(indexBoundsList(PRODUCT, both, 1001)).toBe(true);
  });

  it('does not hold where a sort, a range, an OR or a long read remains', () => {
    const cases: ListQuery[] = [
      page({ orderBy: [] }), // key order after the filter: sorted
      page({
        orderBy: [
          { column: 'price', descending: true },
          { column: 'name', descending: false },
        ],
      }),
      page({
        orderBy: [
          { column: 'price', descending: true },
          { column: 'code', descending: false }, // tie-break against the index's direction
        ],
      }),
      page({
        filters: [
          {
            anyOf: [
              { path: ['category'], operator: 'EQUALS', kind: 'text', value: 'tools' },
              { path: ['category'], operator: 'EQUALS', kind: 'text', value: 'garden' },
            ],
          },
        ],
      }),
      page({
        filters: [
          { anyOf: [{ path: ['category'], operator: 'STARTS_WITH', kind: 'text', value: 'to' }] },
        ],
      }),
      page({ filters: [] }), // the filter field comes first in the index
      page({ filters: [equals('category', 'tools'), equals('name', 'x')] }), // name is not in it
      page({ limit: undefined }),
      page({ offset: 950 }), // 950 + 101 entries read
      page({ limit: 2000 }),
    ];
    for (const query of cases)
      expect(indexBoundsList(PRODUCT, query, 1001), JSON.stringify(query)).toBe(false);
  });

  it('does not hold for a cursor on an optional sort field (it scans from the range start)', () => {
    const table: TableDescriptor = {
      ...PRODUCT,
      indexes: [
        [
          { column: 'category', descending: false },
          { column: 'stock', descending: true },
        ],
      ],
    };
    const query: ListQuery = {
      filters: [equals('category', 'tools')],
      orderBy: [{ column: 'stock', descending: true }],
      limit: 101,
    };
    expect(indexBoundsList(table, query, 1001)).toBe(true);
    expect(indexBoundsList(table, { ...query, after: [5, 'P1'] }, 1001)).toBe(false);
  });

  it('does not hold without composite indexes', () => {
    expect(indexBoundsList({ ...PRODUCT, indexes: [] }, page({}), 1001)).toBe(false);
  });

  it('does not hold where a filter expression, a search or only deleted records may skip entries', () => {
    const cases: ListQuery[] = [
      {
        ...page({}),
        expression: {
          condition: { path: ['stock'], operator: 'GT', kind: 'integer', value: 5 },
        },
      },
      { ...page({}), search: ['steel'] },
      { ...page({}), deleted: 'only' },
    ];
    for (const query of cases) {
      expect(indexBoundsList(PRODUCT, query, 1001), JSON.stringify(query)).toBe(false);
      expect(indexBoundsList(PRODUCT, query, 1001, { keyOrdered: true })).toBe(false);
    }
    expect(indexBoundsList(PRODUCT, { ...page({}), deleted: 'include' }, 1001)).toBe(true);
  });
});

describe('indexBoundsList with key-ordered indexes (SQLite: entries end with the key)', () => {
  const plain = { ...PRODUCT, indexes: [] };
  const list = (query: Partial<ListQuery>): ListQuery => ({
    filters: [],
    orderBy: [],
    limit: 101,
    offset: 0,
    ...query,
  });
  const bounded = (query: ListQuery): boolean =>
    indexBoundsList(plain, query, 1001, { keyOrdered: true });

  it('holds for the key order, a single-field index in either direction, and a filter on one', () => {
    expect(bounded(list({}))).toBe(true);
    expect(bounded(list({ offset: 500 }))).toBe(true);
    expect(bounded(list({ orderBy: [{ column: 'code', descending: true }] }))).toBe(true);
    expect(bounded(list({ orderBy: [{ column: 'name', descending: false }] }))).toBe(true);
    expect(bounded(list({ orderBy: [{ column: 'price', descending: true }] }))).toBe(true);
    expect(
      bounded(list({ orderBy: [{ column: 'name', descending: true }], after: ['n', 'P1'] })),
    ).toBe(true);
    // category = x, then the key: the entries of the category index.
    expect(bounded(list({ filters: [equals('category', 'tools')] }))).toBe(true);
    // Without the option only composite indexes count.
    expect(indexBoundsList(plain, list({}), 1001)).toBe(false);
  });

  it('does not hold for an unindexed field, a mixed direction, two filters or a long read', () => {
    const cases: ListQuery[] = [
      list({ orderBy: [{ column: 'stock', descending: false }] }),
      list({
        orderBy: [
          { column: 'name', descending: true },
          { column: 'code', descending: false },
        ],
      }),
      list({
        filters: [equals('category', 'tools')],
        orderBy: [{ column: 'name', descending: false }],
      }),
      list({ filters: [equals('category', 'tools'), equals('name', 'x')] }),
      list({ filters: [equals('stock', '3')] }),
      list({ offset: 950 }),
      list({ limit: undefined }),
    ];
    for (const query of cases) expect(bounded(query), JSON.stringify(query)).toBe(false);
  });
});
