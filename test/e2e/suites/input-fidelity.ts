/**
 * Input fidelity and bounded answers, defined once and run against every storage driver
 * (`input-fidelity.test.ts` on SQLite, `input-fidelity.postgres.test.ts`): PATCH checks its body
 * like POST and PUT (an unknown field or a prototype-polluting key is a 400 naming it, nothing
 * written); values nest at most 64 levels; every answer carries nosniff and no-store; reasons
 * quote at most 100 characters of input; text is stored as sent or refused; compressed bodies are
 * inflated within the limit.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/**
 * Registers the input-fidelity cases under `describe(label)`; the shop service is generated into
 * `test/output/e2e-input-fidelity-<label>` and booted on `makeDriver()`'s driver.
 */
/** The fields the server sets on every CATEGORY record (SPEC §16): their values vary. */
const STAMPED = { createdAt: expect.any(String), updatedAt: expect.any(String) };

export function describeInputFidelitySuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-input-fidelity-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
      const inserted = await service.request('POST', '/data/category', {
        body: { data: { name: 'tools', description: 'Hand tools' } },
      });
      expect(inserted.status, inserted.text).toBe(200);
    });
    afterAll(async () => {
      // (undefined when beforeAll failed; its error is the one to report)
      await service?.close();
    });

    describe('PATCH rejects what POST and PUT reject', () => {
      it.each([
        [
          'an unknown field',
          '{"data": {"colour": "red"}}',
          'Field colour is not defined for Entity CATEGORY',
        ],
        [
          '__proto__',
          '{"data": {"__proto__": {"admin": true}}}',
          'Field __proto__ is not defined for Entity CATEGORY',
        ],
        [
          'constructor',
          '{"data": {"constructor": {"prototype": {}}}}',
          'Field constructor is not defined for Entity CATEGORY',
        ],
      ])('%s', async (_name, raw, reason) => {
        const response = await service.request('PATCH', '/data/category/tools', {
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status, response.text).toBe(400);
        expect(response.body.error.reason).toBe(reason);
        const stored = await service.request('GET', '/data/category/tools');
        expect(stored.body.data).toEqual({ name: 'tools', description: 'Hand tools', ...STAMPED });
        expect(stored.headers.get('etag')).toBe('"1"');
      });
    });

    describe('response headers', () => {
      it('data and errors are never sniffed nor stored by caches', async () => {
        for (const path of ['/data/category/tools', '/data/category/none', '/health']) {
          const response = await service.request('GET', path);
          expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
          expect(response.headers.get('cache-control'), path).toBe('no-store');
        }
      });
    });

    describe('nesting depth', () => {
      const nested = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

      const TOO_DEEP =
        'Request body nests objects and arrays too deeply; values may nest at most 64 levels';
      const product = (code: string, levels: number): string =>
        `{"code": "${code}", "name": "Deep", "price": 1, "attributes": ${nested(levels)}}`;
      const send = (method: string, path: string, raw: string) =>
        service.request(method, path, { raw, headers: { 'content-type': 'application/json' } });

      it('accepts exactly 64 levels inside a field, in one record and in a list', async () => {
        const one = await send('POST', '/data/product', `{"data": ${product('deep', 64)}}`);
        expect(one.status, one.text).toBe(200);
        expect(one.body.data.attributes).toEqual(JSON.parse(nested(64)));
        const list = await send('POST', '/data/product', `{"data": [${product('deep-list', 64)}]}`);
        expect(list.status, list.text).toBe(200);
        const put = await send('PUT', '/data/product/deep', `{"data": ${product('deep', 64)}}`);
        expect(put.status, put.text).toBe(200);
        const patch = await send(
          'PATCH',
          '/data/product/deep',
          `{"data": {"attributes": ${nested(64)}}}`,
        );
        expect(patch.status, patch.text).toBe(200);
      });

      it.each([65, 5000])('refuses %i levels with a 400 on every write', async (levels) => {
        for (const [method, path, raw] of [
          ['POST', '/data/product', `{"data": ${product('deeper', levels)}}`],
          ['POST', '/data/product', `{"data": [${product('deeper', levels)}]}`],
          ['PUT', '/data/product/deeper', `{"data": ${product('deeper', levels)}}`],
          ['PATCH', '/data/product/deep', `{"data": {"attributes": ${nested(levels)}}}`],
        ] as const) {
          const response = await send(method, path, raw);
          expect(response.status, `${method} ${raw.slice(0, 20)}: ${response.text}`).toBe(400);
          expect(response.body.error.reason).toBe(TOO_DEEP);
        }
        expect((await service.request('GET', '/data/product/deeper')).status).toBe(404);
      });

      it('does not count brackets inside strings', async () => {
        const text = await service.request('PATCH', '/data/product/deep', {
          body: { data: { name: '['.repeat(500) } },
        });
        expect(text.status, text.text).toBe(200);
      });
    });

    describe('reasons quote at most 100 characters of input', () => {
      it.each([
        [
          'GET',
          `/data/category/${'x'.repeat(8000)}`,
          `EntityRecord with id ${'x'.repeat(100)}… not found for CATEGORY`,
        ],
        ['GET', `/data/${'n'.repeat(8000)}`, `Entity ${'N'.repeat(100)}… not found`],
        [
          'GET',
          `/data/category/${'%E0'.repeat(3000)}`,
          `Record id ${'%E0'.repeat(33)}%… in the path is not valid percent-encoding`,
        ],
      ])('%s %#', async (method, path, reason) => {
        const response = await service.request(method, path);
        expect(response.body.error.reason).toBe(reason);
      });

      // 8 KB of client text in every part of a list query: each reason quotes 100 characters.
      const operators =
        'EQUALS, NOT_EQUALS, !, NOT, CONTAINS, NOT_CONTAINS, STARTS_WITH, ENDS_WITH, IEQUALS, ICONTAINS, ISTARTS_WITH, IENDS_WITH, GT, GTE, LT, LTE';
      it.each([
        [
          'a filter value',
          `/data/product?stock=${'x'.repeat(8000)}`,
          400,
          `Value "${'x'.repeat(100)}…" of query parameter stock is not a valid INTEGER`,
        ],
        [
          'a filter name',
          `/data/product?${'f'.repeat(8000)}=1`,
          400,
          `Unknown field ${'f'.repeat(100)}… in Entity PRODUCT (parameter ${'f'.repeat(100)}…)`,
        ],
        [
          'a dotted filter name',
          `/data/product?dimensions.${'d'.repeat(8000)}=1`,
          400,
          `Unknown field dimensions.${'d'.repeat(89)}… in field dimensions (parameter dimensions.${'d'.repeat(89)}…)`,
        ],
        [
          'a parameter that is no filter',
          `/data/product?${'-'.repeat(8000)}=1`,
          400,
          `Query parameter "${'-'.repeat(100)}…" is not a filter: use field=value, field[OPERATOR]=value or a dotted path into an OBJECT field`,
        ],
        [
          'an operator',
          `/data/product?name[${'X'.repeat(8000)}]=a`,
          400,
          `Unknown operator "${'X'.repeat(100)}…" in query parameter name[${'X'.repeat(95)}…; use one of ${operators}`,
        ],
        [
          'orderBy',
          `/data/product?orderBy=${'z'.repeat(8000)}`,
          400,
          `Parameter orderBy names "${'z'.repeat(100)}…", which is not a field of Entity PRODUCT`,
        ],
        [
          'limit',
          `/data/product?limit=${'1'.repeat(8000)}`,
          400,
          `Parameter limit must be an integer of at least 1, not "${'1'.repeat(100)}…"`,
        ],
        [
          'start',
          `/data/product?start=${'s'.repeat(8000)}`,
          400,
          `Parameter start must be an integer of at least 0, not "${'s'.repeat(100)}…"`,
        ],
        [
          'a cursor',
          `/data/product?cursor=${'c'.repeat(8000)}`,
          400,
          'Parameter cursor is invalid: it was not issued by this service or was altered; pass meta.next of the previous page unchanged',
        ],
        [
          'a count filter',
          `/entity/product/recordCounts?${'f'.repeat(8000)}=1`,
          400,
          `Unknown field ${'f'.repeat(100)}… in Entity PRODUCT (parameter ${'f'.repeat(100)}…)`,
        ],
        [
          'a path without route',
          `/${'p'.repeat(8000)}`,
          404,
          `No route for GET /${'p'.repeat(99)}…`,
        ],
      ])('%s', async (_what, path, status, reason) => {
        const response = await service.request('GET', path);
        expect(response.status, response.text.slice(0, 300)).toBe(status);
        expect(response.body.error.reason).toBe(reason);
      });

      it('an unknown field name of 8 KB in a body is quoted short', async () => {
        const name = 'u'.repeat(8000);
        for (const [method, path] of [
          ['POST', '/data/category'],
          ['PATCH', '/data/category/tools'],
        ] as const) {
          const response = await service.request(method, path, {
            body: { data: { name: 'tools', [name]: 1 } },
          });
          expect(response.status, method).toBe(400);
          expect(response.body.error.reason, method).toBe(
            `Field ${'u'.repeat(100)}… is not defined for Entity CATEGORY`,
          );
          expect(response.body.error.issues[0].message, method).toBe(
            `Unknown field ${'u'.repeat(100)}…`,
          );
        }
      });

      it('a duplicate key of 500 characters is quoted short', async () => {
        const name = 'k'.repeat(500);
        await service.request('POST', '/data/category', { body: { data: { name } } });
        const again = await service.request('POST', '/data/category', { body: { data: { name } } });
        expect(again.status).toBe(400);
        expect(again.body.error.reason).toBe(
          `Logical key ${'k'.repeat(100)}… for Entity CATEGORY already exists`,
        );
      });
    });

    describe('text is stored as sent, or refused', () => {
      const post = (body: Uint8Array | string, headers: Record<string, string> = {}) =>
        fetch(`${service.url}/data/category`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { error?: { reason: string }; data?: unknown },
        }));

      it('invalid UTF-8 is a 400, never replaced by U+FFFD', async () => {
        const bytes = Buffer.concat([
          Buffer.from('{"data": {"name": "bad'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}}'),
        ]);
        const response = await post(bytes);
        expect(response.status).toBe(400);
        expect(response.body.error?.reason).toBe('Request body is not valid UTF-8');
      });

      it('a lone surrogate is a 400; a surrogate pair reads back identical', async () => {
        const lone = await post('{"data": {"name": "lone\\ud800"}}');
        expect(lone.status).toBe(400);
        expect(lone.body.error?.reason).toMatch(/^Request body holds a lone UTF-16 surrogate/);
        const pair = await post('{"data": {"name": "smile\\ud83d\\ude00"}}');
        expect(pair.status).toBe(200);
        const read = await service.request(
          'GET',
          `/data/category/${encodeURIComponent('smile😀')}`,
        );
        expect(read.body.data).toEqual({ name: 'smile😀', ...STAMPED });
      });
    });

    describe('compressed bodies', () => {
      const send = (body: Uint8Array, encoding: string) =>
        fetch(`${service.url}/data/category`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          body,
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { error?: { reason: string } },
        }));

      it.each([
        ['gzip', gzipSync],
        ['deflate', deflateSync],
        ['br', brotliCompressSync],
      ] as const)('%s is inflated', async (encoding, compress) => {
        const response = await send(
          compress(Buffer.from(JSON.stringify({ data: { name: `zipped-${encoding}` } }))),
          encoding,
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
      });

      it('a small body that inflates beyond the limit is a 413 (zip bomb)', async () => {
        const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20));
        expect(bomb.length).toBeLessThan(100_000);
        const response = await send(bomb, 'gzip');
        expect(response.status).toBe(413);
      });

      it('an unknown encoding is a 415', async () => {
        const response = await send(Buffer.from('{}'), 'compress');
        expect(response.status).toBe(415);
        expect(response.body.error?.reason).toBe(
          'Unsupported Content-Encoding compress; send identity, gzip, deflate or br',
        );
      });
    });
  });
}
