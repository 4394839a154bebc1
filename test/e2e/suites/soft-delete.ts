/**
 * End-to-end cases of soft delete (SPEC §13) over HTTP, on the `soft-delete` fixture, defined
 * once and run against every storage driver: `soft-delete.test.ts` (SQLite) and
 * `soft-delete.postgres.test.ts`. Every answer is checked against the service's OpenAPI document.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StoredChange } from '@entity-gen/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT } from '../../helpers/generate.js';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

export function describeSoftDeleteSuite(label: string, makeDriver: MakeDriver): void {
  describe(`soft delete over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('soft-delete', {
        folder: `e2e-soft-delete-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const post = (path: string, data: unknown) => service.request('POST', path, { body: { data } });
    const get = (path: string) => service.request('GET', path);
    /** The events committed since `after`, without their seq and time. */
    const eventsAfter = async (after: number) =>
      (await service.driver.changes!.read(after, 1000)).map((change: StoredChange) => ({
        entity: change.entity,
        id: change.id,
        op: change.op,
        ...(change.soft === true ? { soft: true } : {}),
        record: JSON.parse(change.record) as unknown,
      }));
    const lastSeq = async () => (await service.driver.changes!.bounds()).last;

    it('a soft-deleted record is absent from every read path, and its key stays taken', async () => {
      expect(
        (
          await post('/data/customer', [
            { id: 'c1', name: 'Ada', tier: 'gold' },
            { id: 'c2', name: 'Bob', tier: 'gold' },
            { id: 'c3', name: 'Cy', tier: 'gold' },
          ])
        ).status,
      ).toBe(200);
      expect((await post('/data/note', { id: 'n1', text: 'hi', customer: 'c2' })).status).toBe(200);
      const before = await lastSeq();

      const deleted = await service.request('DELETE', '/data/customer/c2');
      expect(deleted.status).toBe(200);
      expect(deleted.body.data).toEqual({ id: 'c2', name: 'Bob', tier: 'gold' });

      // By key: the usual 404.
      const byKey = await get('/data/customer/c2');
      expect(byKey.status).toBe(404);
      expect(byKey.body.error.reason).toBe('EntityRecord with id c2 not found for CUSTOMER');
      // Lists (with a filter on an indexed field), counts, pages by cursor.
      expect((await get('/data/customer')).body.data.map((c: { id: string }) => c.id)).toEqual([
        'c1',
        'c3',
      ]);
      expect((await get('/data/customer?tier=gold')).body.data).toHaveLength(2);
      expect((await get('/entity/customer/recordCounts')).body.data).toEqual({ count: 2 });
      const first = await get('/data/customer?limit=1');
      expect(first.body.data.map((c: { id: string }) => c.id)).toEqual(['c1']);
      const second = await get(
        `/data/customer?limit=1&cursor=${encodeURIComponent(first.body.meta.next)}`,
      );
      expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(['c3']);
      // Expansions: the note's customer reads as absent.
      expect((await get('/data/note/n1?expand=customer')).body.data).toBeUndefined();
      // Its note went with it (onDelete: DELETE, softly: NOTE keeps deleted records).
      expect((await get('/data/note/n1')).status).toBe(404);
      // Filters through a reference see no deleted customer.
      expect((await get('/data/note?deleted=include&customer.name=Bob')).body.data).toEqual([]);
      // Reference checks: a deleted customer cannot be named.
      const named = await post('/data/note', { id: 'n2', customer: 'c2' });
      expect(named.status).toBe(400);
      expect(named.body.error.reason).toBe(
        'Field customer references CUSTOMER record "c2", which does not exist',
      );
      // Its key stays taken: POST, a list POST, and PUT answer the 400 that says what to do.
      const again = await post('/data/customer', { id: 'c2', name: 'Bob 2' });
      expect(again.status).toBe(400);
      expect(again.body.error.reason).toBe(
        'Logical key c2 for Entity CUSTOMER belongs to a deleted record; restore it (POST /data/customer/c2/restore) or purge it (DELETE with ?purge=true) first',
      );
      const inList = await post('/data/customer', [{ id: 'c9' }, { id: 'c2' }]);
      expect(inList.status).toBe(400);
      expect(inList.body.error.issues[0].path).toEqual([1]);
      expect((await get('/data/customer/c9')).status).toBe(404);
      const put = await service.request('PUT', '/data/customer/c2', {
        body: { data: { id: 'c2' } },
      });
      expect(put.status).toBe(400);
      expect(put.body.error.reason).toContain('belongs to a deleted record');
      // A rename onto it too.
      const renamed = await service.request('PATCH', '/data/customer/c3', {
        body: { data: { id: 'c2' } },
      });
      expect(renamed.status).toBe(400);
      expect(renamed.body.error.reason).toContain('belongs to a deleted record');
      // An upsert neither creates nor updates it: the list is refused, naming the record.
      for (const mode of ['replace', 'merge', 'ignore']) {
        const upsert = await post(`/data/customer?onConflict=${mode}`, [
          { id: 'c8' },
          { id: 'c3', name: 'Changed' },
          { id: 'c2', name: 'Bob 3' },
        ]);
        expect(upsert.status).toBe(400);
        expect(upsert.body.error.reason).toMatch(
          /^Record 2 of the list: Logical key c2 for Entity CUSTOMER belongs to a deleted record/,
        );
        expect((await get('/data/customer/c8')).status).toBe(404);
      }
      // PATCH and DELETE of the deleted record: 404.
      expect(
        (await service.request('PATCH', '/data/customer/c2', { body: { data: { name: 'x' } } }))
          .status,
      ).toBe(404);
      expect((await service.request('DELETE', '/data/customer/c2')).status).toBe(404);

      expect(await eventsAfter(before)).toEqual([
        {
          entity: 'CUSTOMER',
          id: 'c2',
          op: 'deleted',
          soft: true,
          record: { id: 'c2', name: 'Bob', tier: 'gold' },
        },
        {
          entity: 'NOTE',
          id: 'n1',
          op: 'deleted',
          soft: true,
          record: { id: 'n1', text: 'hi', customer: 'c2' },
        },
      ]);
    });

    it('deleted=only and deleted=include list and count the deleted records', async () => {
      const only = await get('/data/customer?deleted=only');
      expect(only.body.data).toEqual([{ id: 'c2', name: 'Bob', tier: 'gold' }]);
      const include = await get('/data/customer?deleted=include&orderBy=-id');
      expect(include.body.data.map((c: { id: string }) => c.id)).toEqual(['c3', 'c2', 'c1']);
      expect((await get('/entity/customer/recordCounts?deleted=only')).body.data).toEqual({
        count: 1,
      });
      expect((await get('/entity/customer/recordCounts?deleted=include')).body.data).toEqual({
        count: 3,
      });
      expect((await get('/data/note?deleted=only')).body.data).toEqual([
        { id: 'n1', text: 'hi', customer: 'c2' },
      ]);
      // A cursor of one view does not page another.
      const page = await get('/data/customer?deleted=include&limit=1');
      const mixed = await get(
        `/data/customer?limit=1&cursor=${encodeURIComponent(page.body.meta.next)}`,
      );
      expect(mixed.status).toBe(400);
      const bad = await get('/data/customer?deleted=yes');
      expect(bad.status).toBe(400);
      expect(bad.body.error.reason).toBe(
        'Parameter deleted must be include, only or exclude, not "yes"',
      );
      // On an entity without softDelete, `deleted` is a field name like any other: unknown.
      expect((await get('/data/invoice?deleted=only')).status).toBe(400);
    });

    it('restores a deleted record (404 when it is not deleted) and purges for good', async () => {
      const before = await lastSeq();
      const restored = await service.request('POST', '/data/customer/c2/restore');
      expect(restored.status).toBe(200);
      expect(restored.body.data).toEqual({ id: 'c2', name: 'Bob', tier: 'gold' });
      expect(restored.headers.get('etag')).toBe('"3"');
      expect((await get('/data/customer/c2')).body.data.name).toBe('Bob');
      expect((await get('/entity/customer/recordCounts')).body.data).toEqual({ count: 3 });
      // The note deleted with it stays deleted until restored itself.
      expect((await get('/data/note/n1')).status).toBe(404);
      const again = await service.request('POST', '/data/customer/c2/restore');
      expect(again.status).toBe(404);
      expect(again.body.error.reason).toBe('EntityRecord with id c2 not found for CUSTOMER');
      expect((await service.request('POST', '/data/customer/nobody/restore')).status).toBe(404);
      expect((await service.request('POST', '/data/note/n1/restore')).status).toBe(200);

      // Purge a live record, then a deleted one.
      const purged = await service.request('DELETE', '/data/note/n1?purge=true');
      expect(purged.status).toBe(200);
      expect((await get('/data/note?deleted=include')).body.data).toEqual([]);
      expect((await service.request('DELETE', '/data/customer/c3')).status).toBe(200);
      expect((await service.request('DELETE', '/data/customer/c3?purge=true')).status).toBe(200);
      expect(
        (await get('/data/customer?deleted=include')).body.data.map((c: { id: string }) => c.id),
      ).toEqual(['c1', 'c2']);
      expect((await service.request('POST', '/data/customer/c3/restore')).status).toBe(404);
      expect((await service.request('DELETE', '/data/customer/c3?purge=true')).status).toBe(404);
      expect((await service.request('DELETE', '/data/customer/c1?purge=maybe')).status).toBe(400);
      // Its key is free again.
      expect((await post('/data/customer', { id: 'c3', name: 'Cy again' })).status).toBe(200);

      expect(await eventsAfter(before)).toEqual([
        {
          entity: 'CUSTOMER',
          id: 'c2',
          op: 'restored',
          record: { id: 'c2', name: 'Bob', tier: 'gold' },
        },
        {
          entity: 'NOTE',
          id: 'n1',
          op: 'restored',
          record: { id: 'n1', text: 'hi', customer: 'c2' },
        },
        {
          entity: 'NOTE',
          id: 'n1',
          op: 'purged',
          record: { id: 'n1', text: 'hi', customer: 'c2' },
        },
        {
          entity: 'CUSTOMER',
          id: 'c3',
          op: 'deleted',
          soft: true,
          record: { id: 'c3', name: 'Cy', tier: 'gold' },
        },
        {
          entity: 'CUSTOMER',
          id: 'c3',
          op: 'purged',
          record: { id: 'c3', name: 'Cy', tier: 'gold' },
        },
        { entity: 'CUSTOMER', id: 'c3', op: 'created', record: { id: 'c3', name: 'Cy again' } },
      ]);
    });

    it('applies RESTRICT at the soft delete, and a restore checks what the record names', async () => {
      expect((await post('/data/invoice', { id: 'i1', total: 5, customer: 'c1' })).status).toBe(
        200,
      );
      const refused = await service.request('DELETE', '/data/customer/c1');
      expect(refused.status).toBe(409);
      expect(refused.body.error.reason).toBe(
        'CUSTOMER record "c1" is referenced by 1 INVOICE record (field customer)',
      );
      expect((await get('/data/customer/c1')).status).toBe(200);
      // A note of c3, deleted; then c3 purged: the note cannot come back naming nobody.
      expect((await post('/data/note', { id: 'n5', customer: 'c3' })).status).toBe(200);
      expect((await service.request('DELETE', '/data/note/n5')).status).toBe(200);
      expect((await service.request('DELETE', '/data/customer/c3?purge=true')).status).toBe(200);
      const restore = await service.request('POST', '/data/note/n5/restore');
      expect(restore.status).toBe(400);
      expect(restore.body.error.reason).toBe(
        'Field customer references CUSTOMER record "c3", which does not exist',
      );
      expect((await get('/data/note?deleted=only')).body.data).toEqual([
        { id: 'n5', customer: 'c3' },
      ]);
    });

    it('the typed client lists deleted records, restores and purges', async () => {
      const { createClient } = (await import(
        pathToFileURL(join(OUTPUT, `e2e-soft-delete-${label}`, 'src', 'client.ts')).href
      )) as {
        createClient: (options: { baseUrl: string }) => {
          customer: {
            insert(record: { id: string; name?: string }): Promise<unknown>;
            remove(id: string): Promise<unknown>;
            list(query: { deleted?: 'include' | 'only' }): Promise<{ data: unknown[] }>;
            count(query: { deleted?: 'include' | 'only' }): Promise<number>;
            restore(id: string): Promise<unknown>;
            purge(id: string): Promise<unknown>;
          };
        };
      };
      const { customer } = createClient({ baseUrl: service.url });
      await customer.insert({ id: 'k1', name: 'Kay' });
      await customer.remove('k1');
      expect((await customer.list({ deleted: 'only' })).data).toContainEqual({
        id: 'k1',
        name: 'Kay',
      });
      const deletedBefore = await customer.count({ deleted: 'only' });
      expect(await customer.restore('k1')).toEqual({ id: 'k1', name: 'Kay' });
      expect(await customer.count({ deleted: 'only' })).toBe(deletedBefore - 1);
      await expect(customer.restore('k1')).rejects.toMatchObject({ status: 404 });
      expect(await customer.purge('k1')).toEqual({ id: 'k1', name: 'Kay' });
      expect((await get('/data/customer/k1')).status).toBe(404);
    });

    it('If-Match applies to the soft delete', async () => {
      expect((await post('/data/customer', { id: 'c7' })).status).toBe(200);
      const stale = await service.request('DELETE', '/data/customer/c7', {
        headers: { 'If-Match': '"9"' },
      });
      expect(stale.status).toBe(412);
      const current = await service.request('DELETE', '/data/customer/c7', {
        headers: { 'If-Match': '"1"' },
      });
      expect(current.status).toBe(200);
      const restored = await service.request('POST', '/data/customer/c7/restore');
      expect(restored.headers.get('etag')).toBe('"3"');
    });
  });
}
