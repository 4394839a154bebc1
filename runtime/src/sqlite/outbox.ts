/**
 * The SQLite outbox (SPEC §9): `_eg_events`, one row per committed change, appended inside the
 * write's own transaction. Writers are serialised by SQLite's write lock, so the seq a row gets —
 * its rowid, one more than the largest in the table — is its commit order, across every process
 * on the file; a rolled-back write takes its rows and its seqs with it, so seqs have no gaps.
 * Trimming keeps the newest row, so the largest rowid never goes back and no seq is handed out
 * twice (AUTOINCREMENT would also guarantee that, at the price of another row written per write).
 */
import type Database from 'better-sqlite3';
import type { ChangeBounds, StoredChange } from '../driver.js';
import { committedChanges, opOfStored, storedOp, type ChangeDraft } from '../events/change.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { EVENTS_TABLE } from './schema.js';

type Statement = Database.Statement<unknown[], unknown>;

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
  private readonly select: Statement;
  private readonly range: Statement;
  private readonly trimBefore: Statement;

  constructor(db: Database.Database) {
    const table = quoteIdentifier(EVENTS_TABLE);
    this.insert = db.prepare(
      `INSERT INTO ${table} (entity, record_id, op, record, time_ms) VALUES (?, ?, ?, ?, ?)`,
    );
    this.select = db
      .prepare(
        `SELECT seq, entity, record_id, op, record, time_ms FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`,
      )
      .raw(true);
    this.range = db
      .prepare(`SELECT (SELECT max(seq) FROM ${table}), (SELECT min(seq) FROM ${table})`)
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
    const rows = this.select.all(after, limit) as [
      number,
      string,
      string,
      string,
      string,
      number,
    ][];
    return rows.map(([seq, entity, id, op, record, timeUnix]) => ({
      seq,
      entity,
      id,
      ...opOfStored(op),
      record,
      timeUnix,
    }));
  }

  bounds(): ChangeBounds {
    const [last, first] = this.range.get() as [number | null, number | null];
    const end = last ?? 0;
    return { last: end, first: first ?? end + 1 };
  }

  trim(time: number): number {
    return this.trimBefore.run(time).changes;
  }
}
