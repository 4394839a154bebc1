/**
 * The service past one machine (SPEC §15), with real parts started by the test on 127.0.0.1: a
 * PostgreSQL primary and its streaming replica (initdb and pg_basebackup into temporary folders),
 * PgBouncer in transaction mode in front of the primary, three instances of the built `shop`
 * service (`DATABASE_URL` through PgBouncer, `DATABASE_LISTEN_URL` direct, `DATABASE_READ_URL`
 * the replica) and HAProxy in front of them.
 *
 * For TOPOLOGY_SECONDS (default 60) a mixed load runs through HAProxy — inserts, patches, reads
 * with the token of the worker's last write and without, lists — while one instance is killed
 * with SIGKILL and restarted and the replica is stopped and started again. Afterwards:
 *
 * - every acknowledged write is in the primary (a record's value is the last acknowledged one or
 *   a later write of the same worker that was not acknowledged);
 * - every write's answer carried `X-Read-After`, and no read sent with it saw older data;
 * - no request failed outside the moments an instance was killed (so none because of the
 *   replica), and the requests that failed then were answered 502/503 or cut;
 * - subscribers of `/events` through HAProxy (three, opened one after another so that round robin
 *   puts one on each instance, and so one on the instance that is killed) that reconnect with
 *   `Last-Event-ID` received every
 *   event of the log exactly once, in order.
 *
 * The test prints its figures (requests by kind, errors by kind, writes and events checked).
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildFixtureService, sleep, startServiceProcess } from '../helpers/built-service.js';
import type { ServiceProcess } from '../helpers/built-service.js';
import { describeWith, topologyParts } from '../helpers/environment.js';
import { freePort, PrivatePostgres } from '../helpers/private-postgres.js';
import { ResumingSubscriber } from '../helpers/sse-subscriber.js';
import { HaProxy, PgBouncer } from '../helpers/topology.js';

const SECONDS = Number(process.env['TOPOLOGY_SECONDS'] ?? '60');
const WORKERS = 6;
const SCHEMA = 'app';

/** What the load saw. */
interface Figures {
  requests: Record<string, number>;
  errors: Record<string, number>;
  /** Every failed request: when, and what. */
  failures: { at: number; what: string }[];
  /** Reads without a token that did not find a record acknowledged shortly before (replica lag). */
  notYetOnReplica: number;
  writesWithoutToken: number;
  staleReads: string[];
}

describeWith(topologyParts(), 'topology: replica, PgBouncer, three instances, HAProxy', (parts) => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let bouncer: PgBouncer;
  let proxy: HaProxy;
  let dir: string;
  const instances: (ServiceProcess | undefined)[] = [];
  const ports: number[] = [];
  const replicaSettings = '-c max_connections=100 -c hot_standby_feedback=on';

  const schemaUrl = (url: string): string => `${url}?schema=${SCHEMA}`;
  const instanceEnv = (port: number): Record<string, string> => ({
    PORT: String(port),
    DATABASE_URL: `${schemaUrl(bouncer.url())}&pool_max=8`,
    DATABASE_LISTEN_URL: schemaUrl(primary.url),
    DATABASE_READ_URL: schemaUrl(replica.url),
    READ_AFTER_WAIT_MS: '500',
    MAX_REPLICA_LAG_MS: '5000',
    LOG_LEVEL: 'info',
  });
  const startInstance = async (i: number): Promise<void> => {
    instances[i] = await startServiceProcess(dir, instanceEnv(ports[i]!), 60_000);
  };

  beforeAll(async () => {
    dir = await buildFixtureService('shop', 'topology-shop');
    primary = await PrivatePostgres.create(parts.postgres, 'eg-topology-primary-');
    primary.start('-c max_connections=100');
    replica = await PrivatePostgres.replicaOf(parts.postgres, primary, 'eg-topology-replica-');
    replica.start(replicaSettings);
    bouncer = await PgBouncer.start(parts.pgbouncer, parts.postgres, primary, 20);
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    // One after another: the first creates the tables (on the direct connection).
    for (let i = 0; i < 3; i++) await startInstance(i);
    proxy = await HaProxy.start(parts.haproxy, ports);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance?.stop(5_000)));
    proxy?.stop();
    bouncer?.stop();
    replica?.destroy();
    primary?.destroy();
  });

  it(
    `keeps every acknowledged write and event through an instance kill and a replica restart (${SECONDS} s of load)`,
    async () => {
      const base = proxy.url;
      const figures: Figures = {
        requests: {},
        errors: {},
        failures: [],
        notYetOnReplica: 0,
        writesWithoutToken: 0,
        staleReads: [],
      };
      const count = (table: Record<string, number>, key: string): void => {
        table[key] = (table[key] ?? 0) + 1;
      };
      /** Periods during which an instance is down (from its kill until HAProxy saw it back). */
      const killWindows: [number, number][] = [];
      const duringKill = (at: number): boolean =>
        killWindows.some(([from, to]) => at >= from - 100 && at <= to + 2_000);

      // Opened before any other request, one after another: round robin gives each an instance.
      const subscribers = [0, 1, 2].map(() => new ResumingSubscriber(base));
      for (const subscriber of subscribers) {
        subscriber.start();
        await sleep(300);
      }

      /** Per worker: each record's last acknowledged value (a counter in `description`). */
      const acknowledged = Array.from({ length: WORKERS }, () => new Map<string, number>());
      let stop = false;
      const worker = async (w: number): Promise<void> => {
        const mine = acknowledged[w]!;
        let token: string | undefined;
        let counter = 0;
        let n = 0;
        while (!stop) {
          const names = [...mine.keys()];
          const roll = Math.random();
          const kind =
            names.length === 0 || roll < 0.3
              ? 'insert'
              : roll < 0.55
                ? 'patch'
                : roll < 0.75
                  ? 'read with token'
                  : roll < 0.9
                    ? 'read'
                    : 'list';
          count(figures.requests, kind);
          const at = Date.now();
          const name =
            kind === 'insert' ? `w${w}-${n++}` : names[Math.floor(Math.random() * names.length)]!;
          const value = ++counter;
          let response: Response;
          try {
            const headers: Record<string, string> = { 'content-type': 'application/json' };
            if (kind === 'read with token' && token !== undefined) headers['X-Read-After'] = token;
            const path =
              kind === 'insert'
                ? '/data/category'
                : kind === 'list'
                  ? '/data/category?limit=5'
                  : `/data/category/${encodeURIComponent(name)}`;
            response = await fetch(`${base}${path}`, {
              method: kind === 'insert' ? 'POST' : kind === 'patch' ? 'PATCH' : 'GET',
              headers,
              ...(kind === 'insert'
                ? { body: JSON.stringify({ data: { name, description: `v${value}` } }) }
                : kind === 'patch'
                  ? { body: JSON.stringify({ data: { description: `v${value}` } }) }
                  : {}),
              signal: AbortSignal.timeout(20_000),
            });
          } catch (error) {
            const what = `connection: ${(error as Error).cause ?? (error as Error).message}`;
            count(figures.errors, 'connection cut');
            figures.failures.push({ at, what: `${kind} ${name}: ${what}` });
            continue;
          }
          const text = await response.text().catch(() => '');
          if (response.status === 404 && kind === 'read') {
            // Without the token a replica may answer from before the insert: allowed.
            figures.notYetOnReplica++;
            continue;
          }
          if (response.status !== 200) {
            count(figures.errors, `HTTP ${response.status}`);
            figures.failures.push({
              at,
              what: `${kind} ${name}: ${response.status} ${text.slice(0, 200)}`,
            });
            continue;
          }
          if (kind === 'insert' || kind === 'patch') {
            mine.set(name, value);
            const written = response.headers.get('X-Read-After');
            if (written === null) figures.writesWithoutToken++;
            else token = written;
          } else if (kind === 'read with token') {
            const seen = Number(
              (JSON.parse(text) as { data: { description: string } }).data.description.slice(1),
            );
            // Patches of a record are this worker's alone: a read after the last one sees it.
            if (seen < mine.get(name)!)
              figures.staleReads.push(`${name}: saw v${seen}, wrote v${mine.get(name)}`);
          }
        }
      };

      const started = Date.now();
      const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
      const at = (fraction: number): Promise<void> =>
        sleep(Math.max(0, started + fraction * SECONDS * 1000 - Date.now()));

      // An instance dies (SIGKILL) under load and comes back on its port.
      await at(0.2);
      const killedAt = Date.now();
      instances[1]!.child.kill('SIGKILL');
      await instances[1]!.stop(1_000);
      await sleep(2_000);
      await startInstance(1);
      // HAProxy takes it back after two good health checks.
      await sleep(1_000);
      killWindows.push([killedAt, Date.now()]);

      // The replica stops and starts again.
      await at(0.5);
      replica.stop('fast');
      await at(0.7);
      replica.start(replicaSettings);

      await at(1);
      stop = true;
      await load;

      // The subscriber catches up with the log, then stops.
      const client = new pg.Client({ connectionString: primary.url });
      await client.connect();
      let lastSeq = 0;
      try {
        lastSeq = Number(
          (await client.query(`SELECT "last" FROM "${SCHEMA}"."_eg_event_seq"`)).rows[0].last,
        );
        const deadline = Date.now() + 30_000;
        while (subscribers.some((s) => s.seqs.at(-1) !== lastSeq) && Date.now() < deadline)
          await sleep(100);
        await Promise.all(subscribers.map((s) => s.stop()));

        // Every acknowledged write is in the primary.
        const stored = new Map(
          (
            await client.query<{ name: string; description: string }>(
              `SELECT "name", "description" FROM "${SCHEMA}"."category"`,
            )
          ).rows.map((row) => [row.name, Number(row.description.slice(1))]),
        );
        const lost: string[] = [];
        let writesChecked = 0;
        for (const mine of acknowledged) {
          for (const [name, value] of mine) {
            writesChecked++;
            const found = stored.get(name);
            if (found === undefined || found < value) lost.push(`${name}: v${value} → ${found}`);
          }
        }
        // Reads were served by the replica (its own statistics of the table).
        const onReplica = new pg.Client({ connectionString: replica.url });
        await onReplica.connect();
        const replicaScans = Number(
          (
            await onReplica.query<{ n: string }>(
              `SELECT COALESCE(idx_scan, 0) + COALESCE(seq_scan, 0) AS n FROM pg_stat_user_tables
              WHERE schemaname = $1 AND relname = 'category'`,
              [SCHEMA],
            )
          ).rows[0]?.n ?? 0,
        );
        await onReplica.end();

        const outsideKill = figures.failures.filter((f) => !duringKill(f.at)).map((f) => f.what);
        const requests = Object.values(figures.requests).reduce((a, b) => a + b, 0);
        const errors = Object.values(figures.errors).reduce((a, b) => a + b, 0);
        console.log(
          [
            `topology figures after ${SECONDS} s of load (${WORKERS} workers through HAProxy):`,
            `  requests: ${requests} (${Object.entries(figures.requests)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`,
            `  errors: ${errors} (${
              Object.entries(figures.errors)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ') || 'none'
            }), outside the instance kill: ${outsideKill.length}`,
            `  writes checked in the primary: ${writesChecked}, lost: ${lost.length}`,
            `  reads without a token that the replica could not answer yet (404): ${figures.notYetOnReplica}`,
            `  writes answered without X-Read-After: ${figures.writesWithoutToken}; stale reads with a token: ${figures.staleReads.length}`,
            `  events checked: ${subscribers.map((s) => s.seqs.length).join(' + ')} of ${lastSeq} per subscriber (reconnects: ${subscribers.map((s) => s.reconnects).join(', ')})`,
            `  scans of the table on the replica: ${replicaScans}`,
          ].join('\n'),
        );

        expect(lost).toEqual([]);
        expect(outsideKill).toEqual([]);
        expect(figures.writesWithoutToken).toBe(0);
        expect(figures.staleReads).toEqual([]);
        for (const subscriber of subscribers) {
          expect(subscriber.unexpected).toEqual([]);
          expect(subscriber.seqs).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
        }
        // The one on the killed instance resumed elsewhere.
        expect(subscribers.some((s) => s.reconnects > 0)).toBe(true);
        expect(writesChecked).toBeGreaterThan(0);
        expect(replicaScans).toBeGreaterThan(0);
      } finally {
        await client.end();
      }
    },
    240_000 + SECONDS * 1000,
  );
});
