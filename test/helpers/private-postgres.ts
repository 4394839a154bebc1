/**
 * A PRIVATE PostgreSQL instance for tests that stop, start or freeze the server: `initdb` into a
 * temporary directory, its own free port on 127.0.0.1, its own socket directory. The shared server
 * of the machine is never touched.
 *
 * Needs the PostgreSQL server binaries (`initdb`, `pg_ctl`): `PG_BIN_DIR`, else the newest
 * `/usr/lib/postgresql/<version>/bin`, else `pg_config --bindir`, else the PATH. PostgreSQL refuses
 * to run as root; when the tests run as root the instance runs as the user `PG_TEST_OS_USER`
 * (default `postgres`) through `runuser -u <user> --` (or `su`), and the temporary directory is
 * handed to that user. `detectPostgresEnvironment()` says why an instance cannot be run here, so
 * that a suite can skip with that message.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How to run the PostgreSQL server binaries here. */
export interface PostgresEnvironment {
  readonly bin: string;
  /** Turns a command into one that runs as the non-root owner (unchanged when not root). */
  readonly runAs: (command: string, args: readonly string[]) => [string, string[]];
  /** Owner of the instance's files when running as root, else undefined. */
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

/** Works out how to run PostgreSQL here, or returns the reason why it cannot be run. */
export function detectPostgresEnvironment(): PostgresEnvironment | string {
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

/** A free TCP port on 127.0.0.1 (free when asked; a race with other processes is possible). */
export async function freePort(): Promise<number> {
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

/** A throw-away PostgreSQL cluster; call `destroy()` (in afterAll) whatever happened. */
export class PrivatePostgres {
  private frozenPid: number | undefined;

  private constructor(
    private readonly env: PostgresEnvironment,
    readonly dir: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** URL of the instance's `postgres` database as the `postgres` superuser (trust auth). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Runs `initdb` into a fresh temporary directory; the server is not started yet. */
  static async create(
    env: PostgresEnvironment,
    prefix = 'eg-pg-private-',
  ): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), prefix));
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

  /**
   * A streaming replica of the running `primary`: `pg_basebackup -R` into a fresh temporary
   * directory, on its own port; not started yet. The primary's default `pg_hba.conf` (initdb with
   * trust) lets replication connections from 127.0.0.1 in.
   */
  static async replicaOf(
    env: PostgresEnvironment,
    primary: PrivatePostgres,
    prefix = 'eg-pg-replica-',
  ): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    if (env.owner !== undefined) chownSync(dir, env.owner.uid, env.owner.gid);
    const instance = new PrivatePostgres(env, dir, await freePort());
    instance.run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      instance.dataDir,
      '-R',
      '-X',
      'stream',
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

  /**
   * Starts the server and waits (at most 60 s) until it accepts connections. `settings`: more
   * `-c name=value` options (e.g. `-c max_connections=100`), after the defaults.
   */
  start(settings = ''): void {
    this.run('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=20 ${settings}`.trim(),
      'start',
    ]);
  }

  /**
   * Stops the server and waits (at most 60 s). Fast shutdown terminates sessions (SQLSTATE
   * 57P01) and rolls back open transactions, as in an orchestrated restart; immediate shutdown
   * is a crash (recovery from the WAL at the next start).
   */
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

  /** Stops the server if it runs (immediate mode) and removes its directory. Never throws. */
  destroy(): void {
    this.thaw();
    try {
      if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
        this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', '-t', '60', 'stop'], true);
      }
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
