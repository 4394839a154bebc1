/**
 * Failure behaviour of the PostgreSQL driver against a PRIVATE PostgreSQL instance (initdb into a
 * temporary directory, its own free port), which the test stops, starts and freezes. The shared
 * server of the machine is never touched. How the instance is found, created and run as a non-root
 * user: `test/helpers/private-postgres.ts`. Without server binaries, or as root without a user to
 * run them as, the suite is skipped, saying why (and fails under CI: test/helpers/environment.ts).
 *
 * Each case starts from a running, unfrozen server and uses its own table and drivers, so the
 * cases do not depend on one another's order. No case measures time: "does not hang" is a call
 * that settles (with StorageUnavailableError) within a generous deadline.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { TableDescriptor } from '../../runtime/src/driver.js';
import { isStorageUnavailableError } from '../../runtime/src/errors.js';
import { PostgresDriver, type PostgresDriverOptions } from '../../runtime/src/postgres/index.js';
import { describeWith, privatePostgres } from '../helpers/environment.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';

// ---------------------------------------------------------------------------------------------

/** A table of its own for each case (`item_1`, `item_2`, …). */
let tables = 0;
function freshTable(): TableDescriptor {
  tables += 1;
  return {
    entity: `ITEM_${tables}`,
    table: `item_${tables}`,
    columns: [
      { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
      { name: 'qty', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
    ],
    key: ['id'],
  };
}

/** How long a call may take before it counts as hanging: far above any connect timeout here. */
const HANG_DEADLINE_MS = 20_000;

/** Each case's own timeout: room for its deadlines and a restart or two of the server. */
const CASE_TIMEOUT_MS = 120_000;

/**
 * Expects the call to reject with StorageUnavailableError (HTTP 503), and to settle at all: a call
 * still pending after `HANG_DEADLINE_MS` fails the case as hanging.
 */
async function expectUnavailable(promise: Promise<unknown>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_DEADLINE_MS);
  });
  const settled = promise.then(
    () => new Error(`${what}: expected a rejection, but the call succeeded`),
    (e: unknown) => e,
  );
  const error = await Promise.race([settled, hung]).finally(() => clearTimeout(timer));
  if (error === 'hung')
    throw new Error(`${what} hangs: still pending after ${HANG_DEADLINE_MS} ms`);
  expect(isStorageUnavailableError(error), `${what}: got ${String(error)}`).toBe(true);
  expect((error as { status?: number }).status).toBe(503);
}

describeWith(privatePostgres(), 'PostgreSQL driver failure behaviour (private instance)', (env) => {
  let instance: PrivatePostgres | undefined;
  const drivers: PostgresDriver[] = [];

  const newDriver = (overrides: Partial<PostgresDriverOptions> = {}): PostgresDriver => {
    const created = new PostgresDriver({
      url: instance!.url,
      env: {},
      connectTimeoutMs: 2000,
      statementTimeoutMs: 10_000,
      poolMax: 4,
      ...overrides,
    });
    drivers.push(created);
    return created;
  };

  /** A driver opened on a fresh table holding the record `a` (qty 1). */
  const seeded = async (
    overrides: Partial<PostgresDriverOptions> = {},
  ): Promise<{ driver: PostgresDriver; table: TableDescriptor }> => {
    const table = freshTable();
    const driver = newDriver(overrides);
    await driver.open([table]);
    await driver.insert(table, [{ id: 'a', qty: 1 }], 1000);
    return { driver, table };
  };

  beforeAll(async () => {
    instance = await PrivatePostgres.create(env, 'eg-pg-failure-');
    instance.start();
  });

  // Whatever the previous case did, each one starts against a running, answering server.
  beforeEach(() => {
    instance!.thaw();
    if (!instance!.isRunning()) instance!.start();
  });

  afterAll(async () => {
    for (const d of drivers) await d.close().catch(() => undefined);
    instance?.destroy();
  });

  it(
    'opens, writes and reads while the server is up',
    async () => {
      const { driver, table } = await seeded();
      expect((await driver.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
      await driver.ping();
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'rejects ping(), get(), insert(), list() and activity() with StorageUnavailableError once the server is stopped',
    async () => {
      const { driver, table } = await seeded();
      instance!.stop('fast');
      await expectUnavailable(driver.ping(), 'ping()');
      await expectUnavailable(driver.get(table, ['a']), 'get()');
      await expectUnavailable(driver.insert(table, [{ id: 'b' }], 2000), 'insert()');
      await expectUnavailable(driver.list(table, { filters: [], orderBy: [] }), 'list()');
      await expectUnavailable(driver.activity(), 'activity()');
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'rejects open() against a server that is down with StorageUnavailableError; open() may be retried',
    async () => {
      const { table } = await seeded();
      instance!.stop('fast');
      const late = newDriver();
      await expectUnavailable(late.open([table]), 'open()');
      await expectUnavailable(late.open([table]), 'open() again');
      instance!.start();
      await late.open([table]);
      expect((await late.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'works again after the server restarts, without recreating the driver',
    async () => {
      const idleErrors: Error[] = [];
      const { driver, table } = await seeded({ onIdleError: (error) => idleErrors.push(error) });
      instance!.stop('fast');
      await expectUnavailable(driver.ping(), 'ping() while the server is down');
      instance!.start();
      await driver.ping();
      expect((await driver.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
      await driver.insert(table, [{ id: 'b', qty: 2 }], 3000);
      expect(await driver.count(table, { filters: [] })).toBe(2);
      expect((await driver.update(table, ['b'], { id: 'b', qty: 3 }, 1, 4000)).status).toBe(
        'updated',
      );
      // Idle connections broken by the shutdown were reported, not thrown.
      for (const error of idleErrors) expect(error).toBeInstanceOf(Error);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'leaves no rows behind when a list insert is interrupted by the server going away',
    async () => {
      const { driver, table } = await seeded();
      // Hold the entity's activity row: the insert then writes all its rows and waits for this
      // lock before it can commit, and the server is stopped while it waits.
      const locker = new pg.Client({ connectionString: instance!.url });
      locker.on('error', () => undefined);
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`SELECT * FROM "_eg_activity" WHERE "entity" = $1 FOR UPDATE`, [
        table.entity,
      ]);

      const records = Array.from({ length: 2000 }, (_, i) => ({ id: `batch-${i}`, qty: i }));
      const pending = driver.insert(table, records, 5000).then(
        () => undefined,
        (error: unknown) => error,
      );
      // Wait (polling, with a generous deadline) until the insert is blocked on the lock, i.e.
      // its rows are written but uncommitted.
      const deadline = Date.now() + 30_000;
      for (;;) {
        // (Asked in a fresh snapshot: statistics views are frozen inside a transaction.)
        await locker.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await locker.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%_eg_rows%'`,
        );
        if (Number(rows[0]?.n) > 0) break;
        if (Date.now() > deadline) throw new Error('the insert never blocked on the activity lock');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // An immediate stop (a crash): backends exit without releasing their locks, so the waiting
      // insert can never commit. A fast stop sends SIGTERM to the backends one by one; on a busy
      // machine the lock holder could die first, and the insert then got its lock and committed
      // before its own SIGTERM arrived (seen when other suites ran in parallel).
      instance!.stop('immediate');
      const error = await pending;
      expect(isStorageUnavailableError(error), `got ${String(error)}`).toBe(true);
      await locker.end().catch(() => undefined);

      instance!.start();
      expect(await driver.count(table, { filters: [] })).toBe(1);
      expect(await driver.get(table, ['batch-0'])).toBeUndefined();
      expect(await driver.get(table, ['batch-1999'])).toBeUndefined();
      // The same batch can be inserted afterwards.
      await driver.insert(table, records, 6000);
      expect(await driver.count(table, { filters: [] })).toBe(2001);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'does not hang on a server that accepts connections but never answers',
    async () => {
      const table = freshTable();
      const frozen = newDriver({ connectTimeoutMs: 1000 });
      instance!.freeze();
      try {
        await expectUnavailable(frozen.open([table]), 'open() on a frozen server');
        await expectUnavailable(frozen.ping(), 'ping() on a frozen server');
      } finally {
        instance!.thaw();
      }
      await frozen.open([table]);
      await frozen.ping();
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'rejects calls after close() with StorageUnavailableError',
    async () => {
      const { driver: closing, table } = await seeded();
      await closing.close();
      await expectUnavailable(closing.ping(), 'ping() after close()');
      await expectUnavailable(closing.get(table, ['a']), 'get() after close()');
      await closing.close();
    },
    CASE_TIMEOUT_MS,
  );
});
