/**
 * The PostgreSQL outbox (SPEC §9), in two tables:
 *
 * - `_eg_event_queue`: what writes append, in the same statement (or transaction) as the change.
 *   A row gets an `arrival` number from an identity column (no lock; numbers are handed out at
 *   insert time, so they are neither gapless nor in commit order) and the writing transaction's
 *   id (`xact`, `txid_current()`).
 * - `_eg_events`: the log the readers see, `seq` gapless and in commit order. Rows get there from
 *   the queue by the relay: one transaction that locks the one row of `_eg_event_seq`, takes the
 *   committed queue rows (whole transactions only: a snapshot shows all of a transaction's rows or
 *   none), numbers them from the counter on — transactions in the order of their first arrival,
 *   the rows of one transaction together in their order — moves them to `_eg_events` and raises
 *   the counter.
 *
 * Why this order is right: relays run one at a time (the counter's row lock), so seqs become
 * visible in seq order and a reader that has seen seq n has seen every seq below it; a change is
 * numbered only once its transaction committed, so none is visible before that and none is
 * skipped; and a write that depends on another one (it waited for that one's row lock or unique
 * key) appends after that one committed, so it arrives later and gets the higher seq. Writers
 * never wait for each other: the counter row is locked by relays only, for a moment, and a relay
 * moves what many writes appended.
 *
 * Databases of the previous layout (writers took their seqs from the counter, holding its lock
 * until their commit) keep working: their `_eg_events` is the log, the queue is created beside
 * it, and a writer of the previous release still takes the counter's lock, so it and the relays
 * never hand out a seq twice.
 *
 * Instances wake each other with NOTIFY and LISTEN (notifications.ts) and then read the log from
 * their last seq.
 */
import type pg from 'pg';
import type { ChangeBounds, ChangeOp, StoredChange } from '../driver.js';
import type { ChangeDraft } from '../events/change.js';
import { EVENT_QUEUE_TABLE, EVENT_SEQ_TABLE, EVENTS_TABLE, qualify, shortHash } from './schema.js';

/** Transactions a relay moves at most at once (a backlog takes several relays). */
const RELAY_TRANSACTIONS = 1000;
/**
 * An own change that no relay of this process returned is looked for in the log after each relay,
 * and by a relay of its own every `LOOKUP_RETRY_MS` while any waits; it is given up only after
 * `LOOKUP_GIVE_UP_MS` (its changes are numbered by then unless the database is unreachable).
 */
const LOOKUP_RETRY_MS = 200;
const LOOKUP_GIVE_UP_MS = 60_000;

type Row = unknown[];

/** Where the outbox lives and how its statements read. */
export class PostgresOutbox {
  readonly eventsTable: string;
  readonly queueTable: string;
  readonly seqTable: string;
  /** The statement that appends changes on its own (a delete, inside its transaction). */
  readonly appendSql: string;
  readonly readSql: string;
  readonly boundsSql: string;
  readonly trimSql: string;
  /** Whether the queue holds rows (a relay has something to do). */
  readonly pendingSql: string;
  /** One relay: a transaction of four statements, sent as one simple query (no parameters). */
  readonly relaySql: string;
  /** The changes of the given arrivals (`$2`, BIGINT[]) with seqs above `$1`. */
  readonly lookupSql: string;

  constructor(readonly schema: string | undefined) {
    this.eventsTable = qualify(schema, EVENTS_TABLE);
    this.queueTable = qualify(schema, EVENT_QUEUE_TABLE);
    this.seqTable = qualify(schema, EVENT_SEQ_TABLE);
    this.appendSql = `WITH ${this.appendCtes({ ids: '$1', ops: '$2', records: '$3', entity: '$4', now: '$5' })}
SELECT string_agg("arrival"::TEXT, ',' ORDER BY "arrival") FROM "_eg_events"`;
    const columns = `"seq", "entity", "record_id", "op", "record", "time_ms"`;
    this.readSql = `SELECT ${columns} FROM ${this.eventsTable}
 WHERE "seq" > $1 ORDER BY "seq" LIMIT $2`;
    this.boundsSql = `SELECT (SELECT "last" FROM ${this.seqTable} WHERE "id" = 1), (SELECT min("seq") FROM ${this.eventsTable})`;
    // A prefix of the log, never a row in the middle (seqs stay gapless for the readers), and
    // never the newest row, as in SQLite.
    this.trimSql = `DELETE FROM ${this.eventsTable} WHERE "seq" < COALESCE(
  (SELECT "seq" FROM ${this.eventsTable} WHERE "time_ms" >= $1 ORDER BY "seq" LIMIT 1),
  (SELECT max("seq") FROM ${this.eventsTable}))`;
    this.pendingSql = `SELECT EXISTS (SELECT 1 FROM ${this.queueTable})`;
    // The lock comes first, in a statement of its own: the move's snapshot is then taken after
    // the previous relay committed, so it sees neither that relay's rows nor its old counter.
    this.relaySql = `BEGIN;
SELECT "last" FROM ${this.seqTable} WHERE "id" = 1 FOR UPDATE;
WITH "_eg_x" AS (
  SELECT "xact", min("arrival") AS "first" FROM ${this.queueTable}
   GROUP BY "xact" ORDER BY "first" LIMIT ${RELAY_TRANSACTIONS}
), "_eg_moved" AS (
  DELETE FROM ${this.queueTable} AS "_eg_q" USING "_eg_x" WHERE "_eg_q"."xact" = "_eg_x"."xact"
  RETURNING "_eg_q"."arrival", "_eg_q"."xact", "_eg_x"."first", "_eg_q"."entity", "_eg_q"."record_id",
    "_eg_q"."op", "_eg_q"."record", "_eg_q"."time_ms"
), "_eg_numbered" AS (
  SELECT "_eg_moved".*, (SELECT "last" FROM ${this.seqTable} WHERE "id" = 1)
    + row_number() OVER (ORDER BY "first", "arrival") AS "seq"
    FROM "_eg_moved"
), "_eg_logged" AS (
  INSERT INTO ${this.eventsTable} (${columns}, "arrival")
  SELECT ${columns}, "arrival" FROM "_eg_numbered"
), "_eg_counted" AS (
  UPDATE ${this.seqTable} SET "last" = "last" + (SELECT count(*) FROM "_eg_moved")
   WHERE "id" = 1 AND EXISTS (SELECT 1 FROM "_eg_moved")
)
SELECT "seq", "arrival", "xact" FROM "_eg_numbered" ORDER BY "seq";
COMMIT`;
    this.lookupSql = `SELECT "seq", "arrival" FROM ${this.eventsTable}
 WHERE "seq" > $1 AND "arrival" = ANY($2::BIGINT[]) ORDER BY "seq"`;
  }

  /** The channel of the notifications, per schema (`effectiveSchema`: the one the tables are in). */
  static channel(effectiveSchema: string): string {
    return `eg_events_${shortHash(effectiveSchema, 16)}`;
  }

  /**
   * A CTE `"_eg_events"` that appends changes to the queue once `guard` (a CTE with a row only
   * when the write happened) has a row, in the order of the arrays, and returns their arrivals.
   * Parameters: TEXT[] of ids and ops, the records as one JSON array (the text of each element is
   * kept as it is), the entity and the time.
   */
  appendCtes(
    p: {
      readonly ids: string;
      readonly ops: string;
      readonly records: string;
      readonly entity: string;
      readonly now: string;
    },
    guard?: string,
  ): string {
    return `"_eg_events" AS (
  INSERT INTO ${this.queueTable} ("entity", "record_id", "op", "record", "time_ms")
  SELECT ${p.entity}::TEXT, "_eg_e"."id", "_eg_e"."op", "_eg_e"."record"::TEXT, ${p.now}::BIGINT
    FROM ROWS FROM (unnest(${p.ids}::TEXT[]), unnest(${p.ops}::TEXT[]), json_array_elements(${p.records}::JSON))
      WITH ORDINALITY AS "_eg_e"("id", "op", "record", "n")${
        guard === undefined ? '' : `\n   WHERE EXISTS (SELECT 1 FROM ${guard})`
      }
   ORDER BY "_eg_e"."n"
  RETURNING "arrival"
)`;
  }

  /**
   * The DDL of the outbox, the queue and the counter (idempotent). `hasArrival`: whether
   * `_eg_events` exists with its `arrival` column already (a log of the previous layout lacks it;
   * the column is added without rewriting the table).
   */
  createSql(hasArrival: boolean): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS ${this.eventsTable} (
  "seq" BIGINT NOT NULL PRIMARY KEY,
  "entity" TEXT COLLATE "C" NOT NULL,
  "record_id" TEXT COLLATE "C" NOT NULL,
  "op" TEXT NOT NULL,
  "record" TEXT NOT NULL,
  "time_ms" BIGINT NOT NULL,
  "arrival" BIGINT
)`,
      ...(hasArrival
        ? []
        : [`ALTER TABLE ${this.eventsTable} ADD COLUMN IF NOT EXISTS "arrival" BIGINT`]),
      `CREATE TABLE IF NOT EXISTS ${this.queueTable} (
  "arrival" BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  "xact" BIGINT NOT NULL DEFAULT txid_current(),
  "entity" TEXT COLLATE "C" NOT NULL,
  "record_id" TEXT COLLATE "C" NOT NULL,
  "op" TEXT NOT NULL,
  "record" TEXT NOT NULL,
  "time_ms" BIGINT NOT NULL
)`,
      `CREATE TABLE IF NOT EXISTS ${this.seqTable} (
  "id" INTEGER NOT NULL PRIMARY KEY CHECK ("id" = 1),
  "last" BIGINT NOT NULL
)`,
      // A counter created next to an existing log (its rows kept) goes on after the log's last seq.
      `INSERT INTO ${this.seqTable} ("id", "last")
SELECT 1, COALESCE((SELECT max("seq") FROM ${this.eventsTable}), 0)
ON CONFLICT ("id") DO NOTHING`,
    ];
  }

  /**
   * The parameters of `appendCtes` for `drafts` (all of one entity). The records are JSON texts
   * already: joined into one array they go without the escaping of an array parameter.
   */
  static params(drafts: readonly ChangeDraft[]): [string[], string[], string] {
    return [
      drafts.map((draft) => draft.id),
      drafts.map((draft) => draft.op),
      `[${drafts.map((draft) => draft.record).join(',')}]`,
    ];
  }
}

/** A row of `readSql` as a stored change. */
export function toChange(row: readonly unknown[]): StoredChange {
  return {
    seq: Number(row[0]),
    entity: row[1] as string,
    id: row[2] as string,
    op: row[3] as ChangeOp,
    record: row[4] as string,
    timeUnix: Number(row[5]),
  };
}

/** The row of `boundsSql` as bounds. */
export function toBounds(row: readonly unknown[] | undefined): ChangeBounds {
  const last = row?.[0] === null || row?.[0] === undefined ? 0 : Number(row[0]);
  const first = row?.[1] === null || row?.[1] === undefined ? last + 1 : Number(row[1]);
  return { last, first };
}

/** The arrivals a write's statement returned (`string_agg` of them, in order), as numbers. */
export function toArrivals(value: unknown): number[] {
  if (typeof value !== 'string' || value === '') return [];
  return value.split(',').map(Number);
}

/** What the relay needs of the driver. */
export interface RelayHost {
  /** Runs a statement on a pooled connection. */
  query(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult>;
  /** Runs the relay's simple query on a pooled connection, rolling back when it fails. */
  relay(text: string): Promise<Row[]>;
  /**
   * Tells the watchers of this process's own changes, in seq order, once their seqs are known;
   * `lastSeq`: the last seq this relay moved (to announce to the other instances), none after a
   * look-up.
   */
  moved(own: readonly StoredChange[], lastSeq: number | undefined): void;
}

/** An own change waiting for its seq. */
interface Waiting {
  readonly draft: ChangeDraft;
  /** The write's time. */
  readonly time: number;
  /** A seq below the one the change will get (the counter some time before its commit). */
  readonly above: number;
  /** The number of the last relay that started before the commit. */
  readonly relay: number;
  /** When the commit was heard (`Date.now()`). */
  readonly since: number;
}

/**
 * The relay of one driver: moves committed queue rows to the log (see above), after this
 * process's writes and whenever a reader needs the log complete. At most one relay runs at a time
 * per process; callers during one share the next.
 */
export class OutboxRelay {
  private running: Promise<number> | undefined;
  private next: Promise<number> | undefined;
  /** The highest counter value seen; below every seq still to be handed out. */
  private seen = 0;
  /** This process's committed changes, by arrival, whose seqs it has not learnt yet. */
  private readonly waiting = new Map<number, Waiting>();
  /** Relays started so far. */
  private relays = 0;
  /** Whether this process queued changes since the last relay started (no need to look first). */
  private queued = false;
  /** The relay that looks for own changes still waiting (see `LOOKUP_RETRY_MS`). */
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly outbox: PostgresOutbox,
    private readonly host: RelayHost,
  ) {}

  /**
   * A seq below every seq a write that starts now can get: take it before the write, and pass it
   * to `committed` after. (Taken at the commit instead, it could already be above the write's own
   * seq: another process's relay may number the change, and this process observe a later seq,
   * before the commit's answer is handled.)
   */
  mark(): number {
    return this.seen;
  }

  /**
   * Notes that this process committed `drafts` at `time`, appended as `arrivals` (in the same
   * order), and relays them soon; `above` is the `mark()` taken before the write.
   */
  committed(
    arrivals: readonly number[],
    drafts: readonly ChangeDraft[],
    time: number,
    above: number,
  ): void {
    if (arrivals.length === 0) return;
    const relay = this.relays;
    for (let i = 0; i < arrivals.length && i < drafts.length; i++)
      this.waiting.set(arrivals[i]!, { draft: drafts[i]!, time, above, relay, since: Date.now() });
    this.queued = true;
    // A failure is retried by the next write or read (and the hub polls).
    this.relay().catch(() => undefined);
  }

  /** A relay that starts after this call (the running one may have missed recent commits). */
  relay(): Promise<number> {
    if (this.running === undefined) {
      const run = this.run().finally(() => {
        if (this.running === run) this.running = undefined;
      });
      this.running = run;
      return run;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.relay();
      });
    return this.next;
  }

  /** No more look-up relays of its own (the driver closes). */
  stop(): void {
    this.stopped = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
  }

  /** Resolves once no relay runs or waits (whether they succeeded or not). */
  async idle(): Promise<void> {
    while (this.running !== undefined || this.next !== undefined)
      await (this.next ?? this.running)?.catch(() => undefined);
  }

  /** Raises the counter value known to be below every future seq. */
  observe(last: number): void {
    if (last > this.seen) this.seen = last;
  }

  /** Moves what the queue holds; resolves with the number of changes moved. */
  private async run(): Promise<number> {
    const relay = ++this.relays;
    let moved = 0;
    // After own commits the queue holds rows (unless another process's relay took them, which
    // costs an empty relay); otherwise a look first, so an idle relay takes no lock.
    let look = !this.queued;
    this.queued = false;
    for (; ; look = true) {
      if (look) {
        const pending = await this.host.query({
          name: `eg_${shortHash(this.outbox.pendingSql, 24)}`,
          text: this.outbox.pendingSql,
          rowMode: 'array',
        });
        if ((pending.rows[0] as Row | undefined)?.[0] !== true) break;
      }
      const rows = await this.host.relay(this.outbox.relaySql);
      if (rows.length === 0) break;
      moved += rows.length;
      const lastSeq = Number(rows.at(-1)![0]);
      this.observe(lastSeq);
      this.host.moved(this.own(rows), lastSeq);
      const transactions = new Set(rows.map((row) => String(row[2]))).size;
      if (transactions < RELAY_TRANSACTIONS) break;
    }
    if (this.waiting.size > 0) await this.lookUp(relay);
    if (this.waiting.size > 0 && this.retry === undefined && !this.stopped) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.relay().catch(() => undefined);
      }, LOOKUP_RETRY_MS);
      this.retry.unref();
    }
    return moved;
  }

  /**
   * Own changes that another process's relay moved: their seqs from the log. Each is looked for
   * until found (it may still be queued behind a backlog), for `LOOKUP_GIVE_UP_MS` at most: then
   * only the `afterCommit` call of that change is lost, never the change.
   */
  private async lookUp(relay: number): Promise<void> {
    // Changes committed while this relay ran are the next one's.
    const looked = [...this.waiting].filter(([, waiting]) => waiting.relay < relay);
    if (looked.length === 0) return;
    const arrivals = looked.map(([arrival]) => arrival);
    const above = looked.reduce((min, [, waiting]) => Math.min(min, waiting.above), Infinity);
    const result = await this.host.query({
      name: `eg_${shortHash(this.outbox.lookupSql, 24)}`,
      text: this.outbox.lookupSql,
      values: [above, arrivals],
      rowMode: 'array',
    });
    const own = this.own(result.rows as Row[]);
    const giveUp = Date.now() - LOOKUP_GIVE_UP_MS;
    for (const [arrival, waiting] of looked) {
      if (this.waiting.has(arrival) && waiting.since < giveUp) this.waiting.delete(arrival);
    }
    if (own.length > 0) this.host.moved(own, undefined);
  }

  /** The own changes among `rows` (seq, arrival, … in seq order), no longer waiting. */
  private own(rows: readonly Row[]): StoredChange[] {
    const own: StoredChange[] = [];
    if (this.waiting.size === 0) return own;
    for (const row of rows) {
      const arrival = Number(row[1]);
      const waiting = this.waiting.get(arrival);
      if (waiting === undefined) continue;
      this.waiting.delete(arrival);
      own.push({ ...waiting.draft, seq: Number(row[0]), timeUnix: waiting.time });
    }
    return own;
  }
}
