/**
 * Read replicas of the PostgreSQL driver (SPEC §15): `DATABASE_READ_URL` names one or several
 * streaming replicas (comma-separated); reads by key, lists and counts go to them, writes and the
 * change events to the primary.
 *
 * - Health: every `HEALTH_INTERVAL_MS` each replica is asked for its replayed WAL position and its
 *   lag (the age of the last replayed transaction while it has WAL left to replay; 0 when it has
 *   replayed all it received). A replica that does not answer, or lags by more than
 *   `MAX_REPLICA_LAG_MS`, is skipped until a check finds it well again.
 * - Read-your-writes: a write's answer carries the primary's WAL position after its commit (one
 *   `pg_current_wal_lsn()` per group of writes that committed together). A read sending it back is
 *   answered by a healthy replica that has replayed it; if none has, the read waits up to
 *   `READ_AFTER_WAIT_MS` (the replicas' positions polled every few milliseconds, one query per
 *   replica for all waiting reads) and then goes to the primary.
 * - Reads of a request that may write (PUT, PATCH, DELETE, POST) go to the primary: the record a
 *   PATCH builds on must be the one its version check meets.
 * - No request fails because of a replica: a read that fails on one for a connection-level reason,
 *   or is cancelled by a recovery conflict, marks it down and runs on the primary.
 */
import pg from 'pg';
import type { Environment } from '../env.js';
import { laterToken, readAfterContext, tokenValue } from '../read-after.js';
import { isUnavailable, sqlState } from './errors.js';
import {
  PostgresConfigError,
  isPostgresUrl,
  parsePostgresUrl,
  type PostgresSettings,
} from './options.js';
import { poolConfigOf, runStatement } from './pool.js';
import { poolerConfig } from './topology.js';

/** How the driver routes reads; `undefined` members take their defaults. */
export interface ReplicaSettings {
  /** The replicas' URLs (the grammar of `DATABASE_URL`). */
  readonly urls: readonly string[];
  /** How long a read with a token waits for a replica to replay it (ms); default 500. */
  readonly readAfterWaitMs: number;
  /** A replica lagging by more than this (ms) is skipped; default 10 000. */
  readonly maxLagMs: number;
}

export const REPLICA_DEFAULTS = { readAfterWaitMs: 500, maxLagMs: 10_000 } as const;
/** How often each replica's health and lag are checked. */
const HEALTH_INTERVAL_MS = 1_000;
/** How often the replicas' positions are polled while a read waits for one. */
const WAIT_POLL_MS = 5;

/** The replica settings in `env` (`DATABASE_READ_URL` & co.), or undefined without replicas. */
export function replicaSettingsFromEnv(env: Environment): ReplicaSettings | undefined {
  const text = env['DATABASE_READ_URL']?.trim() ?? '';
  if (text === '') return undefined;
  const urls = text
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  for (const url of urls) {
    if (!isPostgresUrl(url))
      throw new PostgresConfigError(
        'DATABASE_READ_URL must be one or more postgres:// URLs of read replicas, separated by commas',
      );
  }
  const integer = (name: string, fallback: number): number => {
    const value = env[name]?.trim() ?? '';
    if (value === '') return fallback;
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
      throw new PostgresConfigError(
        `${name} must be an integer ≥ 0 (milliseconds), got "${value}"`,
      );
    return Number(value);
  };
  return {
    urls,
    readAfterWaitMs: integer('READ_AFTER_WAIT_MS', REPLICA_DEFAULTS.readAfterWaitMs),
    maxLagMs: integer('MAX_REPLICA_LAG_MS', REPLICA_DEFAULTS.maxLagMs),
  };
}

/** One replica: its pool and what the last check found. */
class Replica {
  readonly pool: pg.Pool;
  healthy = false;
  /** The last replayed position seen, as a number. */
  replayed = 0n;
  lagMs = Number.POSITIVE_INFINITY;
  checking = false;

  constructor(
    readonly settings: PostgresSettings,
    config: pg.PoolConfig,
  ) {
    this.pool = new pg.Pool(config);
    this.pool.on('error', () => undefined);
  }
}

/** Statistics of the routing (diagnostics, tests, the topology test's figures). */
export interface ReplicaStats {
  replicaReads: number;
  primaryReads: number;
  /** Reads that went to the primary because no replica had replayed their token in time. */
  readAfterFallbacks: number;
  /** Reads that failed on a replica and ran again on the primary. */
  replicaFailures: number;
}

export class ReplicaRouter {
  private readonly replicas: Replica[];
  private next = 0;
  private healthTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<{ target: bigint; done: (replica?: Replica) => void }>();
  private lsnRunning: Promise<string | undefined> | undefined;
  private lsnQueued: Promise<string | undefined> | undefined;
  private closed = false;
  readonly stats: ReplicaStats = {
    replicaReads: 0,
    primaryReads: 0,
    readAfterFallbacks: 0,
    replicaFailures: 0,
  };

  constructor(
    private readonly primary: pg.Pool,
    readonly settings: ReplicaSettings,
    base: PostgresSettings,
    env: Environment,
    /** Behind a transaction pooler (`DATABASE_LISTEN_URL` set): the replicas may be pooled too. */
    pooled = false,
  ) {
    this.replicas = settings.urls.map((url) => {
      // The replica has the primary's tables: its schema (and the driver's pool settings) unless
      // its URL says otherwise.
      let own: PostgresSettings;
      try {
        own = parsePostgresUrl(url, env, base.schema === undefined ? {} : { schema: base.schema });
      } catch (error) {
        throw new PostgresConfigError(`DATABASE_READ_URL: ${(error as Error).message}`);
      }
      const config = poolConfigOf(own, undefined);
      return new Replica(own, pooled ? poolerConfig(config) : config);
    });
  }

  /** Starts the health checks (once, however often the driver is opened); resolves after a round. */
  async start(): Promise<void> {
    await this.checkAll();
    if (this.healthTimer !== undefined || this.closed) return;
    this.healthTimer = setInterval(() => void this.checkAll(), HEALTH_INTERVAL_MS);
    this.healthTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.healthTimer !== undefined) clearInterval(this.healthTimer);
    if (this.pollTimer !== undefined) clearInterval(this.pollTimer);
    for (const waiter of this.waiters) waiter.done(undefined);
    this.waiters.clear();
    await Promise.all(this.replicas.map((replica) => replica.pool.end().catch(() => undefined)));
  }

  /** The replicas as the last checks saw them (diagnostics). */
  describe(): { host: string; healthy: boolean; lagMs: number }[] {
    return this.replicas.map((r) => ({
      host: `${r.settings.host ?? 'localhost'}:${r.settings.port ?? 5432}`,
      healthy: r.healthy,
      lagMs: r.lagMs,
    }));
  }

  /**
   * Runs a read: on a healthy replica (one that has replayed the request's token, waiting for one
   * up to `readAfterWaitMs`), else on the primary; again on the primary when the replica fails.
   */
  async read(config: pg.QueryConfig | pg.QueryArrayConfig): Promise<pg.QueryResult> {
    const context = readAfterContext();
    const requested = context?.requested;
    const target = requested === undefined ? undefined : tokenValue(requested);
    const replica = context?.primary === true ? undefined : await this.pick(target);
    if (replica !== undefined) {
      try {
        const result = await runStatement(replica.pool, config);
        this.stats.replicaReads++;
        return result;
      } catch (error) {
        if (!this.replicaFault(error)) throw error;
        replica.healthy = false;
        this.stats.replicaFailures++;
      }
    }
    this.stats.primaryReads++;
    return await runStatement(this.primary, config);
  }

  /**
   * Notes in the request's context (if any) the primary's position after a write that has
   * committed, for the answer's `X-Read-After`.
   */
  async wrote(): Promise<void> {
    const context = readAfterContext();
    if (context === undefined) return;
    const lsn = await this.currentLsn();
    if (lsn !== undefined) context.written = laterToken(context.written, lsn);
  }

  // ---------------------------------------------------------------------------------------------

  /** Errors of a replica (not of the read itself): it is away, or recovery cancelled the read. */
  private replicaFault(error: unknown): boolean {
    const state = sqlState(error);
    return isUnavailable(error) || state === '40001' || state === '57014' || state === '25006';
  }

  /** A healthy replica at or past `target`, round robin; undefined: use the primary. */
  private async pick(target: bigint | undefined): Promise<Replica | undefined> {
    const ready = this.ready(target);
    if (ready !== undefined || target === undefined) return ready;
    if (this.settings.readAfterWaitMs === 0 || !this.replicas.some((r) => r.healthy)) {
      this.stats.readAfterFallbacks++;
      return undefined;
    }
    const found = await new Promise<Replica | undefined>((resolve) => {
      const waiter = {
        target,
        done: (replica?: Replica) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(replica);
        },
      };
      const timer = setTimeout(() => waiter.done(undefined), this.settings.readAfterWaitMs);
      this.waiters.add(waiter);
      this.startPolling();
    });
    if (found === undefined) this.stats.readAfterFallbacks++;
    return found;
  }

  private ready(target: bigint | undefined): Replica | undefined {
    const count = this.replicas.length;
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count]!;
      if (!replica.healthy || replica.lagMs > this.settings.maxLagMs) continue;
      if (target !== undefined && replica.replayed < target) continue;
      this.next = (this.next + i + 1) % count;
      return replica;
    }
    return undefined;
  }

  /** Polls the replicas' positions while reads wait for one. */
  private startPolling(): void {
    if (this.pollTimer !== undefined) return;
    this.pollTimer = setInterval(() => {
      if (this.waiters.size === 0) {
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
        return;
      }
      for (const replica of this.replicas) if (replica.healthy) void this.check(replica, true);
    }, WAIT_POLL_MS);
    this.pollTimer.unref();
  }

  private settleWaiters(): void {
    for (const waiter of [...this.waiters]) {
      const replica = this.ready(waiter.target);
      if (replica !== undefined) waiter.done(replica);
    }
  }

  private async checkAll(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => this.check(replica, false)));
  }

  /** Asks a replica for its position and lag (`positionOnly`: the position, for waiting reads). */
  private async check(replica: Replica, positionOnly: boolean): Promise<void> {
    if (replica.checking || this.closed) return;
    replica.checking = true;
    try {
      const result = await replica.pool.query<{ lsn: string | null; lag: number | null }>({
        text: positionOnly
          ? `SELECT COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::TEXT AS "lsn", NULL::FLOAT8 AS "lag"`
          : `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::TEXT AS "lsn",
  CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
       ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) * 1000, 0) END::FLOAT8 AS "lag"`,
        query_timeout: 2_000,
      } as pg.QueryConfig);
      const row = result.rows[0];
      const lsn = row?.lsn === null || row?.lsn === undefined ? undefined : tokenValue(row.lsn);
      if (lsn !== undefined && lsn > replica.replayed) replica.replayed = lsn;
      if (!positionOnly) {
        replica.lagMs = Number(row?.lag ?? Number.POSITIVE_INFINITY);
        replica.healthy = lsn !== undefined;
      }
    } catch {
      replica.healthy = false;
      replica.lagMs = Number.POSITIVE_INFINITY;
    } finally {
      replica.checking = false;
    }
    this.settleWaiters();
  }

  /** The primary's current WAL position, from a query that began after the call. */
  private currentLsn(): Promise<string | undefined> {
    if (this.lsnRunning === undefined) {
      this.lsnRunning = this.fetchLsn().finally(() => {
        this.lsnRunning = undefined;
      });
      return this.lsnRunning;
    }
    this.lsnQueued ??= this.lsnRunning.then(() => {
      this.lsnQueued = undefined;
      return this.currentLsn();
    });
    return this.lsnQueued;
  }

  private async fetchLsn(): Promise<string | undefined> {
    try {
      const result = await this.primary.query<{ lsn: string }>(
        'SELECT pg_current_wal_lsn()::TEXT AS "lsn"',
      );
      return result.rows[0]?.lsn;
    } catch {
      return undefined; // the write committed; its answer goes without a token
    }
  }
}
