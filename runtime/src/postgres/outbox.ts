/**
 * The PostgreSQL outbox (SPEC §9): `_eg_events`, one row per committed change, numbered in commit
 * order without gaps.
 *
 * A write appends its changes to a queue, `_eg_pending`, in the same statement (or transaction)
 * as the change: an event exists if and only if the change committed. The queue's `arrival`
 * comes from a SEQUENCE, so writers take no lock for it and commit side by side (their WAL
 * flushes shared by group commit). After its commit a writer has the queue moved to the log by
 * a relay (relay.ts): one short transaction that locks the row of the counter `_eg_event_seq`,
 * deletes every committed queued row, numbers them from the counter in arrival order and inserts
 * them into `_eg_events`. Relays hold the lock until they commit, so they commit in seq order: a reader that has seen seq n has seen every seq below it, and a change is never numbered
 * before it committed. A relay takes everything committed before it began, so after its own relay
 * a writer's changes are numbered (by it or by an earlier relay, of this instance or another);
 * `arrival` is kept in the log, indexed, so a writer finds the seqs of its changes that another
 * instance's relay numbered.
 *
 * A list insert of many records (`NUMBERED_INSERT`, driver.ts) numbers its changes itself: its
 * statement takes the counter row's lock as its last step and writes the log directly
 * (`numberedCtes`), so relays, which take the same lock first, number after its commit. Every
 * answered write's changes have their seqs already (writes wait for their relay), so causal
 * order holds across both ways.
 *
 * Instances wake each other with NOTIFY and LISTEN (notifications.ts) and then read the outbox
 * from their last seq.
 */
import type { ChangeBounds, StoredChange } from '../driver.js';
import { opOfStored, storedOp, type ChangeDraft } from '../events/change.js';
import { EVENT_SEQ_TABLE, EVENTS_TABLE, PENDING_TABLE, qualify, shortHash } from './schema.js';

/** Where the outbox lives and how its statements read. */
export class PostgresOutbox {
  readonly eventsTable: string;
  readonly seqTable: string;
  readonly pendingTable: string;
  /** The statement that appends changes on its own (a delete, inside its transaction). */
  readonly appendSql: string;
  readonly readSql: string;
  readonly boundsSql: string;
  readonly trimSql: string;

  constructor(readonly schema: string | undefined) {
    this.eventsTable = qualify(schema, EVENTS_TABLE);
    this.seqTable = qualify(schema, EVENT_SEQ_TABLE);
    this.pendingTable = qualify(schema, PENDING_TABLE);
    this.appendSql = `WITH ${this.appendCtes({ ids: '$1', ops: '$2', records: '$3', entity: '$4', now: '$5' })}
${PostgresOutbox.ARRIVALS}`;
    this.readSql = `SELECT "seq", "entity", "record_id", "op", "record", "time_ms" FROM ${this.eventsTable}
 WHERE "seq" > $1 ORDER BY "seq" LIMIT $2`;
    this.boundsSql = `SELECT (SELECT "last" FROM ${this.seqTable} WHERE "id" = 1), (SELECT min("seq") FROM ${this.eventsTable})`;
    // A prefix of the log, never a row in the middle (seqs stay gapless for the readers), and
    // never the newest row, as in SQLite.
    this.trimSql = `DELETE FROM ${this.eventsTable} WHERE "seq" < COALESCE(
  (SELECT "seq" FROM ${this.eventsTable} WHERE "time_ms" >= $1 ORDER BY "seq" LIMIT 1),
  (SELECT max("seq") FROM ${this.eventsTable}))`;
  }

  /** The channel of the notifications, per schema (`effectiveSchema`: the one the tables are in). */
  static channel(effectiveSchema: string): string {
    return `eg_events_${shortHash(effectiveSchema, 16)}`;
  }

  /**
   * The select that ends a write statement with `appendCtes`: the arrivals of its changes, in the
   * order of the drafts, as the text of a BIGINT array (NULL when nothing was appended).
   */
  static readonly ARRIVALS =
    `SELECT array_agg("arrival" ORDER BY "arrival")::TEXT FROM "_eg_events"`;

  /**
   * A CTE that queues changes once `guard` (a CTE with a row only when the write happened) has a
   * row: `"_eg_events"` inserts the rows into `_eg_pending` in the order of the arrays (their
   * arrivals ascending in that order) and returns their arrivals. Parameters: JSON arrays of the
   * ids, the ops and the records (`params`), the entity and the time. A JSON array is made by
   * `JSON.stringify` and a join, far cheaper than pg's encoding of a TEXT[]; `json` (not `jsonb`)
   * keeps each record's text as written.
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
  INSERT INTO ${this.pendingTable} ("entity", "record_id", "op", "record", "time_ms")
  SELECT ${p.entity}::TEXT, "_eg_e"."id", "_eg_e"."op", "_eg_e"."record"::TEXT, ${p.now}::BIGINT
    FROM ROWS FROM (json_array_elements_text(${p.ids}::JSON), json_array_elements_text(${p.ops}::JSON), json_array_elements(${p.records}::JSON))
         WITH ORDINALITY AS "_eg_e"("id", "op", "record", "n")${
           guard === undefined ? '' : `\n   WHERE EXISTS (SELECT 1 FROM ${guard})`
         }
   ORDER BY "_eg_e"."n"
  RETURNING "arrival"
)`;
  }

  /**
   * A CTE `"_eg_events"` that queues the one change of a write whose version its history kept:
   * one row per row of `kept` (a CTE returning the kept `"version"`), its op text `op#version`
   * (`storedOp`). Parameters: the entity, the record's id, the op, the record and the time.
   */
  keptCte(
    p: {
      readonly entity: string;
      readonly id: string;
      readonly op: string;
      readonly record: string;
      readonly now: string;
    },
    kept: string,
  ): string {
    return `"_eg_events" AS (
  INSERT INTO ${this.pendingTable} ("entity", "record_id", "op", "record", "time_ms")
  SELECT ${p.entity}::TEXT, ${p.id}::TEXT, ${p.op}::TEXT || '#' || ${kept}."version", ${p.record}::TEXT, ${p.now}::BIGINT
    FROM ${kept}
  RETURNING "arrival"
)`;
  }

  /**
   * The relay (relay.ts), one simple-protocol query of literals only: with the counter row locked
   * (until its commit), moves every committed queued change to the log, numbered from the counter
   * in arrival order; its one result is the (arrival, seq) of each change moved. The lock is taken
   * by a statement of its own, so the move's snapshot is taken after it: it sees every relay and
   * every numbered list insert that held the lock before.
   */
  relaySql(): string {
    return `BEGIN;
SELECT "last" FROM ${this.seqTable} WHERE "id" = 1 FOR UPDATE;
WITH "_eg_moved" AS (
  DELETE FROM ${this.pendingTable} RETURNING *
), "_eg_numbered" AS (
  SELECT "_eg_moved".*, "_eg_c"."last" + row_number() OVER (ORDER BY "_eg_moved"."arrival") AS "seq"
    FROM "_eg_moved", ${this.seqTable} AS "_eg_c" WHERE "_eg_c"."id" = 1
), "_eg_log" AS (
  INSERT INTO ${this.eventsTable} ("seq", "entity", "record_id", "op", "record", "time_ms", "arrival")
  SELECT "seq", "entity", "record_id", "op", "record", "time_ms", "arrival" FROM "_eg_numbered"
  RETURNING "arrival", "seq"
), "_eg_count" AS (
  UPDATE ${this.seqTable} SET "last" = "last" + (SELECT count(*) FROM "_eg_moved")
   WHERE "id" = 1 AND EXISTS (SELECT 1 FROM "_eg_moved")
)
SELECT "arrival", "seq" FROM "_eg_log";
COMMIT`;
  }

  /**
   * CTEs that append changes numbered at once, for a list insert of many records (from
   * `NUMBERED_INSERT` on): `"_eg_seq"` takes the next seqs from the counter row, whose lock is then
   * held until the write commits, and `"_eg_events"` inserts the rows straight into the log in the
   * order of the arrays and returns their seqs (contiguous). A relay takes the same row lock first,
   * so it waits for such a write's commit and numbers after it; writes of one record, which queue,
   * never wait for it. This saves a big list its queue rows and their move: half the database's
   * work for its events. Parameters as for `appendCtes`.
   */
  numberedCtes(
    p: {
      readonly ids: string;
      readonly ops: string;
      readonly records: string;
      readonly entity: string;
      readonly now: string;
    },
    guard?: string,
  ): string {
    // The count is taken once, in the counter's row: computed for each event, it would parse the
    // whole array again for every element (a generic plan does not fold it), quadratic in the
    // number of events.
    const count = `json_array_length(${p.ids}::JSON)`;
    return `"_eg_seq" AS (
  UPDATE ${this.seqTable} SET "last" = "last" + ${count}
   WHERE "id" = 1${guard === undefined ? '' : ` AND EXISTS (SELECT 1 FROM ${guard})`}
  RETURNING "last", "last" - ${count} AS "before"
), "_eg_events" AS (
  INSERT INTO ${this.eventsTable} ("seq", "entity", "record_id", "op", "record", "time_ms")
  SELECT "_eg_seq"."before" + "_eg_e"."n", ${p.entity}::TEXT, "_eg_e"."id", "_eg_e"."op", "_eg_e"."record"::TEXT, ${p.now}::BIGINT
    FROM "_eg_seq", ROWS FROM (json_array_elements_text(${p.ids}::JSON), json_array_elements_text(${p.ops}::JSON), json_array_elements(${p.records}::JSON))
         WITH ORDINALITY AS "_eg_e"("id", "op", "record", "n")
  RETURNING "seq"
)`;
  }

  /** The select that ends a write statement with `numberedCtes`: the first seq it took. */
  static readonly FIRST_SEQ = `SELECT min("seq") FROM "_eg_events"`;

  /** The seqs of some arrivals already in the log (`$1`: BIGINT[]). */
  get lookupSql(): string {
    return `SELECT "arrival", "seq" FROM ${this.eventsTable} WHERE "arrival" IS NOT NULL AND "arrival" = ANY($1::BIGINT[])`;
  }

  /** The DDL of the outbox and its counter (idempotent). */
  createSql(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS ${this.eventsTable} (
  "seq" BIGINT NOT NULL PRIMARY KEY,
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
      `INSERT INTO ${this.seqTable} ("id", "last") VALUES (1, 0) ON CONFLICT ("id") DO NOTHING`,
      `CREATE TABLE IF NOT EXISTS ${this.pendingTable} (
  "arrival" BIGINT GENERATED ALWAYS AS IDENTITY,
  "entity" TEXT COLLATE "C" NOT NULL,
  "record_id" TEXT COLLATE "C" NOT NULL,
  "op" TEXT NOT NULL,
  "record" TEXT NOT NULL,
  "time_ms" BIGINT NOT NULL
)`,
      // Logs of earlier releases numbered changes in the writes themselves: no arrival there.
      `ALTER TABLE ${this.eventsTable} ADD COLUMN IF NOT EXISTS "arrival" BIGINT`,
      // Partial: the rows of earlier releases (no arrival) stay out of it.
      `CREATE INDEX IF NOT EXISTS "_eg_events_arrival" ON ${this.eventsTable} ("arrival") WHERE "arrival" IS NOT NULL`,
    ];
  }

  /** The parameters of `appendCtes` for `drafts` (all of one entity): three JSON arrays. */
  static params(drafts: readonly ChangeDraft[]): [string, string, string] {
    const ids = new Array<string>(drafts.length);
    const ops = new Array<string>(drafts.length);
    const records = new Array<string>(drafts.length);
    for (let i = 0; i < drafts.length; i++) {
      const draft = drafts[i]!;
      ids[i] = draft.id;
      ops[i] = storedOp(draft);
      records[i] = draft.record;
    }
    return [JSON.stringify(ids), JSON.stringify(ops), `[${records.join(',')}]`];
  }
}

/** A row of `readSql` as a stored change. */
export function toChange(row: readonly unknown[]): StoredChange {
  return {
    seq: Number(row[0]),
    entity: row[1] as string,
    id: row[2] as string,
    ...opOfStored(row[3] as string),
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
