/**
 * Property tests of the HTTP interface (fast-check), defined once and run against every storage
 * driver: `fuzz.test.ts` (SQLite) and `fuzz.postgres.test.ts`. Random PRODUCT records of the shop
 * fixture — plausible values, wrong types, hostile strings, deep and odd JSON — and random list
 * queries must never get a 5xx, and every record the service accepts must read back exactly as it
 * answered the insert.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

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
    category: validText,
    price: fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.stringMatching(/^-?\d{1,20}(\.\d{1,20})?$/),
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
    category: field(nastyText),
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
 * Registers the properties under `describe(label)`; the service is generated into
 * `test/output/e2e-fuzz-<label>` and booted on a fresh driver from `makeDriver()`.
 */
export function describeFuzzSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-fuzz-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    it('random records: never a 5xx; an accepted record reads back as answered', async () => {
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
        { numRuns: 120, seed: 20261124 },
      );
      // The property says something only if records are accepted too, not just refused.
      expect(accepted).toBeGreaterThan(30);
    });

    it('random list queries and counts: never a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(query, async ({ filters, orderBy, limit, start }) => {
          const params = new URLSearchParams();
          for (const [name, operator, value] of filters) params.append(`${name}${operator}`, value);
          if (orderBy !== undefined) params.set('orderBy', orderBy);
          if (limit !== undefined) params.set('limit', String(limit));
          if (start !== undefined) params.set('start', String(start));
          const list = await service.request('GET', `/data/product?${params}`);
          expect(list.status, list.text).toBeLessThan(500);
          const count = await service.request('GET', `/entity/product/recordCounts?${params}`);
          expect(count.status, count.text).toBeLessThan(500);
        }),
        { numRuns: 150, seed: 20261125 },
      );
    });
  });
}
