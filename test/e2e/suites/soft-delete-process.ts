/**
 * Soft deletes in the service process, killed with SIGKILL in the middle of them (SPEC §13 with
 * §9): after a restart every customer is either live or soft-deleted, every acknowledged delete
 * stuck, and a customer is soft-deleted if and only if the outbox holds its `deleted` event with
 * `soft` and its history (CUSTOMER has `history: true`) its `deleted` version 2, which the event
 * carries — the mark, its version and its event commit together or not at all. Run on each storage by
 * `soft-delete-process.test.ts` and `soft-delete-process.postgres.test.ts`.
 */
import type { StorageDriver } from '@entity-gen/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildFixtureService,
  startServiceProcess,
  type ServiceProcess,
} from '../../helpers/built-service.js';

/** How many customers the test soft-deletes at most; the kill comes before the last ones. */
const CUSTOMERS = 400;

export function describeSoftDeleteProcessSuite(
  label: string,
  storage: () => { env: Record<string, string>; driver: () => StorageDriver },
): void {
  describe(`a kill -9 during soft deletes (${label})`, () => {
    let dir: string;
    const processes: ServiceProcess[] = [];
    const start = async (env: Record<string, string>): Promise<ServiceProcess> => {
      const service = await startServiceProcess(dir, env);
      processes.push(service);
      return service;
    };
    beforeAll(async () => {
      dir = await buildFixtureService('soft-delete', `soft-delete-process-${label}`);
    }, 180_000);
    afterAll(async () => {
      for (const service of processes) await service.stop();
    });

    it('leaves each mark, its history version and its event together or not at all', async () => {
      const { env, driver: makeDriver } = storage();
      const first = await start(env);
      const ids = Array.from({ length: CUSTOMERS }, (_, i) => `c${String(i).padStart(3, '0')}`);
      const inserted = await first.request('POST', '/data/customer', {
        body: { data: ids.map((id) => ({ id, name: `Customer ${id}` })) },
      });
      expect(inserted.status).toBe(200);

      const acknowledged: string[] = [];
      let next = 0;
      let killed = false;
      let enoughAcknowledged!: () => void;
      const enough = new Promise<void>((resolve) => (enoughAcknowledged = resolve));
      const writer = async (): Promise<void> => {
        while (!killed && next < ids.length) {
          const id = ids[next++]!;
          const response = await first
            .request('DELETE', `/data/customer/${id}`)
            .catch(() => undefined);
          if (response?.status === 200) {
            acknowledged.push(id);
            if (acknowledged.length >= 150) enoughAcknowledged();
          } else if (!killed) throw new Error(`delete ${id} failed: ${response?.text}`);
        }
      };
      const running = Array.from({ length: 8 }, writer);
      await Promise.race([enough, Promise.all(running)]);
      first.child.kill('SIGKILL');
      killed = true;
      await Promise.allSettled(running);
      expect(next).toBeLessThan(ids.length);

      const second = await start(env);
      const deleted = await second.request('GET', '/data/customer?deleted=only&limit=1000');
      const live = await second.request('GET', '/data/customer?limit=1000');
      const deletedIds = (deleted.body as { data: { id: string }[] }).data.map((c) => c.id);
      const liveIds = (live.body as { data: { id: string }[] }).data.map((c) => c.id);
      // Every customer is exactly one of live or deleted; every acknowledged delete stuck.
      expect([...deletedIds, ...liveIds].sort()).toEqual(ids);
      for (const id of acknowledged) expect(deletedIds).toContain(id);
      // The soft deletes in the outbox are exactly the deleted customers, once each.
      const driver = makeDriver();
      await driver.open([]);
      try {
        const changes = await driver.changes!.read(0, 10_000);
        const softDeletes = changes
          .filter((change) => change.entity === 'CUSTOMER' && change.op === 'deleted')
          .map((change) => {
            expect(change.soft).toBe(true);
            expect(change.version).toBe(2);
            return change.id;
          });
        expect(softDeletes.sort()).toEqual([...deletedIds].sort());
      } finally {
        await driver.close();
      }
      // The history holds the delete of exactly the deleted customers.
      for (const id of ids) {
        const versions = await second.request('GET', `/data/customer/${id}/history`);
        expect(versions.status).toBe(200);
        const ops = (versions.body as { data: { version: number; op: string }[] }).data.map(
          (version) => `${version.version} ${version.op}`,
        );
        expect(ops, id).toEqual(
          deletedIds.includes(id) ? ['2 deleted', '1 created'] : ['1 created'],
        );
      }
    }, 120_000);
  });
}
