/**
 * Read replicas of the PostgreSQL driver (SPEC §15; runtime/src/postgres/replicas.ts) against a
 * private primary and a streaming replica started by the test (initdb, pg_basebackup): reads go
 * to the replica, a read with a write's token sees that write, a replica that is paused, lagging
 * or down is waited for or skipped and no read fails because of it.
 *
 *   npx vitest run test/drivers/postgres-replicas
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TableDescriptor } from '../../runtime/src/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { withReadAfter, type ReadAfterContext } from '../../runtime/src/read-after.js';
import { describeWith, privatePostgres } from '../helpers/environment.js';
import { withPgClient } from '../helpers/pg-client.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';

const ITEMS: TableDescriptor = {
  entity: 'ITEMS',
  table: 'items',
  key: ['id'],
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'n', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it holds (at most `ms`). */
async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(50);
  }
}

describeWith(privatePostgres(), 'PostgreSQL read replicas', (env) => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let driver: PostgresDriver;

  const onReplica = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> =>
    withPgClient(replica.url, fn);

  beforeAll(async () => {
    primary = await PrivatePostgres.create(env, 'eg-pg-primary-');
    primary.start();
    replica = await PrivatePostgres.replicaOf(env, primary);
    replica.start('-c hot_standby_feedback=on');
    driver = new PostgresDriver({
      url: primary.url,
      env: {
        DATABASE_READ_URL: replica.url,
        READ_AFTER_WAIT_MS: '300',
        MAX_REPLICA_LAG_MS: '1500',
      },
      schema: 'app',
    });
    await driver.open([ITEMS]);
    // The replica has the tables once it replayed their creation.
    await until(async () =>
      onReplica(
        async (c) =>
          (
            await c.query(
              `SELECT 1 FROM pg_tables WHERE schemaname = 'app' AND tablename = 'items'`,
            )
          ).rowCount === 1,
      ),
    );
    await until(() => driver.router!.describe()[0]!.healthy);
  }, 120_000);

  afterAll(async () => {
    await driver?.close();
    replica?.destroy();
    primary?.destroy();
  });

  it('answers reads from the replica, and a read with the write token sees the write', async () => {
    const stats = driver.router!.stats;
    const context: ReadAfterContext = { requested: undefined, written: undefined };
    await withReadAfter(context, () => driver.insert(ITEMS, [{ id: 'a', n: 1 }], 1));
    expect(context.written).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const before = stats.replicaReads;
    const read = { requested: context.written, written: undefined };
    const found = await withReadAfter(read, () => driver.get(ITEMS, ['a']));
    expect(found?.record).toEqual({ id: 'a', n: 1 });
    expect(stats.replicaReads).toBe(before + 1);
    // Lists and counts go there too.
    expect(await withReadAfter(read, () => driver.count(ITEMS, { filters: [] }))).toBe(1);
    expect(stats.replicaReads).toBe(before + 2);
  });

  it('a read whose token the replica has not replayed waits, then goes to the primary', async () => {
    const stats = driver.router!.stats;
    await onReplica((c) => c.query('SELECT pg_wal_replay_pause()'));
    try {
      const context: ReadAfterContext = { requested: undefined, written: undefined };
      await withReadAfter(context, () => driver.insert(ITEMS, [{ id: 'paused', n: 2 }], 2));
      const fallbacks = stats.readAfterFallbacks;
      // Without the token the replica answers, from before the write.
      expect(await driver.get(ITEMS, ['paused'])).toBeUndefined();
      const found = await withReadAfter({ requested: context.written, written: undefined }, () =>
        driver.get(ITEMS, ['paused']),
      );
      expect(found?.record).toEqual({ id: 'paused', n: 2 });
      expect(stats.readAfterFallbacks).toBe(fallbacks + 1);
      // Lagging beyond MAX_REPLICA_LAG_MS: skipped by every read, token or not.
      await until(() => driver.router!.describe()[0]!.lagMs > 1500);
      expect((await driver.get(ITEMS, ['paused']))?.record).toEqual({ id: 'paused', n: 2 });
    } finally {
      await onReplica((c) => c.query('SELECT pg_wal_replay_resume()'));
    }
    await until(() => driver.router!.describe()[0]!.lagMs <= 1500);
    const replicaReads = stats.replicaReads;
    expect((await driver.get(ITEMS, ['paused']))?.record).toEqual({ id: 'paused', n: 2 });
    expect(stats.replicaReads).toBe(replicaReads + 1);
  }, 60_000);

  it('no read fails while the replica is down; it is used again once back', async () => {
    const stats = driver.router!.stats;
    await driver.insert(ITEMS, [{ id: 'down', n: 3 }], 3);
    replica.stop('immediate');
    try {
      // At once (before any health check noticed) and afterwards.
      for (let i = 0; i < 5; i++) {
        expect((await driver.get(ITEMS, ['down']))?.record).toEqual({ id: 'down', n: 3 });
        expect((await driver.list(ITEMS, { filters: [], orderBy: [] })).length).toBeGreaterThan(0);
      }
      expect(driver.router!.describe()[0]!.healthy).toBe(false);
    } finally {
      replica.start('-c hot_standby_feedback=on');
    }
    await until(() => driver.router!.describe()[0]!.healthy);
    const replicaReads = stats.replicaReads;
    expect((await driver.get(ITEMS, ['down']))?.record).toEqual({ id: 'down', n: 3 });
    expect(stats.replicaReads).toBe(replicaReads + 1);
  }, 60_000);
});
