/**
 * The PostgreSQL outbox (SPEC §9): `_eg_events`, one row per committed change, written by the
 * same statement (or transaction) as the change.
 *
 * Seqs come from a one-row counter, `_eg_event_seq`, that every write with events updates: the
 * row lock it takes is held until the write commits, so the next write reads the counter only
 * after this one is visible. Seq order is therefore commit order, with no gaps, and a reader that
 * has seen seq n has seen every seq below it. (A SEQUENCE or IDENTITY would hand out numbers at
 * insert time: a write given 7 could commit after one given 8, and a reader at 8 would skip it.)
 * The cost: writes of the whole service commit one after another from the moment they take the
 * counter (always last, after their record and `_eg_activity` rows, so no deadlock) to their
 * commit, group commit cannot batch their WAL flushes, and `EVENTS=off` leaves the counter alone.
 *
 * Instances wake each other with NOTIFY and LISTEN (notifications.ts) and then read the outbox
 * from their last seq.
 */
import type { ChangeBounds, ChangeOp, StoredChange } from '../driver.js';
import type { ChangeDraft } from '../events/change.js';
import { EVENT_SEQ_TABLE, EVENTS_TABLE, qualify, shortHash } from './schema.js';

/** Where the outbox lives and how its statements read. */
export class PostgresOutbox {
  readonly eventsTable: string;
  readonly seqTable: string;
  /** The statement that appends changes on its own (a delete, inside its transaction). */
  readonly appendSql: string;
  readonly readSql: string;
  readonly boundsSql: string;
  readonly trimSql: string;

  constructor(readonly schema: string | undefined) {
    this.eventsTable = qualify(schema, EVENTS_TABLE);
    this.seqTable = qualify(schema, EVENT_SEQ_TABLE);
    this.appendSql = `WITH ${this.appendCtes({ ids: '$1', ops: '$2', records: '$3', entity: '$4', now: '$5' })}
SELECT min("seq") FROM "_eg_events"`;
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
   * Two CTEs that append changes once `guard` (a CTE with a row only when the write happened)
   * has a row: `"_eg_seq"` takes the next seqs from the counter, `"_eg_events"` inserts the rows
   * in the order of the arrays and returns their seqs. Parameters: TEXT[] of ids, ops and
   * records (JSON text), the entity and the time.
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
    const count = `cardinality(${p.ids}::TEXT[])`;
    return `"_eg_seq" AS (
  UPDATE ${this.seqTable} SET "last" = "last" + ${count}
   WHERE "id" = 1${guard === undefined ? '' : ` AND EXISTS (SELECT 1 FROM ${guard})`}
  RETURNING "last"
), "_eg_events" AS (
  INSERT INTO ${this.eventsTable} ("seq", "entity", "record_id", "op", "record", "time_ms")
  SELECT "_eg_seq"."last" - ${count} + "_eg_e"."n", ${p.entity}::TEXT, "_eg_e"."id", "_eg_e"."op", "_eg_e"."record", ${p.now}::BIGINT
    FROM "_eg_seq", unnest(${p.ids}::TEXT[], ${p.ops}::TEXT[], ${p.records}::TEXT[]) WITH ORDINALITY AS "_eg_e"("id", "op", "record", "n")
  RETURNING "seq"
)`;
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
    ];
  }

  /** The parameters of `appendCtes` for `drafts` (all of one entity) at `now`. */
  static params(drafts: readonly ChangeDraft[]): [string[], string[], string[]] {
    return [
      drafts.map((draft) => draft.id),
      drafts.map((draft) => draft.op),
      drafts.map((draft) => draft.record),
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
