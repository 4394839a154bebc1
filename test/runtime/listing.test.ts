/**
 * Unit tests of runtime/src/listing.ts: `parseListRequest(definition, config, querystring)` with
 * the REST config options (START_LIMIT defaultLimit, maxWindow, defaultOrder,
 * allowedOrderingFields, allowedMethods), how filter parameters group, and what `listRecords` /
 * `countRecords` hand to the driver and put in `meta`. End-to-end behaviour over HTTP is in
 * test/e2e/listing*.test.ts.
 */
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import type { EntityDefinition } from '../../runtime/src/definition.js';
import type {
  CountQuery,
  ListQuery,
  StorageDriver,
  StoredRecord,
  TableDescriptor,
} from '../../runtime/src/driver.js';
import { isHttpError } from '../../runtime/src/errors.js';
import {
  countRecords,
  DEFAULT_REST_CONFIG,
  listRecords,
  MAX_FILTER_VALUES,
  parseListRequest,
} from '../../runtime/src/listing.js';
import type { DataContext } from '../../runtime/src/data-context.js';
import type { RestConfig } from '../../runtime/src/service.js';

function table(entity: string, key: string[]): TableDescriptor {
  return {
    entity,
    table: entity.toLowerCase(),
    columns: [
      { name: 'code', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
      { name: 'name', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
      { name: 'price', kind: 'decimal', fieldType: 'DECIMAL', required: false, indexed: false },
      { name: 'stock', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
      { name: 'status', kind: 'text', fieldType: 'ENUM', required: false, indexed: false },
      { name: 'owner', kind: 'integer', fieldType: 'ENTITY_REF', required: false, indexed: false },
      { name: 'tags', kind: 'json', fieldType: 'ARRAY', required: false, indexed: false },
      { name: 'variants', kind: 'json', fieldType: 'ARRAY', required: false, indexed: false },
      { name: 'address', kind: 'json', fieldType: 'OBJECT', required: false, indexed: false },
    ],
    key,
  };
}

function definitionOf(entity: string): EntityDefinition<object> {
  return {
    name: entity,
    document: { type: 'ENTITY', entity: { name: entity, lk: ['code'], fields: [] } },
    table: table(entity, ['code']),
    keySeparator: '~',
    singleRecordId: undefined,
    fields: {
      code: { type: 'STRING' },
      name: { type: 'STRING' },
      price: { type: 'DECIMAL' },
      stock: { type: 'INTEGER' },
      status: { type: 'ENUM', values: ['DRAFT', 'ACTIVE'] },
      owner: { type: 'ENTITY_REF', integerRef: true },
      tags: { type: 'ARRAY', element: { type: 'STRING' } },
      variants: { type: 'ARRAY', element: { type: 'OBJECT', fields: { sku: { type: 'STRING' } } } },
      address: {
        type: 'OBJECT',
        fields: {
          city: { type: 'STRING' },
          zones: { type: 'ARRAY', element: { type: 'INTEGER' } },
        },
      },
    },
    read: () => undefined,
    keyOf: () => [],
    idOf: () => '',
    parseId: () => undefined,
  };
}

const PRODUCT = definitionOf('PRODUCT');
const ALL = DEFAULT_REST_CONFIG;

function config(extra: Partial<RestConfig>): RestConfig {
  return { ...DEFAULT_REST_CONFIG, ...extra };
}

/** The reason of the 400 that `run` throws. */
function badRequest(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isHttpError(error) && error.status === 400) return error.reason;
    throw error;
  }
  throw new Error('expected a 400');
}

describe('parseListRequest without REST config', () => {
  it('lists everything in key order when nothing is asked', () => {
    expect(parseListRequest(PRODUCT, ALL, '')).toMatchObject({
      filters: [],
      orderBy: [],
      start: 0,
      startGiven: false,
      limit: undefined,
      after: undefined,
    });
  });

  it('reads start, limit and orderBy', () => {
    expect(
      parseListRequest(PRODUCT, ALL, 'start=20&limit=10&orderBy=-price,%2Bname,stock'),
    ).toMatchObject({
      start: 20,
      startGiven: true,
      limit: 10,
      orderBy: [
        { column: 'price', descending: true },
        { column: 'name', descending: false },
        { column: 'stock', descending: false },
      ],
    });
  });

  it('caps limit at the maximum page size (1000 by default, lower by maxWindow)', () => {
    expect(parseListRequest(PRODUCT, ALL, 'limit=1000').limit).toBe(1000);
    expect(() => parseListRequest(PRODUCT, ALL, 'limit=999999999999999')).toThrow(
      'Parameter limit is 999999999999999, more than the maximum page size of 1000 for Entity PRODUCT; page with cursor (meta.next)',
    );
    expect(parseListRequest(PRODUCT, ALL, 'limit=20', 20).cap).toBe(20);
    expect(parseListRequest(PRODUCT, ALL, '').limit).toBeUndefined();
  });
});

describe('filter groups', () => {
  it('ORs a repeated parameter, also when spelled with [EQUALS] or another case', () => {
    const { filters } = parseListRequest(
      PRODUCT,
      ALL,
      'status=draft&status[equals]=Active&status[EQUALS]=ACTIVE',
    );
    expect(filters).toEqual([
      {
        anyOf: [
          { path: ['status'], operator: 'EQUALS', kind: 'text', value: 'DRAFT' },
          { path: ['status'], operator: 'EQUALS', kind: 'text', value: 'ACTIVE' },
          { path: ['status'], operator: 'EQUALS', kind: 'text', value: 'ACTIVE' },
        ],
      },
    ]);
  });

  it('ANDs different operators on one field (a range)', () => {
    const { filters } = parseListRequest(PRODUCT, ALL, 'price[GTE]=1.50&price[LT]=5');
    expect(filters).toEqual([
      { anyOf: [{ path: ['price'], operator: 'GTE', kind: 'decimal', value: '1.5' }] },
      { anyOf: [{ path: ['price'], operator: 'LT', kind: 'decimal', value: '5' }] },
    ]);
  });

  it('negates the OR of repeated NOT_EQUALS / NOT_CONTAINS values: none of them', () => {
    const { filters } = parseListRequest(
      PRODUCT,
      ALL,
      'name[NOT]=a&name[!]=b&name[not_equals]=c&tags[NOT_CONTAINS]=x&tags[not_contains]=y',
    );
    expect(filters).toEqual([
      { anyOf: [{ path: ['name'], operator: 'NOT_EQUALS', kind: 'text', value: 'a' }] },
      { anyOf: [{ path: ['name'], operator: 'NOT_EQUALS', kind: 'text', value: 'b' }] },
      { anyOf: [{ path: ['name'], operator: 'NOT_EQUALS', kind: 'text', value: 'c' }] },
      {
        anyOf: [
          {
            path: ['tags'],
            operator: 'NOT_CONTAINS',
            kind: 'text',
            value: 'x',
            arrayMembership: true,
          },
        ],
      },
      {
        anyOf: [
          {
            path: ['tags'],
            operator: 'NOT_CONTAINS',
            kind: 'text',
            value: 'y',
            arrayMembership: true,
          },
        ],
      },
    ]);
  });

  it('compares an INTEGER-keyed reference as an integer, with ordering operators only', () => {
    expect(parseListRequest(PRODUCT, ALL, 'owner[GT]=7').filters).toEqual([
      { anyOf: [{ path: ['owner'], operator: 'GT', kind: 'integer', value: 7 }] },
    ]);
    expect(badRequest(() => parseListRequest(PRODUCT, ALL, 'owner[CONTAINS]=7'))).toContain(
      'owner[CONTAINS]',
    );
    expect(badRequest(() => parseListRequest(PRODUCT, ALL, 'owner=x'))).toContain('ENTITY_REF');
  });

  it('tests membership in arrays, also inside objects, but not in arrays of objects', () => {
    expect(parseListRequest(PRODUCT, ALL, 'address.zones[CONTAINS]=%2B7').filters).toEqual([
      {
        anyOf: [
          {
            path: ['address', 'zones'],
            operator: 'CONTAINS',
            kind: 'integer',
            value: 7,
            arrayMembership: true,
          },
        ],
      },
    ]);
    expect(badRequest(() => parseListRequest(PRODUCT, ALL, 'variants[CONTAINS]=x'))).toContain(
      'variants[CONTAINS]',
    );
    expect(badRequest(() => parseListRequest(PRODUCT, ALL, 'variants.sku=x'))).toContain(
      'variants.sku',
    );
  });

  it('keeps text-match values as written', () => {
    expect(parseListRequest(PRODUCT, ALL, 'name[CONTAINS]=%25_%5C').filters).toEqual([
      { anyOf: [{ path: ['name'], operator: 'CONTAINS', kind: 'text', value: '%_\\' }] },
    ]);
  });

  it(`accepts ${MAX_FILTER_VALUES} filter values and refuses one more`, () => {
    const values = (n: number): string =>
      Array.from({ length: n }, (_, i) => `stock=${i}`).join('&');
    expect(
      parseListRequest(PRODUCT, ALL, values(MAX_FILTER_VALUES)).filters[0]!.anyOf,
    ).toHaveLength(MAX_FILTER_VALUES);
    expect(
      badRequest(() => parseListRequest(PRODUCT, ALL, values(MAX_FILTER_VALUES + 1))),
    ).toContain('filter');
    // Reserved parameters do not count.
    expect(() =>
      parseListRequest(PRODUCT, ALL, `${values(MAX_FILTER_VALUES)}&limit=1&orderBy=name`),
    ).not.toThrow();
  });

  it('signs the query independently of parameter order and value spelling', () => {
    const a = parseListRequest(
      PRODUCT,
      ALL,
      'status=draft&status=ACTIVE&price[GT]=1.0&orderBy=-name',
    );
    const b = parseListRequest(
      PRODUCT,
      ALL,
      'orderBy=-name&price[gt]=1&status[EQUALS]=active&status=Draft&limit=3',
    );
    expect(b.signature).toBe(a.signature);
    expect(
      parseListRequest(PRODUCT, ALL, 'status=draft&price[GT]=1.0&orderBy=-name').signature,
    ).not.toBe(a.signature);
    expect(
      parseListRequest(PRODUCT, ALL, 'status=draft&status=ACTIVE&price[GT]=1.0&orderBy=name')
        .signature,
    ).not.toBe(a.signature);
    const other = definitionOf('OTHER');
    expect(parseListRequest(other, ALL, '').signature).not.toBe(
      parseListRequest(PRODUCT, ALL, '').signature,
    );
  });
});

describe('REST config', () => {
  it('START_LIMIT applies defaultLimit when the request has no limit', () => {
    const startLimit = config({ getListStrategy: 'START_LIMIT', defaultLimit: 25 });
    expect(parseListRequest(PRODUCT, startLimit, '').limit).toBe(25);
    expect(parseListRequest(PRODUCT, startLimit, 'limit=5').limit).toBe(5);
    expect(parseListRequest(PRODUCT, startLimit, 'start=50')).toMatchObject({
      start: 50,
      limit: 25,
    });
    expect(parseListRequest(PRODUCT, config({ defaultLimit: 25 }), '').limit).toBeUndefined();
  });

  it('maxWindow bounds start + limit and requires a limit', () => {
    const window = config({ maxWindow: 100 });
    expect(parseListRequest(PRODUCT, window, 'start=90&limit=10')).toMatchObject({
      start: 90,
      limit: 10,
    });
    const over = badRequest(() => parseListRequest(PRODUCT, window, 'start=91&limit=10'));
    expect(over).toContain('start + limit');
    expect(over).toContain('100');
    expect(over).toContain('cursor');
    expect(badRequest(() => parseListRequest(PRODUCT, window, 'limit=101'))).toContain('100');
    expect(badRequest(() => parseListRequest(PRODUCT, window, ''))).toContain('limit');
    const paged = config({ maxWindow: 100, getListStrategy: 'START_LIMIT', defaultLimit: 20 });
    expect(parseListRequest(PRODUCT, paged, 'start=80').limit).toBe(20);
    expect(badRequest(() => parseListRequest(PRODUCT, paged, 'start=81'))).toContain(
      'start + limit',
    );
  });

  it('defaultOrder applies when the request has no orderBy', () => {
    const ordered = config({ defaultOrder: ['-price', 'name'] });
    expect(parseListRequest(PRODUCT, ordered, '').orderBy).toEqual([
      { column: 'price', descending: true },
      { column: 'name', descending: false },
    ]);
    expect(parseListRequest(PRODUCT, ordered, 'orderBy=stock').orderBy).toEqual([
      { column: 'stock', descending: false },
    ]);
    expect(badRequest(() => parseListRequest(PRODUCT, ordered, 'orderBy='))).toContain('orderBy');
  });

  it('allowedOrderingFields restricts orderBy, not defaultOrder', () => {
    const restricted = config({
      allowedOrderingFields: ['name', 'price'],
      defaultOrder: ['stock'],
    });
    expect(parseListRequest(PRODUCT, restricted, 'orderBy=-price,name').orderBy).toHaveLength(2);
    const reason = badRequest(() => parseListRequest(PRODUCT, restricted, 'orderBy=name,stock'));
    expect(reason).toContain('orderBy');
    expect(reason).toContain('stock');
    expect(reason).toContain('name, price');
    expect(parseListRequest(PRODUCT, restricted, '').orderBy).toEqual([
      { column: 'stock', descending: false },
    ]);
  });
});

/** A driver that records the queries it gets and answers `rows`. */
function fakeDriver(rows: StoredRecord[]): {
  driver: StorageDriver;
  queries: (ListQuery | CountQuery)[];
} {
  const queries: (ListQuery | CountQuery)[] = [];
  const unused = (): never => {
    throw new Error('not used');
  };
  const driver: StorageDriver = {
    dialect: 'fake',
    open: unused,
    get: unused,
    insert: unused,
    update: unused,
    delete: unused,
    list: async (_table, query) => {
      queries.push(query);
      return query.limit === undefined ? rows : rows.slice(0, query.limit);
    },
    count: async (_table, query) => {
      queries.push(query);
      return rows.length;
    },
    activity: unused,
    ping: unused,
    close: unused,
  };
  return { driver, queries };
}

function stored(code: string, price?: string): StoredRecord {
  const record: Record<string, unknown> = { code, name: code.toUpperCase() };
  if (price !== undefined) record['price'] = price;
  return { record, version: 1, createdAt: 0, updatedAt: 0 };
}

/** Runs `handler` on a minimal Koa context and returns the response body. */
async function run(
  handler: typeof listRecords,
  querystring: string,
  rows: StoredRecord[],
  restConfig: RestConfig = ALL,
  // biome-ignore lint/suspicious/noExplicitAny: the response body is whatever the handler set; tests narrow it with expect()
): Promise<{ body: any; queries: (ListQuery | CountQuery)[] }> {
  const { driver, queries } = fakeDriver(rows);
  const ctx = { querystring, body: undefined } as unknown as Context;
  const data: DataContext = { driver, bodyLimit: 1024, now: () => 0 };
  await handler(ctx, data, PRODUCT, restConfig);
  return { body: ctx.body, queries };
}

describe('listRecords', () => {
  const rows = ['a', 'b', 'c', 'd', 'e'].map((code, i) =>
    stored(code, i === 2 ? undefined : `${i}.5`),
  );

  it('asks one row more than the limit to know whether a next page exists', async () => {
    const { body, queries } = await run(listRecords, 'limit=2&start=1&orderBy=-price', rows);
    expect(queries).toEqual([
      { filters: [], orderBy: [{ column: 'price', descending: true }], limit: 3, offset: 1 },
    ]);
    expect(body.data.map((r: { code: string }) => r.code)).toEqual(['a', 'b']);
    expect(body.meta).toEqual({ start: 1, limit: 2, next: expect.any(String) });
  });

  it('passes the sort values of the last record through the cursor', async () => {
    const first = await run(listRecords, 'limit=2&orderBy=-price', rows);
    const cursor = encodeURIComponent(first.body.meta.next);
    const second = await run(listRecords, `orderBy=-price&cursor=${cursor}`, rows);
    expect(second.queries[0]).toEqual({
      filters: [],
      orderBy: [{ column: 'price', descending: true }],
      limit: 3,
      after: ['1.5', 'b'],
    });
    expect(second.body.meta).toEqual({ limit: 2, next: expect.any(String) });
  });

  it('puts null in the cursor for an absent sort value', async () => {
    const first = await run(listRecords, 'limit=3&orderBy=price', rows);
    const second = await run(
      listRecords,
      `orderBy=price&cursor=${encodeURIComponent(first.body.meta.next)}`,
      rows,
    );
    expect((second.queries[0] as ListQuery).after).toEqual([null, 'c']);
  });

  it('has no next when the page holds the last record', async () => {
    const { body } = await run(listRecords, 'limit=5', rows);
    expect(body.meta).toEqual({ start: 0, limit: 5 });
    expect(body.data).toHaveLength(5);
  });

  it('asks for one page of the maximum size, and answers meta {} when it is not full', async () => {
    const { body, queries } = await run(listRecords, '', rows);
    expect(queries).toEqual([{ filters: [], orderBy: [], offset: 0, limit: 1001 }]);
    expect(body).toEqual({ status: 'success', data: rows.map((r) => r.record), meta: {} });
  });

  it('is forbidden (403) when GET_LIST is switched off, for the list and the count', async () => {
    const off = config({ allowedMethods: ['GET_BYID', 'NEW', 'UPDATE', 'DELETE'] });
    for (const handler of [listRecords, countRecords]) {
      await expect(run(handler, '', rows, off)).rejects.toMatchObject({
        status: 403,
        reason: 'Method GET_LIST not allowed for Entity PRODUCT',
      });
    }
  });
});

describe('countRecords', () => {
  it('counts with the filters only', async () => {
    const { body, queries } = await run(countRecords, 'stock[GT]=1&orderBy=name&limit=1&start=3', [
      stored('a'),
    ]);
    expect(body).toEqual({ status: 'success', data: { count: 1 } });
    expect(queries).toEqual([
      {
        filters: [{ anyOf: [{ path: ['stock'], operator: 'GT', kind: 'integer', value: 1 }] }],
      },
    ]);
  });

  it('does not apply the paging rules of the REST config', async () => {
    const { body } = await run(
      countRecords,
      'start=5000',
      [stored('a')],
      config({ maxWindow: 100 }),
    );
    expect(body.data).toEqual({ count: 1 });
  });

  it('answers the same 400s as the list', async () => {
    await expect(run(countRecords, 'limit=0', [])).rejects.toMatchObject({ status: 400 });
    await expect(run(countRecords, 'orderBy=nope', [])).rejects.toMatchObject({ status: 400 });
    await expect(run(countRecords, 'nope=1', [])).rejects.toMatchObject({ status: 400 });
  });
});
