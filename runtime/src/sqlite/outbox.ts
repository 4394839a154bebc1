/**
 * The SQLite outbox (SPEC §9): `_eg_events`, appended inside the write's own transaction. Writers
 * are serialised by SQLite's write lock, so the seqs a write gets — the ones after the largest in
 * the table — are its commit order, across every process on the file; a rolled-back write takes
 * its rows and its seqs with it, so seqs have no gaps. Trimming keeps the newest row, so the
 * largest seq never goes back and no seq is handed out twice (AUTOINCREMENT would also guarantee
 * that, at the price of another row written per write).
 *
 * A write of fewer than PACK_MIN changes stores one row per change, its seq the rowid. A larger
 * one (a bulk insert, a batch, a change by filter) stores them in *pack* rows of at most PACK_MAX
 * changes each: a pack's seq is its last change's, `record_id` its number of changes, `op`
 * PACK_OP, and `record` the changes (entity, id, stored op, record JSON each) as brotli-compressed JSON. Every change keeps
 * its own record exactly as it was committed; the pack only saves the per-row overhead and
 * compresses what the records share (docs/events.md, "How it works: the outbox").
 */
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type Database from 'better-sqlite3';
import type { ChangeBounds, StoredChange } from '../driver.js';
import { committedChanges, opOfStored, storedOp, type ChangeDraft } from '../events/change.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { EVENTS_TABLE } from './schema.js';

type Statement = Database.Statement<unknown[], unknown>;

/** The fewest changes of one write stored as pack rows. */
export const PACK_MIN = 16;
/**
 * The most changes in one pack row: a larger write takes several, in seq order, so that a reader
 * resuming inside one decompresses a bounded amount (about 100 KB of records) per page.
 */
export const PACK_MAX = 1_000;
/** The `op` of a pack row (no change op starts with `*`). */
export const PACK_OP = '*pack';
/** Brotli quality of a pack: about as fast as writing the rows it replaces (bench/outbox-size.mjs). */
const PACK_QUALITY = 4;

/** One change inside a pack: entity, id, stored op, record JSON. */
type PackedChange = [string, string, string, string];
type Row = [number, string, string, string, string | Buffer, number];

/** The DDL of the outbox. */
export function createEventsTableSql(): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(EVENTS_TABLE)} (\n` +
    `  seq INTEGER PRIMARY KEY,\n  entity TEXT NOT NULL,\n` +
    `  record_id TEXT NOT NULL,\n  op TEXT NOT NULL,\n  record TEXT NOT NULL,\n` +
    `  time_ms INTEGER NOT NULL\n)`
  );
}

/** The outbox's statements on one connection. */
export class SqliteOutbox {
  private readonly insert: Statement;
  private readonly insertPack: Statement;
  private readonly select: Statement;
  private readonly range: Statement;
  private readonly trimBefore: Statement;

  constructor(db: Database.Database) {
    const table = quoteIdentifier(EVENTS_TABLE);
    this.insert = db.prepare(
      `INSERT INTO ${table} (entity, record_id, op, record, time_ms) VALUES (?, ?, ?, ?, ?)`,
    );
    // The pack's seq is its last change's: the largest seq so far plus its number of changes.
    this.insertPack = db.prepare(
      `INSERT INTO ${table} (seq, entity, record_id, op, record, time_ms) ` +
        `VALUES (coalesce((SELECT max(seq) FROM ${table}), 0) + ?, '', ?, '${PACK_OP}', ?, ?) RETURNING seq`,
    );
    this.select = db
      .prepare(
        // No LIMIT: `read` stops stepping once it has enough changes (a bound LIMIT would have
        // SQLite plan the statement again at every read).
        `SELECT seq, entity, record_id, op, record, time_ms FROM ${table} WHERE seq > ? ORDER BY seq`,
      )
      .raw(true);
    // The last seq, and the first row's seq with its number of changes when it is a pack.
    this.range = db
      .prepare(
        `SELECT (SELECT max(seq) FROM ${table}), (SELECT seq FROM ${table} ORDER BY seq LIMIT 1), ` +
          `(SELECT CASE op WHEN '${PACK_OP}' THEN record_id END FROM ${table} ORDER BY seq LIMIT 1)`,
      )
      .raw(true);
    // A prefix of the log, never a row in the middle (seqs stay gapless for the readers), and
    // never the newest row.
    this.trimBefore = db.prepare(
      `DELETE FROM ${table} WHERE seq < coalesce(` +
        `(SELECT seq FROM ${table} WHERE time_ms >= ? ORDER BY seq LIMIT 1), ` +
        `(SELECT max(seq) FROM ${table}))`,
    );
  }

  /** Appends `drafts` in order; call inside the write's transaction. */
  append(drafts: readonly ChangeDraft[], now: number): StoredChange[] {
    if (drafts.length >= PACK_MIN) {
      let first = 0;
      for (let from = 0; from < drafts.length; from += PACK_MAX) {
        const changes: PackedChange[] = drafts
          .slice(from, from + PACK_MAX)
          .map((draft) => [draft.entity, draft.id, storedOp(draft), draft.record]);
        const packed = brotliCompressSync(JSON.stringify(changes), {
          params: { [constants.BROTLI_PARAM_QUALITY]: PACK_QUALITY },
        });
        const count = changes.length;
        const { seq } = this.insertPack.get(count, String(count), packed, now) as { seq: number };
        if (from === 0) first = seq - count + 1;
      }
      return committedChanges(drafts, first, now);
    }
    let first = 0;
    drafts.forEach((draft, index) => {
      const { lastInsertRowid } = this.insert.run(
        draft.entity,
        draft.id,
        storedOp(draft),
        draft.record,
        now,
      );
      if (index === 0) first = Number(lastInsertRowid);
    });
    return committedChanges(drafts, first, now);
  }

  read(after: number, limit: number): StoredChange[] {
    if (limit <= 0) return [];
    // Rows are read (and packs decompressed) only until `limit` changes are found: leaving the
    // loop resets the statement.
    const rows = this.select.iterate(after) as IterableIterator<Row>;
    const changes: StoredChange[] = [];
    for (const [seq, entity, id, op, record, timeUnix] of rows) {
      if (op !== PACK_OP) {
        changes.push({ seq, entity, id, ...opOfStored(op), record: String(record), timeUnix });
      } else {
        const packed = JSON.parse(
          brotliDecompressSync(record as Buffer).toString('utf8'),
        ) as PackedChange[];
        const first = seq - packed.length + 1;
        packed.forEach(([packedEntity, packedId, packedOp, packedRecord], index) => {
          if (first + index <= after) return;
          changes.push({
            seq: first + index,
            entity: packedEntity,
            id: packedId,
            ...opOfStored(packedOp),
            record: packedRecord,
            timeUnix,
          });
        });
      }
      if (changes.length >= limit) break;
    }
    return changes.length > limit ? changes.slice(0, limit) : changes;
  }

  bounds(): ChangeBounds {
    const [last, firstRow, packed] = this.range.get() as [
      number | null,
      number | null,
      string | null,
    ];
    const end = last ?? 0;
    if (firstRow === null) return { last: end, first: end + 1 };
    // A pack row's seq is its last change's.
    return { last: end, first: packed === null ? firstRow : firstRow - Number(packed) + 1 };
  }

  /** Deletes whole rows (a pack's changes share its write's time); returns how many changes. */
  trim(time: number): number {
    const before = this.bounds().first;
    this.trimBefore.run(time);
    return this.bounds().first - before;
  }
}
