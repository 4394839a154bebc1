/**
 * The SQLite side of record history (SPEC §13, `history.ts`): `_eg_history`, written inside the
 * write's transaction from the change drafts the outbox gets.
 */
import type Database from 'better-sqlite3';
import type { HistoryEntry } from '../driver.js';
import type { ChangeDraft } from '../events/change.js';
import {
  HISTORY_TABLE,
  historyDrafts,
  historyEntry,
  historySql,
  NO_VERSION_LIMIT,
  withVersions,
} from '../history.js';
import { quoteIdentifier } from '../sql/dialect.js';

type Statement = Database.Statement<unknown[], unknown>;

/** The DDL of the history table. */
export function createHistoryTableSql(): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(HISTORY_TABLE)} (\n` +
    `  entity TEXT NOT NULL,\n  record_id TEXT NOT NULL,\n  version INTEGER NOT NULL,\n` +
    `  op TEXT NOT NULL,\n  "by" TEXT,\n  record TEXT NOT NULL,\n  time_ms INTEGER NOT NULL,\n` +
    `  PRIMARY KEY (entity, record_id, version)\n) WITHOUT ROWID`
  );
}

/** The history's statements on one connection. */
export class SqliteHistory {
  private readonly rekey: Statement;
  private readonly insert: Statement;
  private readonly page: Statement;
  private readonly at: Statement;
  private readonly trimBefore: Statement;

  constructor(
    db: Database.Database,
    /** The entities that keep their history. */
    readonly entities: ReadonlySet<string>,
  ) {
    const sql = historySql(quoteIdentifier(HISTORY_TABLE), (n) => `@p${n}`);
    this.rekey = db.prepare(sql.rekey);
    this.insert = db.prepare(sql.insert).raw(true);
    this.page = db.prepare(sql.page).raw(true);
    this.at = db.prepare(sql.at).raw(true);
    this.trimBefore = db.prepare(sql.trim);
  }

  /**
   * Keeps the versions of `drafts` written at `now` by `by`, inside the write's transaction;
   * returns the drafts with their versions.
   */
  append(drafts: readonly ChangeDraft[], now: number, by: string | null): ChangeDraft[] {
    const versions: number[] = [];
    for (const kept of historyDrafts(drafts, this.entities)) {
      if (kept.from !== undefined) this.rekey.run(named(kept.entity, kept.id, kept.from));
      const row = this.insert.get(named(kept.entity, kept.id, kept.op, by, kept.record, now));
      versions.push(Number((row as unknown[])[0]));
    }
    return versions.length === 0 ? [...drafts] : withVersions(drafts, this.entities, versions);
  }

  read(entity: string, id: string, limit: number, before = NO_VERSION_LIMIT): HistoryEntry[] {
    return (this.page.all(named(entity, id, before, limit)) as unknown[][]).map(historyEntry);
  }

  versionAt(entity: string, id: string, time: number): HistoryEntry | undefined {
    const row = this.at.get(named(entity, id, time)) as unknown[] | undefined;
    return row === undefined ? undefined : historyEntry(row);
  }

  trim(time: number): number {
    return this.trimBefore.run(named(time)).changes;
  }
}

/** Parameters `@p1`, `@p2`, … of the history's statements (`historySql`) from their values. */
function named(...values: unknown[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  values.forEach((value, index) => {
    params[`p${index + 1}`] = value;
  });
  return params;
}
