/**
 * The parts of a production topology that tests start on 127.0.0.1 (SPEC §15): PgBouncer in
 * transaction mode in front of a private PostgreSQL primary, and HAProxy balancing HTTP over
 * several service instances. Each runs from a temporary directory with its own free port; both are
 * the Debian packages' binaries (`PGBOUNCER_PATH`, `HAPROXY_PATH` name others). PgBouncer refuses
 * to run as root, so it runs as the private clusters' user (private-postgres.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type PostgresEnvironment } from './private-postgres.js';

/** The binaries, or why they are missing. */
export function findTopologyBinaries(): { pgbouncer: string; haproxy: string } | string {
  const find = (name: string, variable: string): string | undefined => {
    const given = process.env[variable];
    if (given !== undefined && given !== '') return existsSync(given) ? given : undefined;
    const dirs = ['/usr/sbin', '/usr/bin', ...(process.env['PATH'] ?? '').split(':')];
    return dirs
      .filter((dir) => dir.startsWith('/'))
      .map((dir) => join(dir, name))
      .find((path) => existsSync(path));
  };
  const pgbouncer = find('pgbouncer', 'PGBOUNCER_PATH');
  const haproxy = find('haproxy', 'HAPROXY_PATH');
  const missing = [
    ...(pgbouncer === undefined
      ? ['pgbouncer (apt-get install pgbouncer; or PGBOUNCER_PATH)']
      : []),
    ...(haproxy === undefined ? ['haproxy (apt-get install haproxy; or HAPROXY_PATH)'] : []),
  ];
  if (missing.length > 0) return `not installed: ${missing.join(', ')}`;
  return { pgbouncer: pgbouncer!, haproxy: haproxy! };
}

/** Waits until 127.0.0.1:`port` accepts connections (at most `timeoutMs`). */
async function listening(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** PgBouncer in transaction pooling mode in front of one PostgreSQL server (trust auth). */
export class PgBouncer {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  static async start(
    binary: string,
    env: PostgresEnvironment,
    server: { readonly port: number },
    poolSize = 20,
  ): Promise<PgBouncer> {
    const dir = mkdtempSync(join(tmpdir(), 'eg-pgbouncer-'));
    const port = await freePort();
    writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=127.0.0.1 port=${server.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        'max_client_conn = 500',
        `default_pool_size = ${poolSize}`,
        'server_reset_query =',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        `pidfile = ${join(dir, 'pgbouncer.pid')}`,
        '',
      ].join('\n'),
    );
    if (env.owner !== undefined) {
      for (const file of ['', 'users.txt', 'pgbouncer.ini'])
        chownSync(join(dir, file), env.owner.uid, env.owner.gid);
    }
    const [command, args] = env.runAs(binary, [join(dir, 'pgbouncer.ini')]);
    const child = spawn(command, args, { stdio: 'ignore' });
    const bouncer = new PgBouncer(dir, port, child);
    try {
      await listening(port);
    } catch (error) {
      bouncer.stop();
      throw new Error(`PgBouncer did not start: ${bouncer.log()}`, { cause: error });
    }
    return bouncer;
  }

  /** The URL of `database` through the pooler. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'pgbouncer.log'), 'utf8').slice(-3000);
    } catch {
      return '(no log)';
    }
  }

  /** Stops PgBouncer (by its pid file: the child may be a runuser in between) and removes its folder. */
  stop(): void {
    try {
      const pid = Number(readFileSync(join(this.dir, 'pgbouncer.pid'), 'utf8').trim());
      if (pid > 0) process.kill(pid, 'SIGINT');
    } catch {
      // not running
    }
    this.child.kill('SIGINT');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** HAProxy balancing HTTP round robin over service instances, health-checked on `/health`. */
export class HaProxy {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  static async start(binary: string, backends: readonly number[]): Promise<HaProxy> {
    const dir = mkdtempSync(join(tmpdir(), 'eg-haproxy-'));
    const port = await freePort();
    const config = [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 120s',
      '  timeout server 120s',
      '  timeout http-request 10s',
      // A request that could not reach an instance goes to another one; one it reached is
      // never sent twice (it may have written).
      '  retries 3',
      '  option redispatch 1',
      '  retry-on conn-failure',
      'frontend service',
      `  bind 127.0.0.1:${port}`,
      '  default_backend instances',
      'backend instances',
      '  balance roundrobin',
      '  option httpchk GET /health',
      ...backends.map(
        (backend, i) => `  server i${i + 1} 127.0.0.1:${backend} check inter 300 fall 2 rise 2`,
      ),
      '',
    ].join('\n');
    writeFileSync(join(dir, 'haproxy.cfg'), config);
    const check = spawnSync(binary, ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
    if (check.status !== 0)
      throw new Error(`HAProxy refuses its configuration: ${check.stdout}${check.stderr}`);
    const child = spawn(binary, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    const proxy = new HaProxy(dir, port, child);
    await listening(port);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  stop(): void {
    this.child.kill('SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
