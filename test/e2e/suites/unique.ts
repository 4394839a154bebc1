/**
 * End-to-end cases of unique fields and combinations (SPEC §16) over HTTP, on the `field-rules`
 * fixture, run against every storage driver: `unique.test.ts` (SQLite) and
 * `unique.postgres.test.ts`. Each write path (POST one and list, PUT, PATCH) refuses a value
 * another record holds with a 400 naming the field and that record, and stores nothing; the
 * database decides under concurrency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

export function describeUniqueSuite(label: string, makeDriver: MakeDriver): void {
  describe(`unique fields over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('field-rules', {
        folder: `e2e-unique-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const post = (entity: string, data: unknown) =>
      service.request('POST', `/data/${entity}`, { body: { data } });
    const count = async (entity: string) =>
      (await service.request('GET', `/entity/${entity}/recordCounts`)).body.data.count as number;

    it('refuses a second record with the same value, naming the field and the holder', async () => {
      expect((await post('customer', { id: 'c1', email: 'a@b.c' })).status).toBe(200);
      const answer = await post('customer', { id: 'c2', email: 'a@b.c' });
      expect(answer.status).toBe(400);
      const message = 'Value "a@b.c" of field email is already used by Entity CUSTOMER record "c1"';
      expect(answer.body.error).toEqual({
        reason: message,
        issues: [{ path: ['email'], code: 'unique_violated', message }],
      });
      expect((await service.request('GET', '/data/customer/c2')).status).toBe(404);
    });

    it('tells a key clash from a unique clash', async () => {
      await post('customer', { id: 'k1', email: 'k1@b.c' });
      const answer = await post('customer', { id: 'k1', email: 'other@b.c' });
      expect(answer.status).toBe(400);
      expect(answer.body.error.reason).toBe('Logical key k1 for Entity CUSTOMER already exists');
    });

    it('lets absent values not collide', async () => {
      expect((await post('customer', { id: 'n1' })).status).toBe(200);
      expect((await post('customer', { id: 'n2' })).status).toBe(200);
      expect((await post('customer', [{ id: 'n3' }, { id: 'n4', email: null }])).status).toBe(200);
    });

    it('checks an INTEGER unique field', async () => {
      expect((await post('customer', { id: 'i1', number: 7 })).status).toBe(200);
      const answer = await post('customer', { id: 'i2', number: '7' });
      expect(answer.status).toBe(400);
      expect(answer.body.error.reason).toBe(
        'Value 7 of field number is already used by Entity CUSTOMER record "i1"',
      );
    });

    it('refuses a list that repeats a value within itself, or one stored, and inserts nothing', async () => {
      const before = await count('customer');
      const inside = await post('customer', [
        { id: 'l1', email: 'l@b.c' },
        { id: 'l2', email: 'm@b.c' },
        { id: 'l3', email: 'l@b.c' },
      ]);
      expect(inside.status).toBe(400);
      const message = 'Value "l@b.c" of field email repeats record 0 of the list (Entity CUSTOMER)';
      expect(inside.body.error).toEqual({
        reason: `Record 2 of the list: ${message}`,
        issues: [{ path: [2, 'email'], code: 'unique_violated', message }],
      });
      await post('customer', { id: 's1', email: 'stored@b.c' });
      const stored = await post('customer', [
        { id: 's2', email: 'fresh@b.c' },
        { id: 's3', email: 'stored@b.c' },
      ]);
      expect(stored.status).toBe(400);
      const clash =
        'Value "stored@b.c" of field email is already used by Entity CUSTOMER record "s1"';
      expect(stored.body.error).toEqual({
        reason: `Record 1 of the list: ${clash}`,
        issues: [{ path: [1, 'email'], code: 'unique_violated', message: clash }],
      });
      expect(await count('customer')).toBe(before + 1);
    });

    it('answers the values a list repeats before a stored key, with every other problem of the list', async () => {
      await post('customer', { id: 'o1', email: 'o1@b.c' });
      const before = await count('customer');
      // Record 0's key is stored, and record 2 repeats both unique values of record 1.
      const repeats = await post('customer', [
        { id: 'o1', email: 'x1@b.c' },
        { id: 'o2', email: 'x2@b.c', number: 41 },
        { id: 'o3', email: 'x2@b.c', number: 41 },
      ]);
      expect(repeats.status).toBe(400);
      const email = 'Value "x2@b.c" of field email repeats record 1 of the list (Entity CUSTOMER)';
      expect(repeats.body.error).toEqual({
        reason: `Record 2 of the list: ${email}`,
        issues: [
          { path: [2, 'email'], code: 'unique_violated', message: email },
          {
            path: [2, 'number'],
            code: 'unique_violated',
            message: 'Value 41 of field number repeats record 1 of the list (Entity CUSTOMER)',
          },
        ],
      });
      // A record that does not convert and a repeat: both named at once.
      const mixed = await post('customer', [
        { id: 'o4', email: 'y@b.c' },
        { id: 'o5', number: 'many' },
        { id: 'o6', email: 'y@b.c' },
      ]);
      expect(mixed.status).toBe(400);
      expect(mixed.body.error.issues.map((issue: { path: unknown[] }) => issue.path)).toEqual([
        [1, 'number'],
        [2, 'email'],
      ]);
      expect(await count('customer')).toBe(before);
    });

    it('refuses PUT and PATCH that take a value another record holds, and keeps the record', async () => {
      await post('customer', [
        { id: 'p1', email: 'p1@b.c', name: 'one' },
        { id: 'p2', email: 'p2@b.c', name: 'two' },
      ]);
      const message =
        'Value "p1@b.c" of field email is already used by Entity CUSTOMER record "p1"';
      const patch = await service.request('PATCH', '/data/customer/p2', {
        body: { data: { email: 'p1@b.c' } },
      });
      expect(patch.status).toBe(400);
      expect(patch.body.error).toEqual({
        reason: message,
        issues: [{ path: ['email'], code: 'unique_violated', message }],
      });
      const put = await service.request('PUT', '/data/customer/p2', {
        body: { data: { id: 'p2', email: 'p1@b.c' } },
      });
      expect(put.status).toBe(400);
      expect(put.body.error.reason).toBe(message);
      const created = await service.request('PUT', '/data/customer/p3', {
        body: { data: { id: 'p3', email: 'p1@b.c' } },
      });
      expect(created.status).toBe(400);
      expect(created.body.error.reason).toBe(message);
      expect((await service.request('GET', '/data/customer/p2')).body.data).toEqual({
        id: 'p2',
        email: 'p2@b.c',
        name: 'two',
      });
      // A record keeps its own value, and may take one that was freed.
      const same = await service.request('PATCH', '/data/customer/p2', {
        body: { data: { email: 'p2@b.c', name: 'TWO' } },
      });
      expect(same.status).toBe(200);
      await service.request('DELETE', '/data/customer/p1');
      const freed = await service.request('PATCH', '/data/customer/p2', {
        body: { data: { email: 'p1@b.c' } },
      });
      expect(freed.status).toBe(200);
    });

    it('lets exactly one of 50 concurrent inserts of the same email win; the others get a clean 400', async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          post('customer', { id: `race${i}`, email: 'race@b.c' }),
        ),
      );
      const winners = answers.filter((answer) => answer.status === 200);
      expect(winners).toHaveLength(1);
      const winner = (winners[0]!.body.data as { id: string }).id;
      const losers = answers.filter((answer) => answer.status !== 200);
      expect(losers).toHaveLength(49);
      for (const answer of losers) {
        expect(answer.status).toBe(400);
        expect(answer.body.error.reason).toBe(
          `Value "race@b.c" of field email is already used by Entity CUSTOMER record "${winner}"`,
        );
      }
      const listed = await service.request('GET', '/data/customer?email=race@b.c');
      expect((listed.body.data as unknown[]).length).toBe(1);
    });

    it('enforces a unique combination: same name in another category is fine', async () => {
      expect(
        (
          await post('item', [
            { id: 'h1', category: 'tools', name: 'Hammer', price: 10 },
            { id: 'h2', category: 'toys', name: 'Hammer', price: 5 },
            { id: 'h3', name: 'Hammer' },
            { id: 'h4', name: 'Hammer' },
          ])
        ).status,
      ).toBe(200);
      const answer = await post('item', { id: 'h5', category: 'tools', name: 'Hammer' });
      expect(answer.status).toBe(400);
      const message =
        'Values "tools", "Hammer" of fields category, name are already used by Entity ITEM record "h1"';
      expect(answer.body.error).toEqual({
        reason: message,
        issues: [
          { path: ['category'], code: 'unique_violated', message },
          { path: ['name'], code: 'unique_violated', message },
        ],
      });
      const moved = await service.request('PATCH', '/data/item/h2', {
        body: { data: { category: 'tools' } },
      });
      expect(moved.status).toBe(400);
      expect(moved.body.error.reason).toBe(message);
      const list = await post('item', [
        { id: 'h6', category: 'garden', name: 'Hammer' },
        { id: 'h7', category: 'tools', name: 'Hammer' },
      ]);
      expect(list.status).toBe(400);
      expect(list.body.error.reason).toBe(`Record 1 of the list: ${message}`);
      expect((await service.request('GET', '/data/item/h6')).status).toBe(404);
    });

    it('holds for an upsert, a change by filter and a batch: 400, nothing written', async () => {
      await post('customer', [
        { id: 'u1', email: 'u1@b.c', name: 'up' },
        { id: 'u2', email: 'u2@b.c', name: 'up' },
      ]);
      const message =
        'Value "u1@b.c" of field email is already used by Entity CUSTOMER record "u1"';
      // An upsert creating one record and changing another, the change breaking the rule.
      const upsert = await service.request('POST', '/data/customer?onConflict=merge', {
        body: {
          data: [
            { id: 'u3', email: 'u3@b.c' },
            { id: 'u2', email: 'u1@b.c' },
          ],
        },
      });
      expect(upsert.status).toBe(400);
      expect(upsert.body.error.reason).toBe(`Record 1 of the list: ${message}`);
      expect((await service.request('GET', '/data/customer/u3')).status).toBe(404);
      // An upsert creating a record whose value another holds.
      const created = await service.request('POST', '/data/customer?onConflict=replace', {
        body: {
          data: [
            { id: 'u4', email: 'u4@b.c' },
            { id: 'u5', email: 'u1@b.c' },
          ],
        },
      });
      expect(created.status).toBe(400);
      expect(created.body.error.reason).toBe(`Record 1 of the list: ${message}`);
      expect((await service.request('GET', '/data/customer/u4')).status).toBe(404);
      // A change by filter giving two records one value.
      const changed = await service.request('PATCH', '/data/customer?name=up', {
        body: { data: { number: 4242 } },
      });
      expect(changed.status).toBe(400);
      expect(changed.body.error.issues[0].code).toBe('unique_violated');
      const u1 = await service.request('GET', '/data/customer/u1');
      expect(u1.body.data.number).toBeUndefined();
      // A batch whose second operation breaks the rule writes nothing, and names it.
      const batch = await service.request('POST', '/batch', {
        body: {
          operations: [
            { method: 'POST', path: '/data/customer', body: { data: { id: 'u6' } } },
            { method: 'PATCH', path: '/data/customer/u2', body: { data: { email: 'u1@b.c' } } },
          ],
        },
      });
      expect(batch.status).toBe(400);
      expect(batch.body.error.operation).toBe(1);
      expect((await service.request('GET', '/data/customer/u6')).status).toBe(404);
      expect((await service.request('GET', '/data/customer/u2')).body.data.email).toBe('u2@b.c');
    });
  });
}
