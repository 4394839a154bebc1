/**
 * Failure behaviour of the PostgreSQL driver against a PRIVATE PostgreSQL instance (initdb into a
 * temporary directory, its own free port), which the test stops, starts and freezes. The shared
 * server of the machine is never touched.
 *
 * Needs the PostgreSQL server binaries (`initdb`, `pg_ctl`): `PG_BIN_DIR`, else the newest
 * `/usr/lib/postgresql/<version>/bin`, else `pg_config --bindir`, else the PATH. PostgreSQL refuses
 * to run as root; when the tests run as root the instance runs as the user `PG_TEST_OS_USER`
 * (default `postgres`) through `runuser -u <user> --` (or `su`), and the temporary directory is
 * handed to that user. Without binaries, or as root without such a user, the suite is skipped with
 * a message.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDescriptor } from '../../runtime/src/driver.js';
import { isStorageUnavailableError } from '../../runtime/src/errors.js';
import { PostgresDriver, type PostgresDriverOptions } from '../../runtime/src/postgres/index.js';

// ---------------------------------------------------------------------------------------------
// Private instance

interface Environment {
  readonly bin: string;
  /** Prefix that runs a command as the non-root user, or [] when not root. */
  readonly runAs: (command: string, args: readonly string[]) => [string, string[]];
  readonly owner: { uid: number; gid: number } | undefined;
}

function findBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env['PG_BIN_DIR']) candidates.push(process.env['PG_BIN_DIR']);
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(`/usr/lib/postgresql/${version}/bin`);
  } catch {
    // not a Debian-style layout
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  for (const dir of (process.env['PATH'] ?? '').split(':')) if (dir !== '') candidates.push(dir);
  return candidates.find(
    (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')),
  );
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Works out how to run PostgreSQL here, or why it cannot be run. */
function detectEnvironment(): Environment | string {
  const bin = findBinDir();
  if (bin === undefined) {
    return 'PostgreSQL server binaries (initdb, pg_ctl) not found; set PG_BIN_DIR';
  }
  if (process.getuid?.() !== 0) {
    return { bin, runAs: (command, args) => [command, [...args]], owner: undefined };
  }
  const user = process.env['PG_TEST_OS_USER'] ?? 'postgres';
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    return `running as root and there is no user "${user}" to run PostgreSQL as; set PG_TEST_OS_USER`;
  }
  const owner = { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) =>
    existsSync(p),
  );
  if (runuser !== undefined) {
    return {
      bin,
      owner,
      runAs: (command, args) => [runuser, ['-u', user, '--', command, ...args]],
    };
  }
  const su = ['/usr/bin/su', '/bin/su'].find((p) => existsSync(p));
  if (su !== undefined) {
    return {
      bin,
      owner,
      runAs: (command, args) => [
        su,
        ['-s', '/bin/sh', user, '-c', [command, ...args].map(shellQuote).join(' ')],
      ],
    };
  }
  return 'running as root and neither runuser nor su is available to run PostgreSQL as another user';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

class PrivatePostgres {
  private frozenPid: number | undefined;

  private constructor(
    private readonly env: Environment,
    readonly dir: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(env: Environment): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'eg-pg-failure-'));
    if (env.owner !== undefined) chownSync(dir, env.owner.uid, env.owner.gid);
    const instance = new PrivatePostgres(env, dir, await freePort());
    instance.run('initdb', [
      '-D',
      instance.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    return instance;
  }

  private run(
    tool: string,
    args: readonly string[],
    allowFailure = false,
  ): SpawnSyncReturns<string> {
    const [command, argv] = this.env.runAs(join(this.env.bin, tool), args);
    const result = spawnSync(command, argv, {
      encoding: 'utf8',
      cwd: this.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    if (!allowFailure && result.status !== 0) {
      let log = '';
      try {
        log = readFileSync(join(this.dir, 'server.log'), 'utf8').slice(-2000);
      } catch {
        // no log yet
      }
      throw new Error(
        `${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}\n${log}`,
      );
    }
    return result;
  }

  start(): void {
    this.run('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=20`,
      'start',
    ]);
  }

  /** Fast shutdown: sessions are terminated (SQLSTATE 57P01), as in an orchestrated restart. */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    this.thaw();
    this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  isRunning(): boolean {
    return this.run('pg_ctl', ['-D', this.dataDir, 'status'], true).status === 0;
  }

  /** Freezes the postmaster (SIGSTOP): connections are accepted by the kernel but never answered. */
  freeze(): void {
    const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGSTOP');
    this.frozenPid = pid;
  }

  thaw(): void {
    if (this.frozenPid === undefined) return;
    try {
      process.kill(this.frozenPid, 'SIGCONT');
    } catch {
      // already gone
    }
    this.frozenPid = undefined;
  }

  destroy(): void {
    this.thaw();
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
      this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', '-t', '60', 'stop'], true);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

const table: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'qty', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
  key: ['id'],
};

const environment = detectEnvironment();
const skipReason = typeof environment === 'string' ? environment : undefined;

/** Expects the promise to reject with StorageUnavailableError within `withinMs`. */
async function expectUnavailable(promise: Promise<unknown>, withinMs: number): Promise<void> {
  const started = Date.now();
  const error = await promise.then(
    () => new Error('expected a rejection, but the call succeeded'),
    (e: unknown) => e,
  );
  const elapsed = Date.now() - started;
  expect(isStorageUnavailableError(error), `got ${String(error)}`).toBe(true);
  expect((error as { status?: number }).status).toBe(503);
  expect(elapsed).toBeLessThan(withinMs);
}

if (skipReason !== undefined) {
  describe('PostgreSQL driver failure behaviour', () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
  console.warn(`PostgreSQL failure suite skipped: ${skipReason}`);
} else {
  const env = environment as Environment;

  describe('PostgreSQL driver failure behaviour (private instance)', () => {
    let instance: PrivatePostgres | undefined;
    let driver: PostgresDriver;
    const idleErrors: Error[] = [];
    const drivers: PostgresDriver[] = [];

    const options = (overrides: Partial<PostgresDriverOptions> = {}): PostgresDriverOptions => ({
      url: instance!.url,
      env: {},
      connectTimeoutMs: 2000,
      statementTimeoutMs: 10_000,
      poolMax: 4,
      ...overrides,
    });
    const newDriver = (overrides: Partial<PostgresDriverOptions> = {}): PostgresDriver => {
      const created = new PostgresDriver(options(overrides));
      drivers.push(created);
      return created;
    };

    beforeAll(async () => {
      instance = await PrivatePostgres.create(env);
      instance.start();
      driver = newDriver({ onIdleError: (error) => idleErrors.push(error) });
    });

    afterAll(async () => {
      for (const d of drivers) await d.close().catch(() => undefined);
      instance?.destroy();
    });

    it('opens, writes and reads while the server is up', async () => {
      await driver.open([table]);
      await driver.insert(table, [{ id: 'a', qty: 1 }], 1000);
      expect((await driver.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
      await driver.ping();
    });

    it('rejects ping() and get() with StorageUnavailableError, quickly, once the server is stopped', async () => {
      instance!.stop('fast');
      await expectUnavailable(driver.ping(), 5000);
      await expectUnavailable(driver.get(table, ['a']), 5000);
      await expectUnavailable(driver.insert(table, [{ id: 'b' }], 2000), 5000);
      await expectUnavailable(driver.list(table, { filters: [], orderBy: [] }), 5000);
      await expectUnavailable(driver.activity(), 5000);
    });

    it('rejects open() against a server that is down with StorageUnavailableError; open() may be retried', async () => {
      const late = newDriver();
      await expectUnavailable(late.open([table]), 5000);
      await expectUnavailable(late.open([table]), 5000);
      instance!.start();
      await late.open([table]);
      expect((await late.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
    });

    it('works again after the server restarts, without recreating the driver', async () => {
      if (!instance!.isRunning()) instance!.start();
      await driver.ping();
      expect((await driver.get(table, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
      await driver.insert(table, [{ id: 'b', qty: 2 }], 3000);
      expect(await driver.count(table, { filters: [], orderBy: [] })).toBe(2);
      expect((await driver.update(table, ['b'], { id: 'b', qty: 3 }, 1, 4000)).status).toBe(
        'updated',
      );
      // Idle connections broken by the shutdown were reported, not thrown.
      for (const error of idleErrors) expect(error).toBeInstanceOf(Error);
    });

    it('leaves no rows behind when a list insert is interrupted by the server going away', async () => {
      // Hold the entity's activity row: the insert then writes all its rows and waits for this
      // lock before it can commit, and the server is stopped while it waits.
      const locker = new pg.Client({ connectionString: instance!.url });
      locker.on('error', () => undefined);
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`SELECT * FROM "_eg_activity" WHERE "entity" = 'ITEM' FOR UPDATE`);

      const records = Array.from({ length: 2000 }, (_, i) => ({ id: `batch-${i}`, qty: i }));
      const pending = driver.insert(table, records, 5000).then(
        () => undefined,
        (error: unknown) => error,
      );
      // Wait until the insert is blocked on the lock, i.e. its rows are written but uncommitted.
      const deadline = Date.now() + 10_000;
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
      instance!.stop('fast');
      const error = await pending;
      expect(isStorageUnavailableError(error), `got ${String(error)}`).toBe(true);
      await locker.end().catch(() => undefined);

      instance!.start();
      expect(await driver.count(table, { filters: [], orderBy: [] })).toBe(2);
      expect(await driver.get(table, ['batch-0'])).toBeUndefined();
      expect(await driver.get(table, ['batch-1999'])).toBeUndefined();
      // The same batch can be inserted afterwards.
      await driver.insert(table, records, 6000);
      expect(await driver.count(table, { filters: [], orderBy: [] })).toBe(2002);
    });

    it('does not hang on a server that accepts connections but never answers', async () => {
      const frozen = newDriver({ connectTimeoutMs: 1000 });
      instance!.freeze();
      try {
        await expectUnavailable(frozen.open([table]), 5000);
        await expectUnavailable(frozen.ping(), 5000);
      } finally {
        instance!.thaw();
      }
      await frozen.open([table]);
      await frozen.ping();
    });

    it('rejects calls after close() with StorageUnavailableError', async () => {
      const closing = newDriver();
      await closing.open([table]);
      await closing.close();
      await expectUnavailable(closing.ping(), 1000);
      await expectUnavailable(closing.get(table, ['a']), 1000);
      await closing.close();
    });
  });
}
