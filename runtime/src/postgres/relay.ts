/**
 * The relay of the PostgreSQL outbox (outbox.ts): moves committed changes from the queue
 * `_eg_pending` to the log `_eg_events`, numbering them, and tells this instance's watchers
 * (`afterCommit` hooks, the event hub) of its own changes, each exactly once, with its seq.
 *
 * After its commit a write registers its changes by arrival and waits for a relay that begins
 * after that: relays of one instance run one at a time, and the writes that committed while one
 * ran share the next. A relay takes the counter row's lock, so every relay of the database that began
 * before it has committed; its DELETE then sees every queued change committed before it, so each
 * registered change is either moved by this relay (its seq in the relay's answer) or was moved by
 * an earlier one (its seq found in the log by arrival). Nothing is looked up by a bound that could
 * be wrong, and nothing is given up: a change whose seq could not be learnt (the storage went
 * away) stays registered and is resolved by a later relay, retried on a timer.
 *
 * A write's answer does not depend on its relay: a failed relay leaves the write committed and
 * its changes queued, numbered by the next relay of any instance. `sweep` lets readers relay what
 * an instance that died between its commit and its relay left behind.
 */
import type pg from 'pg';
import type { StoredChange } from '../driver.js';
import type { ChangeDraft } from '../events/change.js';
import type { PostgresOutbox } from './outbox.js';
import { withClient } from './pool.js';

/** A registered own change: its draft and write time. */
interface Own {
  readonly draft: ChangeDraft;
  readonly timeUnix: number;
}

/** Longest pause between retries of a failed relay while own changes wait. */
const MAX_RETRY_MS = 5_000;
/** Readers relay queued changes at most this often (`sweep`). */
const SWEEP_MS = 1_000;

export class OutboxRelay {
  private readonly own = new Map<number, Own>();
  private readonly sql: string;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = 100;
  private lastRun = 0;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly outbox: PostgresOutbox,
    /** Told of the own changes each relay resolved (in seq order), and of every relay that moved any. */
    private readonly onRelayed: (own: readonly StoredChange[], lastSeq: number | undefined) => void,
  ) {
    this.sql = outbox.relaySql();
  }

  /** How many own changes wait for their seq (diagnostics and tests). */
  get waiting(): number {
    return this.own.size;
  }

  /**
   * Registers the committed `drafts` of one write by their arrivals (the text of a BIGINT array,
   * in the drafts' order) and resolves once a relay that began after the call has finished. Never
   * rejects: the write has committed whatever happens to its relay.
   */
  async settle(drafts: readonly ChangeDraft[], arrivals: string, timeUnix: number): Promise<void> {
    const ids = parseArrivals(arrivals);
    if (ids.length !== drafts.length) {
      throw new Error(
        `PostgreSQL outbox: ${ids.length} arrivals for ${drafts.length} changes (${arrivals.slice(0, 80)})`,
      );
    }
    for (let i = 0; i < ids.length; i++) this.own.set(ids[i]!, { draft: drafts[i]!, timeUnix });
    await this.request();
  }

  /** Relays queued changes when no relay ran for a while (before a read of the log). */
  async sweep(): Promise<void> {
    if (Date.now() - this.lastRun < SWEEP_MS) return;
    await this.request();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** A relay that begins after this call: the next one when one is running. */
  private request(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.run().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.request();
    });
    return this.queued;
  }

  private async run(): Promise<void> {
    this.lastRun = Date.now();
    // The own changes committed before this relay began: all of them are numbered once it ends.
    const registered = [...this.own.keys()];
    try {
      const seqs = new Map<number, number>();
      let lastSeq: number | undefined;
      await withClient(this.pool, async (client) => {
        let results: pg.QueryResult[];
        try {
          results = (await client.query(this.sql)) as unknown as pg.QueryResult[];
        } catch (error) {
          // An error inside the transaction block leaves it aborted on this connection.
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
        for (const row of (results[2]?.rows ?? []) as { arrival: number; seq: number }[]) {
          seqs.set(Number(row.arrival), Number(row.seq));
          if (lastSeq === undefined || Number(row.seq) > lastSeq) lastSeq = Number(row.seq);
        }
        const elsewhere = registered.filter((arrival) => !seqs.has(arrival));
        if (elsewhere.length > 0) {
          const found = await client.query<{ arrival: number; seq: number }>({
            text: this.outbox.lookupSql,
            values: [elsewhere],
          });
          for (const row of found.rows) seqs.set(Number(row.arrival), Number(row.seq));
        }
      });
      const resolved: StoredChange[] = [];
      for (const arrival of registered) {
        const seq = seqs.get(arrival);
        const own = this.own.get(arrival);
        if (seq === undefined || own === undefined) continue;
        this.own.delete(arrival);
        const { entity, id, op, record } = own.draft;
        resolved.push({ seq, entity, id, op, record, timeUnix: own.timeUnix });
      }
      resolved.sort((a, b) => a.seq - b.seq);
      this.retryMs = 100;
      if (resolved.length > 0 || lastSeq !== undefined) this.onRelayed(resolved, lastSeq);
    } catch {
      // The storage is away: the changes stay queued and registered; a later relay resolves them.
    }
    if (this.own.size > 0 && registered.some((arrival) => this.own.has(arrival))) this.retry();
  }

  private retry(): void {
    if (this.stopped || this.retryTimer !== undefined) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(delay * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopped) void this.request();
    }, delay);
    this.retryTimer.unref();
  }
}

/** `{1,2,3}` (the text of a BIGINT array) as numbers. */
export function parseArrivals(text: string): number[] {
  const inner = text.trim().replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map(Number);
}
