/**
 * The end-to-end CRUD cases of the HTTP interface (SPEC §4) on the `shop` fixture, defined once
 * and run against every storage driver: `crud.test.ts` (SQLite) and `crud.postgres.test.ts`.
 */
import type { StorageDriver } from '@entity-gen/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonResponse } from '../../helpers/http.js';
import { bootFixture, type BootedService } from '../../helpers/service.js';

/** The CATEGORY `productInput` names: the shop's PRODUCT.category has `onDelete: RESTRICT`, so a
 * product may only name an existing category, and a suite creates it before its first product. */
export const PRODUCT_CATEGORY = 'tools';

/** Creates the category `productInput` names, through the service's own API. */
export async function createProductCategory(service: {
  request(method: string, path: string, options: { body: unknown }): Promise<JsonResponse>;
}): Promise<void> {
  const created = await service.request('POST', '/data/category', {
    body: { data: { name: PRODUCT_CATEGORY } },
  });
  expect(created.status, created.text).toBe(200);
}

/** A valid PRODUCT using every field type, as a client might send it (values not canonical). */
export function productInput(code: string): Record<string, unknown> {
  return {
    code,
    name: `Product ${code}`,
    category: PRODUCT_CATEGORY,
    price: 19.99,
    stock: '42',
    weightKg: '1.5',
    available: 'true',
    releaseDate: '2024-02-29',
    lastRestock: '2024-03-01T01:30:00+02:00',
    status: 'active',
    size: 'M',
    dimensions: { width: 10, height: '2.5', unit: 'CM' },
    tags: ['new', 'sale'],
    ratings: [5, '4'],
    variants: [{ sku: `${code}-red`, color: 'red', extraPrice: '1.50' }],
    sizeChart: [[1, 2], ['3.5']],
    prices: { EUR: { amount: '19.990', validFrom: '2024-01-01' } },
    image: 'data:image/png;base64,iVBORw0KGgo=',
    attributes: { anything: [1, 'two', null] },
    warehouse: { lat: 43.7167, lng: 10.4 },
  };
}

/** The canonical form the service must store and return for `productInput(code)`. */
function productOutput(code: string): Record<string, unknown> {
  return {
    code,
    name: `Product ${code}`,
    category: PRODUCT_CATEGORY,
    price: '19.99',
    stock: 42,
    weightKg: 1.5,
    available: true,
    releaseDate: '2024-02-29',
    lastRestock: '2024-02-29T23:30:00.000Z',
    status: 'ACTIVE',
    size: 'M',
    dimensions: { width: 10, height: 2.5, unit: 'cm' },
    tags: ['new', 'sale'],
    ratings: [5, 4],
    variants: [{ sku: `${code}-red`, color: 'red', extraPrice: '1.5' }],
    sizeChart: [[1, 2], [3.5]],
    prices: { EUR: { amount: '19.99', validFrom: '2024-01-01' } },
    image: 'data:image/png;base64,iVBORw0KGgo=',
    attributes: { anything: [1, 'two', null] },
    warehouse: { lat: 43.7167, lng: 10.4, geohash: expect.stringMatching(/^spz2[0-9a-z]{8}$/) },
  };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectRecordMeta(meta: { lastUpdateTimeUnix: number; lastUpdateTimeISO: string }): void {
  expect(Number.isInteger(meta.lastUpdateTimeUnix)).toBe(true);
  expect(meta.lastUpdateTimeUnix).toBeGreaterThan(1_600_000_000_000);
  expect(meta.lastUpdateTimeISO).toMatch(ISO_MS);
  expect(new Date(meta.lastUpdateTimeISO).getTime()).toBe(meta.lastUpdateTimeUnix);
}

/** Makes the driver a suite's service runs on; `undefined` means SQLite in memory. */
export type MakeDriver = () => StorageDriver | undefined | Promise<StorageDriver | undefined>;

/** What differs legitimately between storages. */
export interface CrudSuiteOptions {
  /**
   * Whether object keys inside JSON fields (OBJECT, DICTIONARY, ANY, …) come back in the order they
   * were written. SQLite stores the JSON text as written; PostgreSQL's JSONB does not keep key
   * order (it stores keys sorted by length, then bytewise). Default true.
   */
  readonly keepsJsonKeyOrder?: boolean;
}

/**
 * Registers the CRUD cases under `describe(label)`. The service is generated into
 * `test/output/e2e-shop-<label>` and booted on `makeDriver()`'s driver (opened and closed by the
 * suite).
 */
export function describeCrudSuite(
  label: string,
  makeDriver: MakeDriver,
  options: CrudSuiteOptions = {},
): void {
  const keepsJsonKeyOrder = options.keepsJsonKeyOrder ?? true;
  describe(label, () => {
    let service: BootedService;

    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-shop-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
      await createProductCategory(service);
    });
    afterAll(async () => {
      // (undefined when beforeAll failed; its error is the one to report)
      await service?.close();
    });

    async function count(entity: string): Promise<number> {
      const response = await service.request('GET', `/entity/${entity}/recordCounts`);
      expect(response.status).toBe(200);
      return response.body.data.count as number;
    }

    describe('POST /data/{entity} with one record', () => {
      it('stores every field type in canonical form and returns it with meta and ETag', async () => {
        const response = await service.request('POST', '/data/product', {
          body: { data: productInput('p1') },
        });
        expect(response.status).toBe(200);
        expect(response.body.status).toBe('success');
        expect(response.body.data).toEqual(productOutput('p1'));
        expect(Object.keys(response.body.data)).toEqual(Object.keys(productOutput('p1')));
        expectRecordMeta(response.body.meta);
        expect(response.headers.get('etag')).toBe('"1"');
      });

      it('reads the record back by id with the write time as meta', async () => {
        const inserted = await service.request('POST', '/data/product', {
          body: { data: productInput('p2') },
        });
        const response = await service.request('GET', '/data/product/p2');
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          status: 'success',
          data: productOutput('p2'),
          meta: inserted.body.meta,
        });
      });

      it('matches the entity name case-insensitively and accepts a trailing slash', async () => {
        await service.request('POST', '/data/Product/', { body: { data: productInput('p3') } });
        expect((await service.request('GET', '/data/PRODUCT/p3')).status).toBe(200);
        expect((await service.request('GET', '/data/pRoDuCt/p3/')).status).toBe(200);
      });

      it('rejects an existing key with the seed reason', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('dup') } });
        const response = await service.request('POST', '/data/product', {
          body: { data: productInput('dup') },
        });
        expect(response.status).toBe(400);
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'Logical key dup for Entity PRODUCT already exists' },
        });
      });

      it('reads back the content of free-form JSON fields; key order as the storage keeps it', async () => {
        const attributes = { zeta: 1, alpha: { longer: true, b: [1, { yy: 1, x: 2 }] } };
        const inserted = await service.request('POST', '/data/product', {
          body: { data: { code: 'json-order', name: 'n', price: 1, attributes } },
        });
        expect(inserted.status).toBe(200);
        const read = await service.request('GET', '/data/product/json-order');
        expect(read.status).toBe(200);
        // toEqual ignores key order, so this holds on every storage.
        expect(read.body.data.attributes).toEqual(attributes);
        if (keepsJsonKeyOrder) {
          expect(JSON.stringify(read.body.data.attributes)).toBe(JSON.stringify(attributes));
        } else {
          // JSONB (PostgreSQL) re-orders object keys: shorter keys first, then bytewise.
          expect(JSON.stringify(read.body.data.attributes)).toBe(
            JSON.stringify({ zeta: 1, alpha: { b: [1, { x: 2, yy: 1 }], longer: true } }),
          );
        }
        // Top-level fields are columns: their order is the schema's on every storage.
        expect(Object.keys(read.body.data)).toEqual(['code', 'name', 'price', 'attributes']);
      });

      it('leaves out optional fields that are absent or null', async () => {
        const response = await service.request('POST', '/data/product', {
          body: { data: { code: 'min', name: 'Minimal', price: '1', stock: null } },
        });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({ code: 'min', name: 'Minimal', price: '1' });
        expect((await service.request('GET', '/data/product/min')).body.data).toEqual({
          code: 'min',
          name: 'Minimal',
          price: '1',
        });
      });

      it('keeps ids with slashes, spaces and unicode when percent-encoded', async () => {
        const code = 'a/b c~ü';
        expect(
          (
            await service.request('POST', '/data/product', {
              body: { data: { code, name: 'n', price: 1 } },
            })
          ).status,
        ).toBe(200);
        const response = await service.request('GET', `/data/product/${encodeURIComponent(code)}`);
        expect(response.status).toBe(200);
        expect(response.body.data.code).toBe(code);
      });
    });

    describe('conversion and validation errors', () => {
      const invalid: [string, Record<string, unknown>, string, (string | number)[]][] = [
        [
          'STRING given a number',
          { name: 5 },
          'Unable to convert field name - STRING - for value 5',
          ['name'],
        ],
        [
          'INTEGER given a fraction',
          { stock: 42.9 },
          'Unable to convert field stock - INTEGER - for value 42.9',
          ['stock'],
        ],
        [
          'INTEGER given an object',
          { stock: { n: 1 } },
          'Unable to convert field stock - INTEGER - for value {"n":1}',
          ['stock'],
        ],
        [
          'DOUBLE given text',
          { weightKg: 'heavy' },
          'Unable to convert field weightKg - DOUBLE - for value "heavy"',
          ['weightKg'],
        ],
        [
          'DECIMAL given text',
          { price: 'abc' },
          'Unable to convert field price - DECIMAL - for value "abc"',
          ['price'],
        ],
        [
          'BOOL given "yes"',
          { available: 'yes' },
          'Unable to convert field available - BOOL - for value "yes"',
          ['available'],
        ],
        [
          'DATE not in the calendar',
          { releaseDate: '2023-02-29' },
          'Unable to convert field releaseDate - DATE - for value "2023-02-29"',
          ['releaseDate'],
        ],
        [
          'DATE_TIME malformed',
          { lastRestock: 'yesterday' },
          'Unable to convert field lastRestock - DATE_TIME - for value "yesterday"',
          ['lastRestock'],
        ],
        [
          'ENUM not listed',
          { status: 'GONE' },
          'Unable to convert field status - ENUM - for value "GONE"',
          ['status'],
        ],
        [
          'SELECT not listed (case-sensitive)',
          { size: 'm' },
          'Unable to convert field size - SELECT - for value "m"',
          ['size'],
        ],
        [
          'OBJECT given a list',
          { dimensions: [1] },
          'Unable to convert field dimensions - OBJECT - for value [1]',
          ['dimensions'],
        ],
        [
          'OBJECT inner field',
          { dimensions: { width: 'x', height: 1 } },
          'Unable to convert field dimensions.width - DOUBLE - for value "x"',
          ['dimensions', 'width'],
        ],
        [
          'ARRAY element',
          { ratings: [1, 'two'] },
          'Unable to convert field ratings[1] - INTEGER - for value "two"',
          ['ratings', 1],
        ],
        [
          'ARRAY of ARRAY element',
          { sizeChart: [[1], [2, 'x']] },
          'Unable to convert field sizeChart[1][1] - DOUBLE - for value "x"',
          ['sizeChart', 1, 1],
        ],
        [
          'DICTIONARY value',
          { prices: { EUR: { amount: 'free' } } },
          'Unable to convert field prices.EUR.amount - DECIMAL - for value "free"',
          ['prices', 'EUR', 'amount'],
        ],
        [
          'B64_IMAGE not an image',
          { image: 'data:text/plain;base64,aGk=' },
          'Unable to convert field image - B64_IMAGE - for value "data:text/plain;base64,aGk="',
          ['image'],
        ],
        [
          'GEOHASH_LOCATION out of range',
          { warehouse: { lat: 91, lng: 0 } },
          'Unable to convert field warehouse - GEOHASH_LOCATION - for value {"lat":91,"lng":0}',
          ['warehouse'],
        ],
        [
          'GEOHASH_LOCATION with a geohash of another place',
          { warehouse: { lat: 43.7, lng: 10.4, geohash: 'u4pruyd' } },
          'Unable to convert field warehouse - GEOHASH_LOCATION - for value {"lat":43.7,"lng":10.4,"geohash":"u4pruyd"}',
          ['warehouse'],
        ],
        [
          'ENTITY_REF not an id',
          { category: 7 },
          'Unable to convert field category - ENTITY_REF - for value 7',
          ['category'],
        ],
      ];

      it.each(invalid)(
        '%s → 400 naming field, type and value',
        async (_name, change, reason, path) => {
          const response = await service.request('POST', '/data/product', {
            body: { data: { ...productInput('bad'), ...change } },
          });
          expect(response.status).toBe(400);
          expect(response.body.status).toBe('error');
          expect(response.body.error.reason).toBe(reason);
          expect(response.body.error.issues).toContainEqual({
            path,
            code: 'conversion_failed',
            message: reason,
          });
          expect((await service.request('GET', '/data/product/bad')).status).toBe(404);
        },
      );

      it.each([
        ['absent', undefined],
        ['null', null],
        ['empty', ''],
      ])('a required field that is %s fails validation with issues', async (_name, value) => {
        const data = { ...productInput('req'), name: value };
        const response = await service.request('POST', '/data/product', { body: { data } });
        expect(response.status).toBe(400);
        expect(response.body.error).toEqual({
          reason: 'EntityRecord of PRODUCT with id req invalid',
          issues: [{ path: ['name'], code: 'required', message: 'Field name is required' }],
        });
      });

      it('requires inner required fields of objects and array elements', async () => {
        const data = {
          ...productInput('inner'),
          dimensions: { width: 1 },
          variants: [{ color: 'red' }],
        };
        const response = await service.request('POST', '/data/product', { body: { data } });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual([
          {
            path: ['dimensions', 'height'],
            code: 'required',
            message: 'Field dimensions.height is required',
          },
          {
            path: ['variants', 0, 'sku'],
            code: 'required',
            message: 'Field variants[0].sku is required',
          },
        ]);
      });

      it('rejects fields the entity does not have, naming them', async () => {
        const response = await service.request('POST', '/data/product', {
          body: { data: { ...productInput('unk'), colour: 'red' } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe('Field colour is not defined for Entity PRODUCT');
        expect(response.body.error.issues).toEqual([
          { path: ['colour'], code: 'unknown_field', message: 'Unknown field colour' },
        ]);
      });

      it('rejects prototype-polluting keys without touching any prototype', async () => {
        const raw = `{"data":{"code":"proto","name":"n","price":1,"__proto__":{"polluted":true},"dimensions":{"width":1,"height":1,"constructor":{"prototype":{"polluted":true}}}}}`;
        const response = await service.request('POST', '/data/product', {
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ path: ['__proto__'], code: 'unknown_field' }),
            expect.objectContaining({ path: ['dimensions', 'constructor'], code: 'unknown_field' }),
          ]),
        );
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      });
    });

    describe('POST /data/{entity} with a list', () => {
      it('inserts every record in request order with one meta time', async () => {
        const data = ['l1', 'l2', 'l3'].map(productInput);
        const response = await service.request('POST', '/data/product', { body: { data } });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual(['l1', 'l2', 'l3'].map(productOutput));
        expectRecordMeta(response.body.meta);
      });

      it('inserts nothing when one record is invalid, naming it by index', async () => {
        const before = await count('product');
        const data = [
          productInput('m1'),
          { ...productInput('m2'), price: 'x' },
          productInput('m3'),
        ];
        const response = await service.request('POST', '/data/product', { body: { data } });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe('EntityRecords are invalid');
        expect(response.body.error.issues).toEqual([
          {
            path: [1, 'price'],
            code: 'conversion_failed',
            message: 'Unable to convert field price - DECIMAL - for value "x"',
          },
        ]);
        expect(await count('product')).toBe(before);
      });

      it('inserts nothing when a key already exists in storage', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('taken') } });
        const before = await count('product');
        const response = await service.request('POST', '/data/product', {
          body: { data: [productInput('n1'), productInput('taken'), productInput('n2')] },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(
          'Logical key taken for Entity PRODUCT already exists',
        );
        expect(response.body.error.issues).toEqual([
          {
            path: [1],
            code: 'duplicate_key',
            message: 'Logical key taken for Entity PRODUCT already exists',
          },
        ]);
        expect(await count('product')).toBe(before);
        expect((await service.request('GET', '/data/product/n1')).status).toBe(404);
      });

      it('inserts nothing when the list holds the same key twice', async () => {
        const before = await count('product');
        const response = await service.request('POST', '/data/product', {
          body: { data: [productInput('t1'), productInput('t2'), productInput('t1')] },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual([
          expect.objectContaining({ path: [2], code: 'duplicate_key' }),
        ]);
        expect(await count('product')).toBe(before);
      });

      it('accepts an empty list and inserts nothing', async () => {
        const before = await count('product');
        const response = await service.request('POST', '/data/product', { body: { data: [] } });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual([]);
        expect(await count('product')).toBe(before);
      });

      it('lets exactly one of 20 concurrent inserts of one key succeed', async () => {
        const responses = await Promise.all(
          Array.from({ length: 20 }, () =>
            service.request('POST', '/data/product', { body: { data: productInput('race') } }),
          ),
        );
        const statuses = responses.map((response) => response.status).sort();
        expect(statuses.filter((status) => status === 200)).toHaveLength(1);
        expect(statuses.filter((status) => status === 400)).toHaveLength(19);
        for (const response of responses.filter((r) => r.status === 400)) {
          expect(response.body.error.reason).toBe(
            'Logical key race for Entity PRODUCT already exists',
          );
        }
      });
    });

    describe('PUT /data/{entity}/{id}', () => {
      it('replaces the whole record: fields left out are removed', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('r1') } });
        const response = await service.request('PUT', '/data/product/r1', {
          body: { data: { code: 'r1', name: 'Replaced', price: '2.50' } },
        });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({ code: 'r1', name: 'Replaced', price: '2.5' });
        expectRecordMeta(response.body.meta);
        expect(response.headers.get('etag')).toBe('"2"');
        expect((await service.request('GET', '/data/product/r1')).body.data).toEqual({
          code: 'r1',
          name: 'Replaced',
          price: '2.5',
        });
      });

      it('creates the record when absent and the body key is the id', async () => {
        const response = await service.request('PUT', '/data/product/r2', {
          body: { data: { code: 'r2', name: 'New', price: 3 } },
        });
        expect(response.status).toBe(200);
        expect((await service.request('GET', '/data/product/r2')).body.data).toEqual({
          code: 'r2',
          name: 'New',
          price: '3',
        });
      });

      it('answers 404 when absent and the body key differs from the id', async () => {
        const response = await service.request('PUT', '/data/product/ghost', {
          body: { data: { code: 'other', name: 'x', price: 1 } },
        });
        expect(response.status).toBe(404);
        expect(response.body.error.reason).toBe('EntityRecord with id ghost not found for PRODUCT');
      });

      it('renames when the body key differs, freeing the old id', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('old') } });
        const response = await service.request('PUT', '/data/product/old', {
          body: { data: { ...productInput('new'), name: 'Renamed' } },
        });
        expect(response.status).toBe(200);
        expect(response.body.data.code).toBe('new');
        expect((await service.request('GET', '/data/product/old')).status).toBe(404);
        expect((await service.request('GET', '/data/product/new')).body.data.name).toBe('Renamed');
      });

      it('refuses to rename onto an existing key', async () => {
        await service.request('POST', '/data/product', {
          body: { data: [productInput('ra'), productInput('rb')] },
        });
        const response = await service.request('PUT', '/data/product/ra', {
          body: { data: productInput('rb') },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe('Logical key rb for Entity PRODUCT already exists');
        expect((await service.request('GET', '/data/product/ra')).status).toBe(200);
      });

      it('validates the body like an insert', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('rv') } });
        const response = await service.request('PUT', '/data/product/rv', {
          body: { data: { code: 'rv', price: 1 } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe('EntityRecord of PRODUCT with id rv invalid');
      });
    });

    describe('PATCH /data/{entity}/{id}', () => {
      it('changes only the given fields; null removes an optional field', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('pa') } });
        const response = await service.request('PATCH', '/data/product/pa', {
          body: { data: { stock: '7', tags: null } },
        });
        expect(response.status).toBe(200);
        const expected: Record<string, unknown> = { ...productOutput('pa'), stock: 7 };
        delete expected['tags'];
        expect(response.body.data).toEqual(expected);
        expect((await service.request('GET', '/data/product/pa')).body.data).toEqual(expected);
      });

      it('50 concurrent PATCHes without If-Match all succeed, none lost (no 409)', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('pc') } });
        const responses = await Promise.all(
          Array.from({ length: 50 }, (_, n) =>
            service.request('PATCH', '/data/product/pc', {
              body: { data: n % 2 === 0 ? { stock: n } : { ratings: [n] } },
            }),
          ),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200));
        const final = await service.request('GET', '/data/product/pc');
        // Every PATCH was applied on top of the previous one: 50 versions after the insert.
        expect(final.headers.get('etag')).toBe('"51"');
        expect(final.body.data.stock % 2).toBe(0);
        expect(final.body.data.ratings[0] % 2).toBe(1);
      });

      it('validates the merged record: removing a required field is a 400', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('pb') } });
        const response = await service.request('PATCH', '/data/product/pb', {
          body: { data: { name: null } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe('EntityRecord of PRODUCT with id pb invalid');
        expect((await service.request('GET', '/data/product/pb')).body.data.name).toBe(
          'Product pb',
        );
      });

      it('rejects unknown fields and bad values', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('pc') } });
        expect(
          (
            await service.request('PATCH', '/data/product/pc', {
              body: { data: { colour: 'red' } },
            })
          ).status,
        ).toBe(400);
        const bad = await service.request('PATCH', '/data/product/pc', {
          body: { data: { stock: 'many' } },
        });
        expect(bad.body.error.reason).toBe(
          'Unable to convert field stock - INTEGER - for value "many"',
        );
      });

      it('renames when the patch changes the key', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('pd') } });
        const response = await service.request('PATCH', '/data/product/pd', {
          body: { data: { code: 'pe' } },
        });
        expect(response.status).toBe(200);
        expect((await service.request('GET', '/data/product/pd')).status).toBe(404);
        expect((await service.request('GET', '/data/product/pe')).body.data).toEqual({
          ...productOutput('pd'),
          code: 'pe',
        });
      });

      it('answers 404 for a record that does not exist', async () => {
        const response = await service.request('PATCH', '/data/product/none', {
          body: { data: { stock: 1 } },
        });
        expect(response.status).toBe(404);
        expect(response.body.error.reason).toBe('EntityRecord with id none not found for PRODUCT');
      });
    });

    describe('DELETE /data/{entity}/{id}', () => {
      it('returns the deleted record with the deletion time, then it is gone', async () => {
        const inserted = await service.request('POST', '/data/product', {
          body: { data: productInput('d1') },
        });
        const response = await service.request('DELETE', '/data/product/d1');
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual(productOutput('d1'));
        expectRecordMeta(response.body.meta);
        expect(response.body.meta.lastUpdateTimeUnix).toBeGreaterThanOrEqual(
          inserted.body.meta.lastUpdateTimeUnix,
        );
        expect((await service.request('GET', '/data/product/d1')).status).toBe(404);
        expect((await service.request('DELETE', '/data/product/d1')).status).toBe(404);
      });
    });

    describe('PRODUCT.category names an existing CATEGORY (onDelete: RESTRICT)', () => {
      it('refuses a product whose category does not exist, and stores nothing', async () => {
        const response = await service.request('POST', '/data/product', {
          body: { data: { ...productInput('orphan'), category: 'no-such-category' } },
        });
        expect(response.status, response.text).toBe(400);
        expect(response.body.error.reason).toBe(
          'Field category references CATEGORY record "no-such-category", which does not exist',
        );
        expect(response.body.error.issues[0].path).toEqual(['category']);
        expect((await service.request('GET', '/data/product/orphan')).status).toBe(404);
      });

      it('refuses to delete a category while a product is in it (409), then deletes it', async () => {
        await service.request('POST', '/data/category', { body: { data: { name: 'garden' } } });
        const inserted = await service.request('POST', '/data/product', {
          body: { data: { ...productInput('rake'), category: 'garden' } },
        });
        expect(inserted.status, inserted.text).toBe(200);
        const refused = await service.request('DELETE', '/data/category/garden');
        expect(refused.status, refused.text).toBe(409);
        expect(refused.body.error.reason).toBe(
          'CATEGORY record "garden" is referenced by 1 PRODUCT record (field category)',
        );
        expect((await service.request('GET', '/data/category/garden')).status).toBe(200);
        expect((await service.request('DELETE', '/data/product/rake')).status).toBe(200);
        expect((await service.request('DELETE', '/data/category/garden')).status).toBe(200);
      });
    });

    describe('conditional requests', () => {
      it('answers 304 to If-None-Match with the current ETag', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('e1') } });
        const first = await service.request('GET', '/data/product/e1');
        const etag = first.headers.get('etag') ?? '';
        expect(etag).toBe('"1"');
        const again = await service.request('GET', '/data/product/e1', {
          headers: { 'if-none-match': etag },
        });
        expect(again.status).toBe(304);
        expect(again.text).toBe('');
      });

      it('answers 412 to PUT, PATCH and DELETE whose If-Match is stale, and applies a matching one', async () => {
        await service.request('POST', '/data/product', { body: { data: productInput('e2') } });
        const stale = { 'if-match': '"9"' };
        expect(
          (
            await service.request('PUT', '/data/product/e2', {
              body: { data: productInput('e2') },
              headers: stale,
            })
          ).status,
        ).toBe(412);
        expect(
          (
            await service.request('PATCH', '/data/product/e2', {
              body: { data: { stock: 1 } },
              headers: stale,
            })
          ).status,
        ).toBe(412);
        const deleted = await service.request('DELETE', '/data/product/e2', { headers: stale });
        expect(deleted.status).toBe(412);
        expect(deleted.body.status).toBe('error');
        const ok = await service.request('PATCH', '/data/product/e2', {
          body: { data: { stock: 1 } },
          headers: { 'if-match': '"1"' },
        });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('etag')).toBe('"2"');
      });
    });

    describe('keys and indexed values hold at most 1 024 bytes, on every driver alike', () => {
      it('refuses a longer key or indexed value with a 400 naming the limit', async () => {
        const long = 'é'.repeat(600); // 1 200 bytes in UTF-8
        const key = await service.request('POST', '/data/category', {
          body: { data: { name: long } },
        });
        expect(key.status, key.text).toBe(400);
        expect(key.body.error.reason).toBe(
          'Field name of Entity CATEGORY is 1200 bytes long; a key or indexed field holds at most 1024 bytes',
        );
        const list = await service.request('POST', '/data/category', {
          body: { data: [{ name: 'fine' }, { name: long }] },
        });
        expect(list.status).toBe(400);
        expect(list.body.error.issues[0].path).toEqual([1, 'name']);
        expect((await service.request('GET', '/data/category/fine')).status).toBe(404);
        const fits = await service.request('POST', '/data/category', {
          body: { data: { name: 'é'.repeat(512) } },
        });
        expect(fits.status, fits.text).toBe(200);
      });
    });

    describe('single-record entities', () => {
      it('lists zero records, then creates the one record with PUT', async () => {
        expect((await service.request('GET', '/data/shop_settings')).body.data).toEqual([]);
        const put = await service.request('PUT', '/data/shop_settings/current', {
          body: { data: { shopName: 'Bottega', currency: 'eur' } },
        });
        expect(put.status).toBe(200);
        expect(put.body.data).toEqual({ id: 'current', shopName: 'Bottega', currency: 'EUR' });
        expect((await service.request('GET', '/data/SHOP_SETTINGS')).body.data).toEqual([
          put.body.data,
        ]);
        const patched = await service.request('PATCH', '/data/shop_settings/current', {
          body: { data: { openingDate: '2020-05-01' } },
        });
        expect(patched.body.data).toEqual({
          id: 'current',
          shopName: 'Bottega',
          currency: 'EUR',
          openingDate: '2020-05-01',
        });
      });

      it('answers 404 for any other id and 405 to POST and DELETE', async () => {
        expect((await service.request('GET', '/data/shop_settings/other')).status).toBe(404);
        const post = await service.request('POST', '/data/shop_settings', {
          body: { data: { shopName: 'x' } },
        });
        expect(post.status).toBe(405);
        expect(post.headers.get('allow')).toBe('GET, HEAD');
        expect(post.body.status).toBe('error');
        const del = await service.request('DELETE', '/data/shop_settings/current');
        expect(del.status).toBe(405);
        expect(del.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH');
      });
    });

    describe('errors outside the record rules', () => {
      it('unknown entity → 404 naming it', async () => {
        const response = await service.request('GET', '/data/nope/1');
        expect(response.status).toBe(404);
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'Entity NOPE not found' },
        });
      });

      it('unknown route → 404 in the envelope', async () => {
        const response = await service.request('GET', '/nowhere');
        expect(response.status).toBe(404);
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'No route for GET /nowhere' },
        });
      });

      it('wrong method → 405 with Allow, in the envelope', async () => {
        const onRecord = await service.request('POST', '/data/product/p1', { body: { data: {} } });
        expect(onRecord.status).toBe(405);
        expect(onRecord.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE');
        expect(onRecord.body.status).toBe('error');
        const onCollection = await service.request('PUT', '/data/product', { body: { data: {} } });
        expect(onCollection.status).toBe(405);
        expect(onCollection.headers.get('allow')).toBe('GET, HEAD, POST, PATCH, DELETE');
        const onHealth = await service.request('POST', '/health');
        expect(onHealth.status).toBe(405);
        expect(onHealth.headers.get('allow')).toContain('GET');
        expect(onHealth.body.status).toBe('error');
      });

      it('non-JSON content type → 415', async () => {
        const response = await service.request('POST', '/data/product', {
          raw: 'code=x',
          headers: { 'content-type': 'text/plain' },
        });
        expect(response.status).toBe(415);
        expect(response.body.error.reason).toMatch(/application\/json/);
      });

      it('malformed JSON → 400 saying so', async () => {
        const response = await service.request('POST', '/data/product', {
          raw: '{"data": {',
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toMatch(/^Request body is not valid JSON/);
      });

      it.each([
        ['no data property', { record: {} }, 'Request body has no "data" property'],
        [
          'data of the wrong shape',
          { data: 'p1' },
          '"data" must be a record object or a list of record objects',
        ],
        [
          'an extra top-level property',
          { data: {}, extra: 1 },
          'Unknown property "extra" in request body; only "data" is allowed',
        ],
      ])('%s → 400', async (_name, body, reason) => {
        const response = await service.request('POST', '/data/product', { body });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(reason);
      });

      it('a list element that is not an object → 400 naming its index', async () => {
        const response = await service.request('POST', '/data/product', {
          body: { data: [productInput('ok1'), 5] },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual([expect.objectContaining({ path: [1] })]);
      });

      it('GET /health reports the storage', async () => {
        const response = await service.request('GET', '/health');
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ status: 'success', data: { storage: 'ok' } });
      });

      it('gives every response a request id', async () => {
        const response = await service.request('GET', '/health', {
          headers: { 'x-request-id': 'abc-123' },
        });
        expect(response.headers.get('x-request-id')).toBe('abc-123');
        const first = (await service.request('GET', '/health')).headers.get('x-request-id');
        const second = (await service.request('GET', '/health')).headers.get('x-request-id');
        expect(first).toMatch(/^[0-9a-f]{8}-[A-Za-z0-9_-]{16}$/);
        expect(second).toMatch(/^[0-9a-f]{8}-[A-Za-z0-9_-]{16}$/);
        expect(second).not.toBe(first);
        const unsafe = await service.request('GET', '/health', {
          headers: { 'x-request-id': 'a b<c>' },
        });
        expect(unsafe.headers.get('x-request-id')).not.toBe('a b<c>');
      });
    });
  });
}
