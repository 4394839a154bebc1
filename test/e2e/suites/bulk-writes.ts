/**
 * Writes beyond one record (SPEC §12) on the `shop` fixture, run on every driver:
 * `bulk-writes.test.ts` (SQLite) and `bulk-writes.postgres.test.ts`. Upsert
 * (`POST ?onConflict=`), changes and deletes by filter. CATEGORY has hooks that mark each
 * record's fate in its description, so the hooks run by fate can be seen.
 */
import type { StorageDriver, StoredChange } from '@entity-gen/runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';

export type MakeDriver = () => StorageDriver | undefined | Promise<StorageDriver | undefined>;

/** CATEGORY's hooks: the description says which before-hook ran last. */
const CATEGORY_HOOKS = `import type { EntityHooks } from '@entity-gen/runtime';
import { HttpError } from '@entity-gen/runtime';
import type { Category } from '../entities/category/types.js';

export const categoryHooks: EntityHooks<Category> = {
  beforeInsert(record) {
    if (record.name === 'forbidden') throw new HttpError(400, 'Category forbidden is not welcome');
    return { ...record, description: \`inserted: \${record.description ?? ''}\` };
  },
  beforeUpdate(record) {
    return { ...record, description: \`updated: \${record.description ?? ''}\` };
  },
};
`;

export function describeBulkWritesSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    let run = 0;
    /** A prefix of this test's keys, so tests do not see each other's records. */
    let p = '';

    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-bulk-writes-${label}`,
        ...(driver === undefined ? {} : { driver }),
        files: { 'src/hooks/category.ts': CATEGORY_HOOKS },
      });
    });
    afterAll(async () => {
      await service?.close();
    });
    beforeEach(() => {
      p = `t${++run}-`;
    });

    async function post(path: string, data: unknown) {
      return await service.request('POST', path, { body: { data } });
    }
    /** A shop product of category `category` (which the test created). */
    function product(code: string, category: string, price: string, extra = {}) {
      return { code: `${p}${code}`, name: `Product ${code}`, category, price, ...extra };
    }
    async function products(...codes: string[]) {
      const found: Record<string, unknown>[] = [];
      for (const code of codes) {
        const response = await service.request('GET', `/data/product/${p}${code}`);
        found.push(response.status === 200 ? response.body.data : { missing: code });
      }
      return found;
    }
    async function changesAfter(seq: number): Promise<StoredChange[]> {
      return await service.driver.changes!.read(seq, 10_000);
    }
    async function lastSeq(): Promise<number> {
      return (await service.driver.changes!.bounds()).last;
    }

    describe('upsert: POST /data/{entity}?onConflict=', () => {
      it('replace on one record creates it when absent, then replaces it (PUT semantics)', async () => {
        await post('/data/category', { name: `${p}tools` });
        const first = await post(
          '/data/product?onConflict=replace',
          product('a', `${p}tools`, '10', { stock: 5 }),
        );
        expect(first.status).toBe(200);
        expect(first.body.meta).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
        expect(first.headers.get('etag')).toBe('"1"');
        const second = await post(
          '/data/product?onConflict=replace',
          product('a', `${p}tools`, '12'),
        );
        expect(second.status).toBe(200);
        expect(second.body.meta).toMatchObject({ created: 0, updated: 1, unchanged: 0 });
        expect(second.headers.get('etag')).toBe('"2"');
        // Replaced: the field left out (stock) is gone.
        expect(second.body.data).toEqual(product('a', `${p}tools`, '12'));
        expect(await products('a')).toEqual([product('a', `${p}tools`, '12')]);
      });

      it('merge changes only the given fields of an existing record (PATCH semantics)', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', product('a', `${p}tools`, '10', { stock: 5 }));
        const response = await post('/data/product?onConflict=merge', {
          code: `${p}a`,
          price: '11.5',
          stock: null,
        });
        expect(response.status).toBe(200);
        expect(response.body.meta).toMatchObject({ created: 0, updated: 1, unchanged: 0 });
        expect(response.body.data).toEqual(product('a', `${p}tools`, '11.5'));
      });

      it('merge of an absent record inserts it, and needs every required field then', async () => {
        const partial = await post('/data/product?onConflict=merge', {
          code: `${p}new`,
          price: '1',
        });
        expect(partial.status).toBe(400);
        expect(await products('new')).toEqual([{ missing: 'new' }]);
      });

      it('ignore leaves an existing record as it is and answers it', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', product('a', `${p}tools`, '10'));
        const before = await lastSeq();
        const response = await post(
          '/data/product?onConflict=ignore',
          product('a', `${p}tools`, '99'),
        );
        expect(response.status).toBe(200);
        expect(response.body.meta).toMatchObject({ created: 0, updated: 0, unchanged: 1 });
        expect(response.body.data).toEqual(product('a', `${p}tools`, '10'));
        expect(response.headers.get('etag')).toBe('"1"');
        expect(await changesAfter(before)).toEqual([]);
      });

      it('a list with mixed fates: counts, request order, one event per write, consecutive seqs', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', [
          product('same', `${p}tools`, '1'),
          product('changed', `${p}tools`, '2'),
        ]);
        const before = await lastSeq();
        const response = await post('/data/product?onConflict=replace', [
          product('new', `${p}tools`, '3'),
          product('same', `${p}tools`, '1'),
          product('changed', `${p}tools`, '20'),
        ]);
        expect(response.status).toBe(200);
        expect(response.body.meta).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
        expect(response.body.data).toEqual([
          product('new', `${p}tools`, '3'),
          product('same', `${p}tools`, '1'),
          product('changed', `${p}tools`, '20'),
        ]);
        const changes = await changesAfter(before);
        expect(changes.map((change) => [change.op, change.id])).toEqual([
          ['created', `${p}new`],
          ['updated', `${p}changed`],
        ]);
        expect(changes[1]!.seq).toBe(changes[0]!.seq + 1);
      });

      it('runs of updates and creates: stored values, cleared fields, events in request order', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', [
          product('a', `${p}tools`, '1', { stock: 5 }),
          product('b', `${p}tools`, '2', { stock: 6 }),
          product('c', `${p}tools`, '3'),
        ]);
        const tagOf = async (code: string) =>
          (await service.request('GET', `/data/product/${p}${code}`)).headers.get('etag');
        const firstTag = await tagOf('a');
        const before = await lastSeq();
        const response = await post('/data/product?onConflict=replace', [
          product('a', `${p}tools`, '10'),
          product('d', `${p}tools`, '4'),
          product('b', `${p}tools`, '20', { stock: 6 }),
          product('c', `${p}tools`, '3'),
          product('e', `${p}tools`, '5'),
        ]);
        expect(response.status).toBe(200);
        expect(response.body.meta).toMatchObject({ created: 2, updated: 2, unchanged: 1 });
        // Replace: a's stock, absent from the body, is gone; b keeps the stock it was given.
        expect(await products('a', 'b', 'c', 'd', 'e')).toEqual([
          product('a', `${p}tools`, '10'),
          product('b', `${p}tools`, '20', { stock: 6 }),
          product('c', `${p}tools`, '3'),
          product('d', `${p}tools`, '4'),
          product('e', `${p}tools`, '5'),
        ]);
        const changes = await changesAfter(before);
        expect(changes.map((change) => [change.op, change.id])).toEqual([
          ['updated', `${p}a`],
          ['created', `${p}d`],
          ['updated', `${p}b`],
          ['created', `${p}e`],
        ]);
        expect(changes.map((change) => change.seq - changes[0]!.seq)).toEqual([0, 1, 2, 3]);
        // An updated record is at its next version: its ETag changed, and only the new one matches.
        const tag = await tagOf('a');
        expect(firstTag).toMatch(/^"/);
        expect(tag).toMatch(/^"/);
        expect(tag).not.toBe(firstTag);
        const put = (ifMatch: string) =>
          service.request('PUT', `/data/product/${p}a`, {
            body: { data: product('a', `${p}tools`, '11') },
            headers: { 'If-Match': ifMatch },
          });
        expect((await put(firstTag!)).status).toBe(412);
        expect((await put(tag!)).status).toBe(200);
      });

      it('a list longer than a window: fates, stored values and events in request order', async () => {
        // The upsert reads and writes 1 000 records at a time: 2 500 records cross two window
        // boundaries, with runs of creates and updates that span them.
        await post('/data/category', { name: `${p}tools` });
        const code = (n: number) => `n${String(n).padStart(4, '0')}`;
        const fate = (n: number) => (n % 3 === 0 ? 'created' : n % 3 === 1 ? 'updated' : 'same');
        const all = Array.from({ length: 2_500 }, (_, n) => n);
        const existing = all.filter((n) => fate(n) !== 'created');
        expect(
          (
            await post(
              '/data/product',
              existing.map((n) => product(code(n), `${p}tools`, '1')),
            )
          ).status,
        ).toBe(200);
        const before = await lastSeq();
        const price = (n: number) => (fate(n) === 'same' ? '1' : `${n}.5`);
        const response = await post(
          '/data/product?onConflict=replace',
          all.map((n) => product(code(n), `${p}tools`, price(n))),
        );
        expect(response.status).toBe(200);
        expect(response.body.meta).toMatchObject({ created: 834, updated: 833, unchanged: 833 });
        expect(response.body.data.map((record: { price: string }) => record.price)).toEqual(
          all.map(price),
        );
        const sample = [0, 1, 2, 998, 999, 1000, 1001, 1999, 2000, 2001, 2499];
        expect(await products(...sample.map(code))).toEqual(
          sample.map((n) => product(code(n), `${p}tools`, price(n))),
        );
        const changes = await changesAfter(before);
        const written = all.filter((n) => fate(n) !== 'same');
        expect(changes.map((change) => [change.op, change.id])).toEqual(
          written.map((n) => [fate(n), `${p}${code(n)}`]),
        );
        expect(changes.map((change) => change.seq - changes[0]!.seq)).toEqual(
          written.map((_, index) => index),
        );
      });

      it('an update that breaks a unique rule or names a missing record is named; nothing is written', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', [
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2'),
        ]);
        const before = await lastSeq();
        const clash = await post('/data/product?onConflict=replace', [
          product('a', `${p}tools`, '5'),
          product('new', `${p}tools`, '6'),
          product('b', `${p}tools`, '7', { name: 'Product a' }),
        ]);
        expect(clash.status).toBeGreaterThanOrEqual(400);
        expect(clash.status).toBeLessThan(500);
        expect(clash.body.error.reason).toMatch(/^Record 2 of the list: /);
        const missing = await post('/data/product?onConflict=merge', [
          { code: `${p}a`, price: '8' },
          { code: `${p}b`, category: `${p}nowhere` },
        ]);
        expect(missing.status).toBeGreaterThanOrEqual(400);
        expect(missing.status).toBeLessThan(500);
        expect(missing.body.error.reason).toMatch(/^Record 1 of the list: /);
        expect(await products('a', 'b', 'new')).toEqual([
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2'),
          { missing: 'new' },
        ]);
        expect(await changesAfter(before)).toEqual([]);
      });

      it('a bad record anywhere in the list writes nothing and is named', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', product('old', `${p}tools`, '1'));
        const response = await post('/data/product?onConflict=merge', [
          product('fresh', `${p}tools`, '2'),
          { code: `${p}old`, price: '5' },
          { code: `${p}bad`, name: 'Bad', price: 'not a number' },
        ]);
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toMatch(/^Record 2 of the list: /);
        expect(response.body.error.issues[0].path).toEqual([2, 'price']);
        expect(await products('fresh', 'old', 'bad')).toEqual([
          { missing: 'fresh' },
          product('old', `${p}tools`, '1'),
          { missing: 'bad' },
        ]);
      });

      it('a record naming a missing record writes nothing and is named (replace)', async () => {
        await post('/data/category', { name: `${p}tools` });
        await post('/data/product', product('old', `${p}tools`, '1'));
        const response = await post('/data/product?onConflict=replace', [
          product('fresh', `${p}tools`, '2'),
          product('old', `${p}nowhere`, '5'),
        ]);
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(
          `Record 1 of the list: Field category references CATEGORY record "${p}nowhere", which does not exist`,
        );
        expect(response.body.error.issues[0].path).toEqual([1, 'category']);
        expect(await products('fresh', 'old')).toEqual([
          { missing: 'fresh' },
          product('old', `${p}tools`, '1'),
        ]);
      });

      it('a key twice in the list is a 400 before anything is written', async () => {
        const response = await post('/data/category?onConflict=replace', [
          { name: `${p}x` },
          { name: `${p}x` },
        ]);
        expect(response.status).toBe(400);
        expect(response.body.error.issues[0]).toMatchObject({ path: [1], code: 'duplicate_key' });
      });

      it('runs beforeInsert or beforeUpdate as each record fate decides', async () => {
        await post('/data/category', { name: `${p}old`, description: 'a' });
        const response = await post('/data/category?onConflict=replace', [
          { name: `${p}old`, description: 'b' },
          { name: `${p}new`, description: 'c' },
        ]);
        expect(response.status).toBe(200);
        // CATEGORY's createdAt and updatedAt are set by the server (SPEC §16).
        const stamped = { createdAt: expect.any(String), updatedAt: expect.any(String) };
        expect(response.body.data).toEqual([
          { name: `${p}old`, description: 'updated: b', ...stamped },
          { name: `${p}new`, description: 'inserted: c', ...stamped },
        ]);
      });

      it('a hook that refuses one record rolls back the whole list', async () => {
        const response = await post('/data/category?onConflict=replace', [
          { name: `${p}fine` },
          { name: 'forbidden' },
        ]);
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(
          'Record 1 of the list: Category forbidden is not welcome',
        );
        expect((await service.request('GET', `/data/category/${p}fine`)).status).toBe(404);
      });

      it('refuses an unknown onConflict value', async () => {
        const response = await post('/data/category?onConflict=overwrite', { name: `${p}x` });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(
          'Parameter onConflict must be replace, merge or ignore, not overwrite',
        );
      });
    });

    describe('changes by filter: PATCH and DELETE /data/{entity}?<filters>', () => {
      async function threeTools(): Promise<void> {
        await post('/data/category', { name: `${p}tools`, description: `${p}hand` });
        await post('/data/category', { name: `${p}toys` });
        await post('/data/product', [
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2'),
          product('c', `${p}tools`, '3'),
          product('d', `${p}toys`, '4'),
        ]);
      }

      it('changes every matching record at maxAffected, one event each', async () => {
        await threeTools();
        const before = await lastSeq();
        const response = await service.request(
          'PATCH',
          `/data/product?category=${p}tools&maxAffected=3`,
          { body: { data: { stock: 7 } } },
        );
        expect(response.status).toBe(200);
        expect(response.body.meta.count).toBe(3);
        expect(response.body.data.map((r: { code: string }) => r.code)).toEqual([
          `${p}a`,
          `${p}b`,
          `${p}c`,
        ]);
        expect(await products('a', 'd')).toEqual([
          product('a', `${p}tools`, '1', { stock: 7 }),
          product('d', `${p}toys`, '4'),
        ]);
        const changes = await changesAfter(before);
        expect(changes.map((change) => change.op)).toEqual(['updated', 'updated', 'updated']);
        expect(changes.map((change) => change.seq - changes[0]!.seq)).toEqual([0, 1, 2]);
      });

      it('changes more records than a window holds, in key order, one event each, versions up', async () => {
        // Written 1 000 at a time: 2 500 records cross two window boundaries.
        await post('/data/category', { name: `${p}bulk` });
        const code = (n: number) => `n${String(n).padStart(4, '0')}`;
        const all = Array.from({ length: 2_500 }, (_, n) => n);
        const made = await post(
          '/data/product',
          all.map((n) => product(code(n), `${p}bulk`, '1')),
        );
        expect(made.status).toBe(200);
        const before = await lastSeq();
        const response = await service.request(
          'PATCH',
          `/data/product?category=${p}bulk&maxAffected=2500`,
          { body: { data: { stock: 3 } } },
        );
        expect(response.status).toBe(200);
        expect(response.body.meta.count).toBe(2_500);
        expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(
          all.map((n) => `${p}${code(n)}`),
        );
        const sample = [0, 999, 1000, 2499];
        expect(await products(...sample.map(code))).toEqual(
          sample.map((n) => product(code(n), `${p}bulk`, '1', { stock: 3 })),
        );
        const tag = await service.request('GET', `/data/product/${p}${code(1000)}`);
        expect(tag.headers.get('etag')).toBe('"2"');
        const changes = await changesAfter(before);
        expect(changes.map((change) => [change.op, change.id])).toEqual(
          all.map((n) => ['updated', `${p}${code(n)}`]),
        );
        expect(changes.at(-1)!.seq - changes[0]!.seq).toBe(2_499);
      });

      it('changes below maxAffected, through a reference filter too', async () => {
        await threeTools();
        const response = await service.request(
          'PATCH',
          `/data/product?category.description[ENDS_WITH]=${p}hand&price[GTE]=2&maxAffected=5`,
          { body: { data: { stock: 1 } } },
        );
        expect(response.status).toBe(200);
        expect(response.body.meta.count).toBe(2);
        expect(await products('a', 'b', 'c')).toEqual([
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2', { stock: 1 }),
          product('c', `${p}tools`, '3', { stock: 1 }),
        ]);
      });

      it('above maxAffected: 400 naming both numbers, nothing changed', async () => {
        await threeTools();
        const response = await service.request(
          'PATCH',
          `/data/product?category=${p}tools&maxAffected=2`,
          { body: { data: { stock: 9 } } },
        );
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toBe(
          '3 records of Entity PRODUCT match the filters, more than maxAffected (2): nothing was changed',
        );
        expect(await products('a', 'b', 'c')).toEqual([
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2'),
          product('c', `${p}tools`, '3'),
        ]);
      });

      it('requires a filter, and a maxAffected within bounds', async () => {
        const none = await service.request('PATCH', '/data/product', {
          body: { data: { stock: 1 } },
        });
        expect(none.status).toBe(400);
        expect(none.body.error.reason).toBe('A filter is required to change several records');
        const bound = await service.request('DELETE', '/data/product?code=x&maxAffected=10001');
        expect(bound.status).toBe(400);
        expect(bound.body.error.reason).toBe(
          'Parameter maxAffected must be an integer from 1 to 10000, not 10001',
        );
        const paging = await service.request('DELETE', '/data/product?code=x&limit=3');
        expect(paging.status).toBe(400);
      });

      it('refuses to change key fields by filter', async () => {
        const response = await service.request('PATCH', '/data/product?code=x', {
          body: { data: { code: 'y' } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.reason).toMatch(/cannot change key field code/);
      });

      it('a record made invalid by the change fails the whole change', async () => {
        await threeTools();
        const response = await service.request('PATCH', `/data/product?category=${p}tools`, {
          body: { data: { name: null } },
        });
        expect(response.status).toBe(400);
        expect(await products('a')).toEqual([product('a', `${p}tools`, '1')]);
      });

      it('deletes every matching record and answers them as they were', async () => {
        await threeTools();
        const before = await lastSeq();
        const response = await service.request('DELETE', `/data/product?category=${p}tools`);
        expect(response.status).toBe(200);
        expect(response.body.meta.count).toBe(3);
        expect(response.body.data).toEqual([
          product('a', `${p}tools`, '1'),
          product('b', `${p}tools`, '2'),
          product('c', `${p}tools`, '3'),
        ]);
        expect(await products('a', 'd')).toEqual([{ missing: 'a' }, product('d', `${p}toys`, '4')]);
        const changes = await changesAfter(before);
        expect(changes.map((change) => change.op)).toEqual(['deleted', 'deleted', 'deleted']);
      });

      it('deletes more records than a window holds, in key order, one event each', async () => {
        // Deleted 1 000 at a time: 2 500 records cross two window boundaries.
        await post('/data/category', { name: `${p}gone` });
        const code = (n: number) => `n${String(n).padStart(4, '0')}`;
        const all = Array.from({ length: 2_500 }, (_, n) => n);
        expect(
          (
            await post(
              '/data/product',
              all.map((n) => product(code(n), `${p}gone`, '1')),
            )
          ).status,
        ).toBe(200);
        // One record at version 2: answered as it was, at that version.
        await service.request('PATCH', `/data/product/${p}${code(1000)}`, {
          body: { data: { stock: 7 } },
        });
        const before = await lastSeq();
        const response = await service.request(
          'DELETE',
          `/data/product?category=${p}gone&maxAffected=2500`,
        );
        expect(response.status).toBe(200);
        expect(response.body.meta.count).toBe(2_500);
        expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(
          all.map((n) => `${p}${code(n)}`),
        );
        expect(response.body.data[1000]).toEqual(
          product(code(1000), `${p}gone`, '1', { stock: 7 }),
        );
        expect(await products(code(0), code(2499))).toEqual([
          { missing: code(0) },
          { missing: code(2499) },
        ]);
        const changes = await changesAfter(before);
        expect(changes.map((change) => [change.op, change.id])).toEqual(
          all.map((n) => ['deleted', `${p}${code(n)}`]),
        );
        expect(changes.at(-1)!.seq - changes[0]!.seq).toBe(2_499);
        // The category is no longer referenced: it can go too.
        expect((await service.request('DELETE', `/data/category/${p}gone`)).status).toBe(200);
      });

      it('a delete by filter of records still referenced (RESTRICT) deletes none of them', async () => {
        await threeTools();
        const response = await service.request(
          'DELETE',
          `/data/category?name=${p}toys&name=${p}tools&name=${p}none`,
        );
        expect(response.status).toBe(409);
        expect(response.body.error.reason).toMatch(/is referenced by/);
        const kept = await service.request('GET', `/data/category?name=${p}toys&name=${p}tools`);
        expect(kept.body.data.map((c: { name: string }) => c.name).sort()).toEqual([
          `${p}tools`,
          `${p}toys`,
        ]);
      });

      it('matching nothing changes nothing', async () => {
        const response = await service.request('DELETE', `/data/product?category=${p}none`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ status: 'success', data: [], meta: { count: 0 } });
      });
    });
  });
}
