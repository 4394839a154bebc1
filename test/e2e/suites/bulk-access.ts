/**
 * Access rules of writes beyond one record (SPEC §12) on the `access` fixture: the owner rule
 * limits a change by filter to the caller's records, an upsert may not take over someone else's
 * record, and each batch operation passes the access rules with the batch's credentials. Run by
 * `bulk-access.test.ts` (SQLite) and `bulk-access.postgres.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import { suiteAuthenticator, token } from './access.js';
import type { MakeDriver } from './crud.js';

export function describeBulkAccessSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    const as: Record<'alice' | 'bob' | 'admin', Record<string, string>> = {
      alice: {},
      bob: {},
      admin: {},
    };

    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('access', {
        folder: `e2e-bulk-access-${label}`,
        auth: suiteAuthenticator(),
        ...(driver === undefined ? {} : { driver }),
      });
      as.alice = { Authorization: `Bearer ${await token('alice', [])}` };
      as.bob = { Authorization: `Bearer ${await token('bob', [])}` };
      as.admin = { Authorization: `Bearer ${await token('root', ['admin'])}` };
      for (const [id, customer] of [
        ['a1', 'alice'],
        ['a2', 'alice'],
        ['b1', 'bob'],
      ] as const) {
        const created = await service.request('POST', '/data/order', {
          headers: as.admin,
          body: { data: { id, customer, total: '10', status: 'NEW' } },
        });
        expect(created.status).toBe(200);
      }
    });
    afterAll(async () => {
      await service?.close();
    });

    const order = async (id: string) =>
      (await service.request('GET', `/data/order/${id}`, { headers: as.admin })).body.data;

    it('a change by filter under the owner rule changes only the caller’s records', async () => {
      const response = await service.request('PATCH', '/data/order?status=NEW', {
        headers: as.alice,
        body: { data: { status: 'PAID' } },
      });
      expect(response.status).toBe(200);
      expect(response.body.data.map((o: { id: string }) => o.id)).toEqual(['a1', 'a2']);
      expect((await order('b1')).status).toBe('NEW');
      expect((await order('a1')).status).toBe('PAID');
    });

    it('an upsert may not take over a record of another owner (404, as PATCH)', async () => {
      const response = await service.request('POST', '/data/order?onConflict=merge', {
        headers: as.alice,
        body: { data: { id: 'b1', total: '1' } },
      });
      expect(response.status).toBe(404);
      expect(response.body.error.reason).toBe('EntityRecord with id b1 not found for ORDER');
      expect((await order('b1')).total).toBe('10');
    });

    it('each batch operation passes the access rules with the batch’s credentials', async () => {
      const response = await service.request('POST', '/batch', {
        headers: as.bob,
        body: {
          operations: [
            { method: 'PATCH', path: '/data/order/b1', body: { data: { total: '11' } } },
            { method: 'DELETE', path: '/data/order/b1' },
          ],
        },
      });
      expect(response.status).toBe(403);
      expect(response.body.error).toEqual({
        reason: 'Operation 1 (DELETE /data/order/b1): Role required for DELETE on Entity ORDER',
        operation: 1,
      });
      expect((await order('b1')).total).toBe('10');
      const anonymous = await service.request('POST', '/batch', {
        body: { operations: [{ method: 'GET', path: '/data/order' }] },
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.operation).toBe(0);
    });
  });
}
