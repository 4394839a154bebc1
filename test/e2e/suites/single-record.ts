/**
 * End-to-end cases of a single-record entity declared the way Gemini declares one — no `lk`, no
 * key field (SPEC §4.6) — on the `gemini` fixture's SINGLEREC (default `lkValue`) and
 * SITE_SETTINGS (`lkValue: current`), and on REGION_DEFAULTS, declared with a composite `lk` as
 * Gemini accepts it; defined once and run against every storage driver:
 * `single-record.test.ts` (SQLite) and `single-record.postgres.test.ts`.
 */
import { createLogger } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type TestServer } from '../../helpers/http.js';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/** The default `lkValue`: SINGLEREC declares none. */
const ID = '_singlerec_lk';
const RECORD = `/data/singlerec/${ID}`;

/**
 * Registers the cases under `describe(label)`; the service is generated into
 * `test/output/e2e-single-record-<label>` and booted on a fresh driver from `makeDriver()`.
 */
export function describeSingleRecordSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('gemini', {
        folder: `e2e-single-record-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      // (undefined when beforeAll failed; its error is the one to report)
      await service?.close();
    });

    /** The same generated app on a fresh, empty store of this suite's driver. */
    async function onEmptyStore(): Promise<TestServer> {
      const driver = (await makeDriver()) ?? new SqliteDriver({ filename: ':memory:' });
      await driver.open(service.tables);
      const server = await serve(
        service.createApp({ driver, logger: createLogger({ level: 'silent' }) }).callback(),
      );
      return {
        ...server,
        close: async () => {
          await server.close();
          await driver.close();
        },
      };
    }

    it('lists zero records and reads 404 before the record exists', async () => {
      const list = await service.request('GET', '/data/singlerec');
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([]);
      const get = await service.request('GET', RECORD);
      expect(get.status).toBe(404);
      expect(get.body.error.reason).toBe(`EntityRecord with id ${ID} not found for SINGLEREC`);
      const count = await service.request('GET', '/entity/singlerec/recordCounts');
      expect(count.body.data).toEqual({ count: 0 });
    });

    it('PATCH creates the record when absent; the body holds only the declared fields', async () => {
      const patch = await service.request('PATCH', RECORD, {
        body: { data: { stringField: 'hello', enumField: 'e2' } },
      });
      expect(patch.status).toBe(200);
      expect(patch.body.data).toEqual({ stringField: 'hello', enumField: 'E2' });
      expect(patch.headers.get('etag')).toBe('"1"');
      expect(patch.body.meta.lastUpdateTimeUnix).toBeGreaterThan(1_600_000_000_000);
      const get = await service.request('GET', RECORD);
      expect(get.status).toBe(200);
      expect(get.body.data).toEqual({ stringField: 'hello', enumField: 'E2' });
      expect(get.headers.get('etag')).toBe('"1"');
    });

    it('PUT creates the record when absent; the body holds only the declared fields', async () => {
      // PATCH created the record above; PUT must too, so it runs on a store where it is absent.
      const empty = await onEmptyStore();
      try {
        expect((await empty.request('GET', RECORD)).status).toBe(404);
        const put = await empty.request('PUT', RECORD, {
          body: { data: { stringField: 'first', intField: '3' } },
        });
        expect(put.status).toBe(200);
        expect(put.body.data).toEqual({ stringField: 'first', intField: 3 });
        expect(put.headers.get('etag')).toBe('"1"');
        const get = await empty.request('GET', RECORD);
        expect(get.status).toBe(200);
        expect(get.body.data).toEqual({ stringField: 'first', intField: 3 });
        expect(get.headers.get('etag')).toBe('"1"');
        const list = await empty.request('GET', '/data/singlerec');
        expect(list.body.data).toEqual([{ stringField: 'first', intField: 3 }]);
        // PUT under another id creates nothing.
        const other = await empty.request('PUT', '/data/singlerec/other', {
          body: { data: { stringField: 'x' } },
        });
        expect(other.status).toBe(404);
        const count = await empty.request('GET', '/entity/singlerec/recordCounts');
        expect(count.body.data).toEqual({ count: 1 });
      } finally {
        await empty.close();
      }
    });

    it('PATCH changes only the given fields; null removes one', async () => {
      const patch = await service.request('PATCH', RECORD, {
        body: { data: { booleanField: 'true', intField: '7', stringField: null } },
      });
      expect(patch.status).toBe(200);
      expect(patch.body.data).toEqual({ enumField: 'E2', booleanField: true, intField: 7 });
      expect(patch.headers.get('etag')).toBe('"2"');
    });

    it('PUT replaces the whole record: fields left out are removed', async () => {
      const put = await service.request('PUT', RECORD, {
        body: { data: { stringField: 'replaced' } },
      });
      expect(put.status).toBe(200);
      expect(put.body.data).toEqual({ stringField: 'replaced' });
      expect(put.headers.get('etag')).toBe('"3"');
      expect((await service.request('GET', RECORD)).body.data).toEqual({ stringField: 'replaced' });
    });

    it('lists exactly the one record and counts it', async () => {
      const list = await service.request('GET', '/data/SINGLEREC');
      expect(list.body.data).toEqual([{ stringField: 'replaced' }]);
      const filtered = await service.request('GET', '/data/singlerec?stringField=replaced');
      expect(filtered.body.data).toEqual([{ stringField: 'replaced' }]);
      const none = await service.request('GET', '/data/singlerec?stringField=other');
      expect(none.body.data).toEqual([]);
      const count = await service.request('GET', '/entity/singlerec/recordCounts');
      expect(count.body.data).toEqual({ count: 1 });
    });

    it('pages: a page of one holds the record and says there is no more', async () => {
      const first = await service.request('GET', '/data/singlerec?limit=1&orderBy=-intField');
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual([{ stringField: 'replaced' }]);
      expect(first.body.meta).toEqual({ start: 0, limit: 1 });
      const skipped = await service.request('GET', '/data/singlerec?start=1&limit=5');
      expect(skipped.body.data).toEqual([]);
    });

    it('answers 404 for any other id, on every method', async () => {
      for (const id of ['other', '_singlerec_lk2', 'x~y', ID.toUpperCase()]) {
        const path = `/data/singlerec/${encodeURIComponent(id)}`;
        expect((await service.request('GET', path)).status).toBe(404);
        const put = await service.request('PUT', path, { body: { data: { stringField: 'x' } } });
        expect(put.status).toBe(404);
        expect(put.body.error.reason).toBe(`EntityRecord with id ${id} not found for SINGLEREC`);
        const patch = await service.request('PATCH', path, { body: { data: { intField: 1 } } });
        expect(patch.status).toBe(404);
      }
      // Nothing was created under another id.
      expect((await service.request('GET', '/data/singlerec')).body.data).toHaveLength(1);
    });

    it('answers 405 to POST and DELETE, and OPTIONS lists what is allowed', async () => {
      const post = await service.request('POST', '/data/singlerec', {
        body: { data: { stringField: 'x' } },
      });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      expect(post.body.status).toBe('error');
      expect(post.body.error.reason).toContain('single-record');
      const del = await service.request('DELETE', RECORD);
      expect(del.status).toBe(405);
      expect(del.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH');
      const collection = await service.request('OPTIONS', '/data/singlerec');
      expect(collection.status).toBe(200);
      expect(collection.headers.get('allow')).toBe('GET, HEAD');
      const record = await service.request('OPTIONS', RECORD);
      expect(record.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH');
      expect((await service.request('GET', RECORD)).status).toBe(200);
    });

    it('refuses a key field or the storage key column in a body as unknown fields', async () => {
      for (const name of ['id', '_eg_id']) {
        const put = await service.request('PUT', RECORD, {
          body: { data: { stringField: 'x', [name]: ID } },
        });
        expect(put.status).toBe(400);
        expect(put.body.error.reason).toBe(`Field ${name} is not defined for Entity SINGLEREC`);
      }
      const invalid = await service.request('PATCH', RECORD, { body: { data: { intField: 'x' } } });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.reason).toBe(
        'Unable to convert field intField - INTEGER - for value "x"',
      );
      expect((await service.request('GET', RECORD)).body.data).toEqual({ stringField: 'replaced' });
    });

    it('honours If-Match and If-None-Match', async () => {
      const current = await service.request('GET', RECORD);
      const etag = current.headers.get('etag')!;
      const stale = await service.request('PATCH', RECORD, {
        body: { data: { intField: 1 } },
        headers: { 'If-Match': '"1"' },
      });
      expect(stale.status).toBe(412);
      const fresh = await service.request('GET', RECORD, { headers: { 'If-None-Match': etag } });
      expect(fresh.status).toBe(304);
      const ok = await service.request('PATCH', RECORD, {
        body: { data: { intField: 1 } },
        headers: { 'If-Match': etag },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.data).toEqual({ stringField: 'replaced', intField: 1 });
    });

    it('shows the entity in /entity as written, without a key', async () => {
      const response = await service.request('GET', '/entity/singlerec');
      expect(response.status).toBe(200);
      expect(response.body.data.schema).toEqual({
        type: 'ENTITY',
        entity: {
          name: 'SINGLEREC',
          singleRecord: true,
          fields: [
            { name: 'stringField', type: 'STRING' },
            { name: 'enumField', type: 'ENUM', enums: ['E1', 'E2', 'E3'] },
            { name: 'booleanField', type: 'BOOL' },
            { name: 'intField', type: 'INTEGER' },
          ],
        },
      });
      const summary = await service.request('GET', '/summary');
      expect(summary.body.data.entities.SINGLEREC.lastUpdateTimeUnix).toBeGreaterThan(0);
    });

    describe('with its own lkValue and no key field (SITE_SETTINGS, lkValue: current)', () => {
      const CURRENT = '/data/site_settings/current';

      it('answers 404 on the default id and on current before the record exists', async () => {
        const get = await service.request('GET', CURRENT);
        expect(get.status).toBe(404);
        expect(get.body.error.reason).toBe(
          'EntityRecord with id current not found for SITE_SETTINGS',
        );
        for (const method of ['GET', 'PUT', 'PATCH']) {
          const response = await service.request(method, `/data/site_settings/${ID}`, {
            ...(method === 'GET' ? {} : { body: { data: { siteName: 'x' } } }),
          });
          expect(response.status, method).toBe(404);
          expect(response.body.error.reason).toBe(
            `EntityRecord with id ${ID} not found for SITE_SETTINGS`,
          );
        }
        expect((await service.request('GET', '/data/site_settings')).body.data).toEqual([]);
      });

      it('PATCH creates the record under current; PUT and PATCH then change it', async () => {
        const created = await service.request('PATCH', CURRENT, {
          body: { data: { siteName: 'Bottega' } },
        });
        expect(created.status).toBe(200);
        expect(created.body.data).toEqual({ siteName: 'Bottega' });
        expect(created.headers.get('etag')).toBe('"1"');
        const put = await service.request('PUT', CURRENT, {
          body: { data: { siteName: 'Bottega Due', maintenance: 'false' } },
        });
        expect(put.status).toBe(200);
        expect(put.body.data).toEqual({ siteName: 'Bottega Due', maintenance: false });
        expect(put.headers.get('etag')).toBe('"2"');
        const patch = await service.request('PATCH', CURRENT, {
          body: { data: { maintenance: true } },
        });
        expect(patch.body.data).toEqual({ siteName: 'Bottega Due', maintenance: true });
        const get = await service.request('GET', '/data/SITE_SETTINGS/current');
        expect(get.status).toBe(200);
        expect(get.body.data).toEqual({ siteName: 'Bottega Due', maintenance: true });
        expect(get.headers.get('etag')).toBe('"3"');
        const missing = await service.request('PUT', CURRENT, { body: { data: {} } });
        expect(missing.status).toBe(400);
        expect(missing.body.error.reason).toBe(
          'EntityRecord of SITE_SETTINGS with id current invalid',
        );
        expect(missing.body.error.issues).toEqual([
          { path: ['siteName'], code: 'required', message: 'Field siteName is required' },
        ]);
      });

      it('answers 404 for any other id, the default _singlerec_lk included, and creates nothing', async () => {
        for (const id of [ID, 'CURRENT', 'current2', 'other']) {
          const path = `/data/site_settings/${id}`;
          const get = await service.request('GET', path);
          expect(get.status, id).toBe(404);
          expect(get.body.error.reason).toBe(
            `EntityRecord with id ${id} not found for SITE_SETTINGS`,
          );
          const put = await service.request('PUT', path, { body: { data: { siteName: 'x' } } });
          expect(put.status, id).toBe(404);
          const patch = await service.request('PATCH', path, {
            body: { data: { siteName: 'x' } },
          });
          expect(patch.status, id).toBe(404);
        }
        const list = await service.request('GET', '/data/site_settings');
        expect(list.body.data).toEqual([{ siteName: 'Bottega Due', maintenance: true }]);
        const count = await service.request('GET', '/entity/site_settings/recordCounts');
        expect(count.body.data).toEqual({ count: 1 });
      });

      it('answers 405 to POST and DELETE, and /entity shows its lkValue', async () => {
        const del = await service.request('DELETE', CURRENT);
        expect(del.status).toBe(405);
        expect(del.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH');
        const post = await service.request('POST', '/data/site_settings', {
          body: { data: { siteName: 'x' } },
        });
        expect(post.status).toBe(405);
        const entity = await service.request('GET', '/entity/site_settings');
        expect(entity.body.data.schema.entity).toMatchObject({
          name: 'SITE_SETTINGS',
          singleRecord: true,
          lkValue: 'current',
        });
        expect(entity.body.data.schema.entity.lk).toBeUndefined();
        expect((await service.request('GET', CURRENT)).status).toBe(200);
      });
    });

    describe('declared with a composite lk (REGION_DEFAULTS, lk: [region, revision])', () => {
      // Accepted as Gemini accepts it: addressed by lkValue alone, the lk fields are plain
      // required fields that a write may change.
      const DEFAULTS = `/data/region_defaults/${ID}`;

      it('PATCH without the lk fields cannot create the record; PUT creates it under lkValue', async () => {
        expect((await service.request('GET', DEFAULTS)).status).toBe(404);
        const incomplete = await service.request('PATCH', DEFAULTS, {
          body: { data: { currency: 'EUR' } },
        });
        expect(incomplete.status).toBe(400);
        expect(incomplete.body.error.issues.map((issue: { path: string[] }) => issue.path)).toEqual(
          [['region'], ['revision']],
        );
        const put = await service.request('PUT', DEFAULTS, {
          body: { data: { region: 'eu', revision: '2', currency: 'usd' } },
        });
        expect(put.status).toBe(200);
        expect(put.body.data).toEqual({ region: 'eu', revision: 2, currency: 'USD' });
        expect(put.headers.get('etag')).toBe('"1"');
        const get = await service.request('GET', DEFAULTS);
        expect(get.body.data).toEqual({ region: 'eu', revision: 2, currency: 'USD' });
      });

      it('PATCH may change an lk field: the id stays lkValue', async () => {
        const patch = await service.request('PATCH', DEFAULTS, {
          body: { data: { region: 'us', revision: 3 } },
        });
        expect(patch.status).toBe(200);
        expect(patch.body.data).toEqual({ region: 'us', revision: 3, currency: 'USD' });
        expect(patch.headers.get('etag')).toBe('"2"');
        const list = await service.request('GET', '/data/region_defaults?region=us');
        expect(list.body.data).toEqual([{ region: 'us', revision: 3, currency: 'USD' }]);
        const removed = await service.request('PATCH', DEFAULTS, {
          body: { data: { revision: null } },
        });
        expect(removed.status).toBe(400);
      });

      it('answers 404 for any other id, the lk values joined included, and 405 to POST and DELETE', async () => {
        for (const id of ['us~3', 'eu~2', 'us', 'other']) {
          const path = `/data/region_defaults/${encodeURIComponent(id)}`;
          const get = await service.request('GET', path);
          expect(get.status, id).toBe(404);
          expect(get.body.error.reason).toBe(
            `EntityRecord with id ${id} not found for REGION_DEFAULTS`,
          );
          const put = await service.request('PUT', path, {
            body: { data: { region: 'us', revision: 3 } },
          });
          expect(put.status, id).toBe(404);
          const patch = await service.request('PATCH', path, { body: { data: { revision: 4 } } });
          expect(patch.status, id).toBe(404);
        }
        const post = await service.request('POST', '/data/region_defaults', {
          body: { data: { region: 'eu', revision: 1 } },
        });
        expect(post.status).toBe(405);
        expect((await service.request('DELETE', DEFAULTS)).status).toBe(405);
        const count = await service.request('GET', '/entity/region_defaults/recordCounts');
        expect(count.body.data).toEqual({ count: 1 });
        const entity = await service.request('GET', '/entity/region_defaults');
        expect(entity.body.data.schema.entity.lk).toEqual(['region', 'revision']);
      });
    });
  });
}
