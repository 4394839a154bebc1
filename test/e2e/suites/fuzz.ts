/**
 * Property tests of the HTTP interface (fast-check), defined once and run against every storage
 * driver: `fuzz.test.ts` (SQLite) and `fuzz.postgres.test.ts`. Random PRODUCT records of the shop
 * fixture — plausible values, wrong types, hostile strings, deep and odd JSON — and random list
 * queries must never get a 5xx, and every record the service accepts must read back exactly as it
 * answered the insert. Random sets of records and well-formed list queries (filters, repeated
 * filters, sorting, start and limit, the cursor of the next page) must get exactly the records,
 * order and count that an in-memory evaluation of the documented semantics gives
 * (`list-oracle.ts`).
 *
 * Every run draws a new seed and prints it (`fuzz seed <n> …`); every property of the run uses it,
 * so a failure's report (fast-check's `{ seed: <n>, path: … }` and counterexample) names it too.
 * To replay a run, set the seed:
 *
 *   FUZZ_SEED=<n> npx vitest run test/e2e/fuzz.test.ts
 */
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';
import {
  evaluate,
  orderByParam,
  queryString,
  type FieldSpec,
  type Filter,
  type ListQuery,
  type Operator,
  type SortTerm,
  type StoredRecord,
} from './list-oracle.js';

/** The seed of this run: `FUZZ_SEED` when set (to replay a run), a new one otherwise. */
function fuzzSeed(): number {
  const given = process.env['FUZZ_SEED'];
  if (given !== undefined && given !== '') {
    if (!/^-?\d{1,10}$/.test(given) || !Number.isSafeInteger(Number(given)))
      throw new Error(`FUZZ_SEED must be an integer (a seed printed by a run), not "${given}"`);
    return Number(given);
  }
  return randomInt(2 ** 31 - 1);
}

/** Text that tends to break things: quotes, wildcards, NUL, surrogate pairs, long runs. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom("'", '"', '%', '_', '\\', '\u0000', '😀', 'null', '', ' ', 'a'.repeat(2000)),
);

/** A value of any JSON shape, small. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Each field: mostly a plausible value, sometimes something of the wrong kind. */
function field(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: plausible }, { weight: 1, arbitrary: anyJson });
}

/** Text a STRING field accepts: not empty, no U+0000 (PostgreSQL cannot store it). */
const validText = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 24 })
  .filter((text) => !text.includes('\u0000'));

/**
 * The CATEGORY records the suite creates first: the shop's PRODUCT.category has `onDelete:
 * RESTRICT`, so a product is accepted only when it names one of them. Built from the characters of
 * `textUnit` (below) so that filters on `category` still meet case, LIKE wildcards, quotes, a
 * backslash and characters outside the BMP.
 */
const CATEGORIES = [
  'a',
  'b',
  'A',
  'ab',
  'aB',
  'Ab',
  'ba',
  'aaa',
  '%',
  'a%',
  '_',
  'a_b',
  "'",
  "a'b",
  '\\',
  'a\\b',
  'é',
  'ß',
  '😀',
  'a😀',
  '\uff5e',
] as const;

/** A category that exists (`CATEGORIES`). */
const storedCategory = fc.constantFrom(...CATEGORIES);

/** A date between years 1 and 9999. */
const date = fc.date({
  min: new Date('0001-01-01T00:00:00Z'),
  max: new Date('9999-12-31T00:00:00Z'),
  noInvalidDate: true,
});

/** Records that should be accepted: every field of the right kind, in its various input forms. */
const validProduct = fc.record(
  {
    code: fc.stringMatching(/^[a-z0-9]{1,12}$/),
    name: validText,
    category: storedCategory,
    // The shop's price is at least 0.01 (its constraint, SPEC §16).
    price: fc.oneof(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.stringMatching(/^\d{1,20}(\.\d{1,20})?$/).filter((text) => /^0*[1-9]/.test(text)),
    ),
    stock: fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.stringMatching(/^-?[1-9]\d{0,12}$/)),
    weightKg: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }),
    available: fc.constantFrom(true, false, 'true', 'false'),
    releaseDate: date.map((d) => d.toISOString().slice(0, 10)),
    lastRestock: date.map((d) => d.toISOString()),
    status: fc.constantFrom('draft', 'ACTIVE', 'Retired'),
    size: fc.constantFrom('S', 'M', 'L'),
    tags: fc.array(validText, { maxLength: 4 }),
    ratings: fc.array(fc.integer({ min: -1e6, max: 1e6 }), { maxLength: 4 }),
    attributes: fc.jsonValue({ maxDepth: 3 }),
    warehouse: fc.record({
      lat: fc.double({ min: -90, max: 90, noNaN: true }),
      lng: fc.double({ min: -180, max: 180, noNaN: true }),
    }),
  },
  { requiredKeys: ['code', 'name', 'price'] },
);

const wildProduct = fc.record(
  {
    code: fc.oneof(fc.stringMatching(/^[a-z0-9]{1,12}$/), nastyText),
    name: field(nastyText),
    // Mostly a category that exists, sometimes any text (a 400 unless it names one).
    category: field(fc.oneof(storedCategory, nastyText)),
    price: field(
      fc.oneof(fc.double({ noNaN: true }), fc.stringMatching(/^-?\d{1,20}(\.\d{1,20})?$/)),
    ),
    stock: field(fc.oneof(fc.integer(), fc.stringMatching(/^-?\d{1,18}$/))),
    weightKg: field(fc.double({ noNaN: true, noDefaultInfinity: true })),
    available: field(fc.constantFrom(true, false, 'true', 'false', 'yes')),
    releaseDate: field(fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))),
    lastRestock: field(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
    status: field(fc.constantFrom('draft', 'ACTIVE', 'Retired', 'unknown')),
    size: field(fc.constantFrom('S', 'M', 'L', 'XL')),
    tags: field(fc.array(nastyText, { maxLength: 4 })),
    ratings: field(fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 4 })),
    attributes: anyJson,
    warehouse: field(
      fc.record({ lat: fc.double({ min: -95, max: 95 }), lng: fc.double({ min: -185, max: 185 }) }),
    ),
  },
  { requiredKeys: ['code'] },
);

const product = fc.oneof(validProduct, wildProduct);

const query = fc
  .array(
    fc.tuple(
      fc.constantFrom('code', 'name', 'price', 'stock', 'available', 'status', 'tags', 'nope'),
      fc.constantFrom('', '[GT]', '[LTE]', '[CONTAINS]', '[NOT]', '[STARTS_WITH]', '[BOGUS]'),
      nastyText,
    ),
    { maxLength: 4 },
  )
  .chain((filters) =>
    fc.record({
      filters: fc.constant(filters),
      orderBy: fc.option(fc.constantFrom('price', '-stock,name', 'tags', '-code'), {
        nil: undefined,
      }),
      limit: fc.option(fc.oneof(fc.integer({ min: -1, max: 2000 }), nastyText), { nil: undefined }),
      start: fc.option(fc.integer({ min: -1, max: 50 }), { nil: undefined }),
    }),
  );

/**
 * Generators of the list oracle's data and queries. Values come from small pools so that filters
 * match some records and not others, and sort values tie; text mixes cases, LIKE wildcards,
 * quotes, a backslash and characters outside the BMP, which is where a wrong comparison shows.
 */
const textUnit = fc.constantFrom('a', 'b', 'A', '%', '_', "'", '\\', 'é', 'ß', '😀', '\uff5e');
const storedText = fc.string({ unit: textUnit, minLength: 1, maxLength: 4 });
const filterText = fc.string({ unit: textUnit, minLength: 1, maxLength: 3 });
const DECIMALS = [
  '-12.5',
  '-1',
  '-0.25',
  '0',
  '0.5',
  '1',
  '1.50',
  '2',
  '10',
  '12345678901234567890.123',
];
/** The prices stored: the shop's price is at least 0.01 (its constraint, SPEC §16). */
const STORED_DECIMALS = DECIMALS.filter((price) => Number(price) >= 0.01);
const DOUBLES = [-1.5, 0, 0.1, 2, 2.5, 1e9];
const DATES = ['1999-12-31', '2000-01-01', '2024-02-29', '2024-03-01'];
const INSTANTS = [
  '2024-01-01T00:00:00.000Z',
  '2024-01-01T00:00:00.001Z',
  '2024-06-30T23:59:59.999Z',
];
const STATUSES = ['DRAFT', 'ACTIVE', 'RETIRED'] as const;
const UNITS = ['cm', 'in'] as const;

const listedProduct = fc.record(
  {
    code: storedText,
    name: storedText,
    category: storedCategory,
    price: fc.constantFrom(...STORED_DECIMALS),
    stock: fc.integer({ min: -2, max: 3 }),
    weightKg: fc.constantFrom(...DOUBLES),
    available: fc.boolean(),
    releaseDate: fc.constantFrom(...DATES),
    lastRestock: fc.constantFrom(...INSTANTS),
    status: fc.constantFrom('draft', 'ACTIVE', 'Retired'),
    size: fc.constantFrom('S', 'M', 'L'),
    dimensions: fc.record(
      {
        width: fc.constantFrom(...DOUBLES),
        height: fc.constant(1),
        unit: fc.constantFrom(...UNITS),
      },
      { requiredKeys: ['width', 'height'] },
    ),
    tags: fc.array(storedText, { maxLength: 3 }),
    ratings: fc.array(fc.integer({ min: -2, max: 2 }), { maxLength: 3 }),
  },
  { requiredKeys: ['code', 'name', 'price'] },
);

/**
 * Up to 14 records with distinct keys, and distinct names within a category (the shop's unique
 * rule, SPEC §16: a record without a category never collides).
 */
const listedProducts = fc
  .uniqueArray(listedProduct, {
    maxLength: 14,
    selector: (record) => record.code,
  })
  .filter((records) => {
    const named = records.filter((record) => record.category !== undefined);
    return (
      new Set(named.map((record) => JSON.stringify([record.category, record.name]))).size ===
      named.length
    );
  });

const TEXT_OPERATORS: readonly Operator[] = [
  'EQUALS',
  'NOT_EQUALS',
  'GT',
  'GTE',
  'LT',
  'LTE',
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
];
const ORDER_OPERATORS: readonly Operator[] = ['EQUALS', 'NOT_EQUALS', 'GT', 'GTE', 'LT', 'LTE'];
const EQUALITY: readonly Operator[] = ['EQUALS', 'NOT_EQUALS'];
const MEMBERSHIP: readonly Operator[] = ['CONTAINS', 'NOT_CONTAINS'];

/** The filterable fields: spec, operators, and the values a filter on it takes. */
const FILTERABLE: readonly [FieldSpec, readonly Operator[], fc.Arbitrary<string>][] = [
  [{ path: 'code', kind: 'text' }, TEXT_OPERATORS, filterText],
  [{ path: 'name', kind: 'text' }, TEXT_OPERATORS, filterText],
  [{ path: 'category', kind: 'text' }, TEXT_OPERATORS, filterText],
  [
    { path: 'price', kind: 'decimal' },
    ORDER_OPERATORS,
    fc.constantFrom(...DECIMALS, '1.500', '-0'),
  ],
  [
    { path: 'stock', kind: 'integer' },
    ORDER_OPERATORS,
    fc.integer({ min: -3, max: 4 }).map(String),
  ],
  [
    { path: 'weightKg', kind: 'double' },
    ORDER_OPERATORS,
    fc.constantFrom(...DOUBLES.map(String), '0.10'),
  ],
  [{ path: 'available', kind: 'bool' }, EQUALITY, fc.constantFrom('true', 'false')],
  [{ path: 'releaseDate', kind: 'date' }, ORDER_OPERATORS, fc.constantFrom(...DATES, '2024-02-28')],
  [
    { path: 'lastRestock', kind: 'datetime' },
    ORDER_OPERATORS,
    fc.constantFrom(...INSTANTS, '2024-01-01T01:00:00.001+01:00', '2024-01-01T00:00:00Z'),
  ],
  [
    { path: 'status', kind: 'enum', enums: STATUSES },
    ORDER_OPERATORS,
    fc.constantFrom('DRAFT', 'active', 'Retired', 'ACTIVE'),
  ],
  [{ path: 'size', kind: 'select' }, ORDER_OPERATORS, fc.constantFrom('S', 'M', 'L')],
  [{ path: 'tags', kind: 'textArray' }, MEMBERSHIP, filterText],
  [
    { path: 'ratings', kind: 'integerArray' },
    MEMBERSHIP,
    fc.integer({ min: -2, max: 3 }).map(String),
  ],
  [{ path: 'dimensions.unit', kind: 'enum', enums: UNITS }, EQUALITY, fc.constantFrom('cm', 'IN')],
  [
    { path: 'dimensions.width', kind: 'double' },
    ORDER_OPERATORS,
    fc.constantFrom(...DOUBLES.map(String)),
  ],
];

/** The ways an operator may be written (operators are case-insensitive; `!` and NOT alias NOT_EQUALS). */
function spellings(operator: Operator): string[] {
  const named = [`[${operator}]`, `[${operator.toLowerCase()}]`];
  if (operator === 'EQUALS') return ['', ...named];
  if (operator === 'NOT_EQUALS') return ['[!]', '[NOT]', '[not]', ...named];
  return named;
}

/** One filter parameter, or two on the same field with the same operator (an OR group, or for
 * NOT_EQUALS and NOT_CONTAINS two exclusions), each value written its own way. */
const oracleFilters: fc.Arbitrary<Filter[]> = fc
  .constantFrom(...FILTERABLE)
  .chain(([field, operators, values]) =>
    fc.constantFrom(...operators).chain((operator) =>
      fc.array(
        fc.record({
          field: fc.constant(field),
          operator: fc.constant(operator),
          spelling: fc.constantFrom(...spellings(operator)),
          value: values,
        }),
        { minLength: 1, maxLength: 2 },
      ),
    ),
  );

const SORTABLE: readonly FieldSpec[] = FILTERABLE.map(([field]) => field).filter(
  (field) => !field.path.includes('.') && !field.kind.endsWith('Array'),
);
const KEY = SORTABLE.find((field) => field.path === 'code')!;

const oracleQuery: fc.Arbitrary<ListQuery> = fc.record(
  {
    filters: fc.array(oracleFilters, { maxLength: 3 }).map((groups) => groups.flat()),
    orderBy: fc.uniqueArray(
      fc.record({ field: fc.constantFrom(...SORTABLE), descending: fc.boolean() }),
      { maxLength: 3, selector: (term: SortTerm) => term.field.path },
    ),
    start: fc.integer({ min: 0, max: 6 }),
    limit: fc.integer({ min: 1, max: 6 }),
  },
  { requiredKeys: ['filters', 'orderBy'] },
);

/** A property sends hundreds of requests: generous on a loaded machine, it still ends a hung run. */
const PROPERTY_TIMEOUT = 180_000;

/**
 * Registers the properties under `describe(label)`; the service is generated into
 * `test/output/e2e-fuzz-<label>` and booted on a fresh driver from `makeDriver()`.
 */
export function describeFuzzSuite(label: string, makeDriver: MakeDriver): void {
  const seed = fuzzSeed();
  console.log(`fuzz seed ${seed} (${label}); replay with FUZZ_SEED=${seed}`);
  describe(label, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-fuzz-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
      const categories = await service.request('POST', '/data/category', {
        body: { data: CATEGORIES.map((name) => ({ name })) },
      });
      expect(categories.status, categories.text).toBe(200);
    });
    afterAll(async () => {
      await service?.close();
    });

    it(
      'random records: never a 5xx; an accepted record reads back as answered',
      async () => {
        let accepted = 0;
        await fc.assert(
          fc.asyncProperty(product, async (record) => {
            const inserted = await service.request('POST', '/data/product', {
              body: { data: record },
            });
            expect(inserted.status, inserted.text).toBeLessThan(500);
            accepted += inserted.status === 200 ? 1 : 0;
            if (inserted.status !== 200) return;
            const id = String(inserted.body.data.code);
            const read = await service.request('GET', `/data/product/${encodeURIComponent(id)}`);
            expect(read.status, read.text).toBe(200);
            expect(read.body.data).toEqual(inserted.body.data);
            const patched = await service.request(
              'PATCH',
              `/data/product/${encodeURIComponent(id)}`,
              {
                body: { data: { tags: record.tags ?? null, stock: record.stock ?? null } },
              },
            );
            expect(patched.status, patched.text).toBeLessThan(500);
            await service.request('DELETE', `/data/product/${encodeURIComponent(id)}`);
          }),
          { numRuns: 120, seed },
        );
        // The property says something only if records are accepted too, not just refused.
        expect(accepted).toBeGreaterThan(30);
      },
      PROPERTY_TIMEOUT,
    );

    it(
      'random, often malformed list queries and counts: never a 5xx',
      async () => {
        await fc.assert(
          fc.asyncProperty(query, async ({ filters, orderBy, limit, start }) => {
            const params = new URLSearchParams();
            for (const [name, operator, value] of filters)
              params.append(`${name}${operator}`, value);
            if (orderBy !== undefined) params.set('orderBy', orderBy);
            if (limit !== undefined) params.set('limit', String(limit));
            if (start !== undefined) params.set('start', String(start));
            const list = await service.request('GET', `/data/product?${params}`);
            expect(list.status, list.text).toBeLessThan(500);
            const count = await service.request('GET', `/entity/product/recordCounts?${params}`);
            expect(count.status, count.text).toBeLessThan(500);
          }),
          { numRuns: 100, seed },
        );
      },
      PROPERTY_TIMEOUT,
    );

    it(
      'random records and list queries: the records, order, page and count the documented semantics give',
      async () => {
        let nonEmpty = 0;
        await fc.assert(
          fc.asyncProperty(
            listedProducts,
            fc.array(oracleQuery, { minLength: 1, maxLength: 6 }),
            async (products, queries) => {
              await removeEveryProduct(service);
              const inserted = await service.request('POST', '/data/product', {
                body: { data: products },
              });
              expect(inserted.status, inserted.text).toBe(200);
              const records = inserted.body.data as StoredRecord[];
              for (const query of queries) {
                const expected = evaluate(records, query, KEY);
                nonEmpty += expected.page.length > 0 ? 1 : 0;
                const params = queryString(query);
                const list = await service.request('GET', `/data/product?${params}`);
                expect(list.status, `${params}: ${list.text}`).toBe(200);
                expect(list.body.data, String(params)).toEqual(expected.page);
                const count = await service.request(
                  'GET',
                  `/entity/product/recordCounts?${params}`,
                );
                expect(count.status, `${params}: ${count.text}`).toBe(200);
                expect(count.body.data, String(params)).toEqual({ count: expected.all.length });
                await checkPaging(service, query, params, list.body.meta, expected.all);
              }
            },
          ),
          { numRuns: 30, seed },
        );
        // The comparison says something only if pages have records, not just empty lists.
        expect(nonEmpty).toBeGreaterThan(10);
      },
      PROPERTY_TIMEOUT,
    );
  });
}

/** Deletes every PRODUCT record, so that the service holds exactly what a property run inserts. */
async function removeEveryProduct(service: BootedService): Promise<void> {
  const list = await service.request('GET', '/data/product');
  expect(list.status, list.text).toBe(200);
  for (const record of list.body.data as { code: string }[]) {
    const deleted = await service.request(
      'DELETE',
      `/data/product/${encodeURIComponent(record.code)}`,
    );
    expect(deleted.status, deleted.text).toBe(200);
  }
}

/**
 * `meta` says where the page is and whether another follows, and the cursor in `meta.next` gives
 * the records after the page, in the same order.
 */
async function checkPaging(
  service: BootedService,
  query: ListQuery,
  params: URLSearchParams,
  meta: Record<string, unknown>,
  all: readonly StoredRecord[],
): Promise<void> {
  const start = query.start ?? 0;
  if (query.limit === undefined) {
    expect(meta, String(params)).toEqual(query.start === undefined ? {} : { start });
    return;
  }
  const more = start + query.limit < all.length;
  expect(meta, String(params)).toEqual({
    start,
    limit: query.limit,
    ...(more ? { next: expect.any(String) } : {}),
  });
  if (!more) return;
  const next = new URLSearchParams();
  for (const filter of query.filters)
    next.append(`${filter.field.path}${filter.spelling}`, filter.value);
  if (query.orderBy.length > 0) next.set('orderBy', orderByParam(query.orderBy));
  next.set('cursor', String(meta['next']));
  const page = await service.request('GET', `/data/product?${next}`);
  expect(page.status, `${next}: ${page.text}`).toBe(200);
  const from = start + query.limit;
  expect(page.body.data, `cursor page of ${params}`).toEqual(all.slice(from, from + query.limit));
  expect(page.body.meta.limit).toBe(query.limit);
  expect(page.body.meta.next !== undefined, `cursor page of ${params}: meta.next`).toBe(
    from + query.limit < all.length,
  );
}
