/**
 * End-to-end cases of record history (SPEC §13) over HTTP, on the `soft-delete` fixture (whose
 * CUSTOMER and NOTE have `history: true`), defined once and run against every storage driver:
 * `history.test.ts` (SQLite) and `history.postgres.test.ts`. Every answer is checked against the
 * service's OpenAPI document.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StorageDriver, StoredChange } from '@entity-gen/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT } from '../../helpers/generate.js';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/** Resolves once the clock has moved past `time` (versions then have distinct times). */
export async function clockPast(time: number): Promise<void> {
  while (Date.now() <= time) await new Promise((resolve) => setTimeout(resolve, 1));
}

interface Version {
  version: number;
  op: string;
  timeUnix: number;
  timeISO: string;
  by: string | null;
  record: Record<string, unknown>;
}

export function describeHistorySuite(
  label: string,
  makeDriver: MakeDriver,
  options: { eventsOff?: boolean } = {},
): void {
  const events = options.eventsOff !== true;
  describe(`record history over HTTP (${label}${events ? '' : ', events off'})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver: StorageDriver | undefined = await makeDriver();
      service = await bootFixture('soft-delete', {
        folder: `e2e-history-${label}${events ? '' : '-off'}`,
        ...(driver === undefined ? {} : { driver }),
        ...(events ? {} : { eventsOff: true }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const get = (path: string) => service.request('GET', path);
    const history = async (path: string): Promise<Version[]> => {
      const answer = await get(path);
      expect(answer.status, answer.text).toBe(200);
      return answer.body.data as Version[];
    };
    /** The events committed since `seq`: entity, id, op, soft, version. */
    const eventsAfter = async (seq: number) =>
      (await service.driver.changes!.read(seq, 1000)).map((change: StoredChange) => ({
        entity: change.entity,
        id: change.id,
        op: change.op,
        ...(change.soft === true ? { soft: true } : {}),
        version: change.version,
      }));
    const lastSeq = async () => (events ? (await service.driver.changes!.bounds()).last : 0);
    /** Runs a write once the clock moved on, and checks the events it committed. */
    const step = async (
      write: () => Promise<{ status: number; text: string }>,
      expected: readonly {
        entity: string;
        id: string;
        op: string;
        soft?: boolean;
        version: number;
      }[],
    ): Promise<void> => {
      await clockPast(Date.now());
      const before = await lastSeq();
      const answer = await write();
      expect(answer.status, answer.text).toBe(200);
      // A write's events as a set: a cascade's may come before or after the record's own.
      const order = (list: readonly { entity: string; id: string; op: string }[]) =>
        [...list].sort((a, b) =>
          `${a.entity} ${a.id} ${a.op}`.localeCompare(`${b.entity} ${b.id} ${b.op}`),
        );
      if (events) expect(order(await eventsAfter(before))).toEqual(order(expected));
    };

    it('keeps every version through create, patch, rename, soft delete, restore and purge', async () => {
      const start = Date.now();
      await clockPast(start);
      await step(
        () =>
          service.request('POST', '/data/customer', { body: { data: { id: 'h1', name: 'Ada' } } }),
        [{ entity: 'CUSTOMER', id: 'h1', op: 'created', version: 1 }],
      );
      expect((await history('/data/customer/h1/history')).map((v) => [v.version, v.op])).toEqual([
        [1, 'created'],
      ]);
      await step(
        () =>
          service.request('POST', '/data/note', {
            body: { data: { id: 'hn', text: 'hello', customer: 'h1' } },
          }),
        [{ entity: 'NOTE', id: 'hn', op: 'created', version: 1 }],
      );
      await step(
        () => service.request('PATCH', '/data/customer/h1', { body: { data: { tier: 'gold' } } }),
        [{ entity: 'CUSTOMER', id: 'h1', op: 'updated', version: 2 }],
      );
      // A rename: the history follows the record to its new key, and the note naming it changes.
      await step(
        () =>
          service.request('PUT', '/data/customer/h1', {
            body: { data: { id: 'h2', name: 'Ada', tier: 'gold' } },
          }),
        [
          { entity: 'CUSTOMER', id: 'h1', op: 'deleted', version: 3 },
          { entity: 'CUSTOMER', id: 'h2', op: 'created', version: 3 },
          { entity: 'NOTE', id: 'hn', op: 'updated', version: 2 },
        ],
      );
      expect((await get('/data/customer/h1/history')).status).toBe(404);
      const renamed = await history('/data/customer/h2/history');
      expect(renamed.map((v) => [v.version, v.op, v.record])).toEqual([
        [3, 'updated', { id: 'h2', name: 'Ada', tier: 'gold' }],
        [2, 'updated', { id: 'h1', name: 'Ada', tier: 'gold' }],
        [1, 'created', { id: 'h1', name: 'Ada' }],
      ]);
      expect(renamed.every((v) => v.by === null)).toBe(true);
      expect(renamed.every((v) => new Date(v.timeUnix).toISOString() === v.timeISO)).toBe(true);
      // A soft delete (its note goes too, softly), a restore, a purge.
      await step(
        () => service.request('DELETE', '/data/customer/h2'),
        [
          { entity: 'CUSTOMER', id: 'h2', op: 'deleted', soft: true, version: 4 },
          { entity: 'NOTE', id: 'hn', op: 'deleted', soft: true, version: 3 },
        ],
      );
      await step(
        () => service.request('POST', '/data/customer/h2/restore'),
        [{ entity: 'CUSTOMER', id: 'h2', op: 'restored', version: 5 }],
      );
      await step(
        () => service.request('DELETE', '/data/customer/h2?purge=true'),
        [{ entity: 'CUSTOMER', id: 'h2', op: 'purged', version: 6 }],
      );
      const all = await history('/data/customer/h2/history');
      expect(all.map((v) => [v.version, v.op])).toEqual([
        [6, 'purged'],
        [5, 'restored'],
        [4, 'deleted'],
        [3, 'updated'],
        [2, 'updated'],
        [1, 'created'],
      ]);
      // Times increase with the versions.
      const times = all.map((v) => v.timeUnix);
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect(
        (await history('/data/note/hn/history')).map((v) => [
          v.version,
          v.op,
          v.record['customer'],
        ]),
      ).toEqual([
        [3, 'deleted', 'h2'],
        [2, 'updated', 'h2'],
        [1, 'created', 'h1'],
      ]);

      // asOf at each version's time answers that version; absent before, deleted and purged.
      const asOf = (time: string) => get(`/data/customer/h2?asOf=${encodeURIComponent(time)}`);
      for (const version of all) {
        const answer = await asOf(version.timeISO);
        if (version.op === 'deleted' || version.op === 'purged') {
          expect(answer.status).toBe(404);
          expect(answer.body.error.reason).toBe('EntityRecord with id h2 not found for CUSTOMER');
        } else {
          expect(answer.status, `asOf v${version.version}`).toBe(200);
          expect(answer.body.data).toEqual(version.record);
          expect(answer.body.meta.lastUpdateTimeUnix).toBe(version.timeUnix);
        }
      }
      expect((await asOf(new Date(start).toISOString())).status).toBe(404);
      // The record is gone now; GET without asOf says so.
      expect((await get('/data/customer/h2')).status).toBe(404);
    });

    it('keeps a version of every record an upsert or a change by filter writes', async () => {
      await service.request('POST', '/data/customer', {
        body: {
          data: [
            { id: 'm1', name: 'one' },
            { id: 'm2', name: 'two' },
          ],
        },
      });
      const upsert = await service.request('POST', '/data/customer?onConflict=merge', {
        body: {
          data: [
            { id: 'm1', tier: 'gold' },
            { id: 'm3', name: 'three' },
            { id: 'm2', tier: 'gold' },
          ],
        },
      });
      expect(upsert.status, upsert.text).toBe(200);
      const changed = await service.request('PATCH', '/data/customer?tier=gold', {
        body: { data: { name: 'golden' } },
      });
      expect(changed.status, changed.text).toBe(200);
      for (const [id, ops] of [
        ['m1', ['updated', 'updated', 'created']],
        ['m2', ['updated', 'updated', 'created']],
        ['m3', ['created']],
      ] as const) {
        const versions = (await get(`/data/customer/${id}/history`)).body.data as Version[];
        expect(
          versions.map((v) => v.op),
          id,
        ).toEqual(ops);
        expect(
          versions.map((v) => v.version),
          id,
        ).toEqual(ops.map((_op, i) => ops.length - i));
      }
      const latest = (await get('/data/customer/m2/history?limit=1')).body.data[0] as Version;
      expect(latest.record).toMatchObject({ id: 'm2', name: 'golden', tier: 'gold' });
    });

    it('pages the history newest first with limit and cursor', async () => {
      await service.request('POST', '/data/customer', { body: { data: { id: 'p1', name: 'v1' } } });
      for (let i = 2; i <= 5; i++)
        await service.request('PATCH', '/data/customer/p1', { body: { data: { name: `v${i}` } } });
      const first = await get('/data/customer/p1/history?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.data.map((v: Version) => v.version)).toEqual([5, 4]);
      expect(first.body.meta.limit).toBe(2);
      const second = await get(`/data/customer/p1/history?limit=2&cursor=${first.body.meta.next}`);
      expect(second.body.data.map((v: Version) => v.version)).toEqual([3, 2]);
      const last = await get(`/data/customer/p1/history?limit=2&cursor=${second.body.meta.next}`);
      expect(last.body.data.map((v: Version) => v.version)).toEqual([1]);
      expect(last.body.meta.next).toBeUndefined();
      for (const bad of ['limit=0', 'limit=abc', 'limit=1001', 'cursor=x', 'cursor=0']) {
        const refused = await get(`/data/customer/p1/history?${bad}`);
        expect(refused.status, bad).toBe(400);
      }
    });

    it('the typed client pages the history and reads a past version', async () => {
      const { createClient } = (await import(
        pathToFileURL(
          join(OUTPUT, `e2e-history-${label}${events ? '' : '-off'}`, 'src', 'client.ts'),
        ).href
      )) as {
        createClient: (options: { baseUrl: string }) => {
          customer: {
            insert(record: { id: string; name?: string }): Promise<unknown>;
            patch(id: string, fields: { name?: string }): Promise<unknown>;
            get(id: string, options?: { asOf?: string | Date }): Promise<unknown>;
            history(
              id: string,
              query?: { limit?: number; cursor?: string },
            ): Promise<{ data: Version[]; meta: { limit: number; next?: string } }>;
          };
        };
      };
      const { customer } = createClient({ baseUrl: service.url });
      await customer.insert({ id: 't1', name: 'one' });
      await clockPast(Date.now());
      await customer.patch('t1', { name: 'two' });
      const page = await customer.history('t1', { limit: 1 });
      expect(page.data.map((v) => [v.version, v.record['name']])).toEqual([[2, 'two']]);
      expect(page.meta.next).toBeDefined();
      const older = await customer.history('t1', { limit: 1, cursor: page.meta.next! });
      expect(older.data.map((v) => [v.version, v.record['name']])).toEqual([[1, 'one']]);
      expect(await customer.get('t1', { asOf: new Date(older.data[0]!.timeUnix) })).toEqual({
        id: 't1',
        name: 'one',
      });
      expect(await customer.get('t1', { asOf: page.data[0]!.timeISO })).toEqual({
        id: 't1',
        name: 'two',
      });
      await expect(customer.get('t1', { asOf: new Date(0) })).rejects.toMatchObject({
        status: 404,
      });
    });

    it('answers 404 for a record that never existed and 400 for a bad asOf', async () => {
      const none = await get('/data/customer/nobody/history');
      expect(none.status).toBe(404);
      expect(none.body.error.reason).toBe('EntityRecord with id nobody not found for CUSTOMER');
      await service.request('POST', '/data/customer', { body: { data: { id: 'a1' } } });
      for (const bad of ['yesterday', '2026-01-01', '2026-13-01T00:00:00Z']) {
        const refused = await get(`/data/customer/a1?asOf=${encodeURIComponent(bad)}`);
        expect(refused.status, bad).toBe(400);
        expect(refused.body.error.reason).toMatch(/^Parameter asOf must be given once/);
      }
      // `…/history` with a literal slash is the history; an encoded slash belongs to the id.
      await service.request('POST', '/data/customer', { body: { data: { id: 'x/history' } } });
      const record = await get('/data/customer/x%2Fhistory');
      expect(record.status).toBe(200);
      expect(record.body.data).toEqual({ id: 'x/history' });
      const versions = await history('/data/customer/x%2Fhistory/history');
      expect(versions.map((v) => [v.version, v.op, v.record])).toEqual([
        [1, 'created', { id: 'x/history' }],
      ]);
      // INVOICE keeps no history: asOf is refused, and `…/history` is just an id.
      const invoice = await get(
        `/data/invoice/i1?asOf=${encodeURIComponent(new Date().toISOString())}`,
      );
      expect(invoice.status).toBe(400);
      expect(invoice.body.error.reason).toBe(
        'Parameter asOf needs the history of Entity INVOICE, which keeps none (history: true in the schema)',
      );
    });
  });
}
