/**
 * What `SqliteDriver.open` does to the database, in one IMMEDIATE transaction: run the pending
 * migrations (docs/migrations.md), create the bookkeeping tables (`_eg_activity`, `_eg_secrets`,
 * the `_eg_events` outbox) and every missing entity table and index, and check that existing
 * tables have the columns the code expects.
 */
import type Database from 'better-sqlite3';
import {
  constraintChecksOf,
  constraintViolations,
  constraintViolationsError,
  storedValuesSql,
} from '../constraint-checks.js';
import type { MigrationScript, TableDescriptor } from '../driver.js';
import {
  MIGRATIONS_TABLE,
  danglingReferencesError,
  danglingReferencesSql,
  migrationChecksum,
  migrationFailed,
  planMigrationRun,
  referenceChecksOf,
  type AppliedMigration,
} from '../migrations.js';
import {
  sqliteSearchCreateSql,
  sqliteSearchDropSql,
  sqliteSearchFillSql,
  sqliteSearchTable,
} from '../search.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { duplicateValuesError, duplicatesSql, migrationParts } from '../unique-checks.js';
import { mapError } from './errors.js';
import { createHistoryTableSql } from './history.js';
import { createEventsTableSql } from './outbox.js';
import {
  ACTIVITY_TABLE,
  SECRETS_TABLE,
  SEQUENCES_TABLE,
  sequenceName,
  type TableLayout,
} from './schema.js';

/**
 * Migrations, then missing tables, in one IMMEDIATE transaction: another process starting at the
 * same time waits on the busy timeout and then finds the migrations recorded. Returns the ids of
 * the migrations run.
 */
export function setUpDatabase(
  db: Database.Database,
  layouts: readonly TableLayout[],
  migrations: readonly MigrationScript[] | undefined,
): readonly string[] {
  let applied: readonly string[] = [];
  db.transaction(() => {
    if (migrations !== undefined) {
      applied = runMigrations(
        db,
        migrations,
        layouts.map((layout) => layout.descriptor),
      );
    }
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(ACTIVITY_TABLE)} (\n` +
        `  entity TEXT NOT NULL PRIMARY KEY,\n` +
        `  last_create_ms INTEGER,\n  last_update_ms INTEGER,\n  last_delete_ms INTEGER\n` +
        `) WITHOUT ROWID`,
    );
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(SECRETS_TABLE)} (\n` +
        `  name TEXT NOT NULL PRIMARY KEY,\n  value TEXT NOT NULL\n) WITHOUT ROWID`,
    );
    // Created at start like the other bookkeeping tables, so services that existed before
    // change events get their outbox without a migration.
    db.exec(createEventsTableSql());
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(SEQUENCES_TABLE)} (\n` +
        `  name TEXT NOT NULL PRIMARY KEY,\n  value INTEGER NOT NULL\n) WITHOUT ROWID`,
    );
    db.exec(createHistoryTableSql());
    for (const layout of layouts) {
      db.exec(layout.createTableSql());
      checkColumns(db, layout);
      for (const statement of layout.createIndexSql()) db.exec(statement);
      setUpSearch(db, layout.descriptor);
      const column = layout.descriptor.sequence;
      if (column !== undefined) {
        // The sequence starts after the largest stored key (records written before it existed).
        const largest = `(SELECT COALESCE(MAX(${quoteIdentifier(column)}), 0) FROM ${quoteIdentifier(layout.descriptor.table)})`;
        db.prepare(
          `INSERT INTO ${quoteIdentifier(SEQUENCES_TABLE)} (name, value) VALUES (?, ${largest}) ` +
            `ON CONFLICT (name) DO UPDATE SET value = MAX(value, excluded.value)`,
        ).run(sequenceName(layout.descriptor));
      }
    }
  }).immediate();
  return applied;
}

/**
 * Brings the database's migrations in line with the code (see `planMigrationRun`); runs inside
 * the caller's transaction, so a failing migration leaves everything as it was. Returns the ids run.
 */
function runMigrations(
  db: Database.Database,
  scripts: readonly MigrationScript[],
  tables: readonly TableDescriptor[],
): string[] {
  const exists = (name: string): boolean =>
    db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(name) !==
    undefined;
  const table = quoteIdentifier(MIGRATIONS_TABLE);
  const hasTable = exists(MIGRATIONS_TABLE);
  const applied = hasTable
    ? (db.prepare(`SELECT id, checksum FROM ${table}`).all() as AppliedMigration[])
    : undefined;
  const run = planMigrationRun(scripts, { applied, hasTables: exists(ACTIVITY_TABLE) });
  if (!hasTable) {
    db.exec(
      `CREATE TABLE ${table} (\n  id TEXT NOT NULL PRIMARY KEY,\n  applied_ms INTEGER NOT NULL,\n` +
        `  checksum TEXT NOT NULL\n) WITHOUT ROWID`,
    );
  }
  const record = db.prepare(`INSERT INTO ${table} (id, applied_ms, checksum) VALUES (?, ?, ?)`);
  if (run.mode === 'baseline') {
    const now = Date.now();
    for (const script of run.record) record.run(script.id, now, migrationChecksum(script.sql));
    return [];
  }
  for (const script of run.pending) {
    for (const part of migrationParts(script.sql)) {
      if (part.kind === 'check') {
        const sql = duplicatesSql('sqlite', tables, part.check);
        if (sql === undefined) continue;
        const rows = db.prepare(sql).raw(true).all() as unknown[][];
        if (rows.length > 0) throw duplicateValuesError(script.id, part.check, rows);
        continue;
      }
      try {
        db.exec(part.sql);
      } catch (error) {
        if (mapError(error) !== error) throw error; // busy or broken storage: retried by the caller
        throw migrationFailed(script.id, error);
      }
    }
    for (const check of referenceChecksOf(script.sql)) {
      const sql = danglingReferencesSql('sqlite', tables, check);
      if (sql === undefined) continue;
      const rows = db.prepare(sql).raw(true).all() as unknown[][];
      if (rows.length > 0) throw danglingReferencesError(script.id, check, rows);
    }
    for (const check of constraintChecksOf(script.sql)) {
      const sql = storedValuesSql('sqlite', tables, check);
      if (sql === undefined) continue;
      const rows = db.prepare(sql).raw(true).all() as unknown[][];
      const violations = constraintViolations(rows, check, 'sqlite');
      if (violations.length > 0) throw constraintViolationsError(script.id, check, violations);
    }
    record.run(script.id, Date.now(), migrationChecksum(script.sql));
  }
  return run.pending.map((script) => script.id);
}

/**
 * Creates the search tables and triggers of a searchable table (search.ts) when they are missing,
 * and then indexes the rows the table already holds (a database set up by migrations has them);
 * drops those of a table whose entity is no longer searchable, whose triggers would still run.
 */
function setUpSearch(db: Database.Database, table: TableDescriptor): void {
  const exists =
    db
      .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`)
      .get(sqliteSearchTable(table.table)) !== undefined;
  if (table.search === undefined) {
    if (exists) for (const statement of sqliteSearchDropSql(table.table)) db.exec(statement);
    return;
  }
  for (const statement of sqliteSearchCreateSql(table)) db.exec(statement);
  if (!exists) for (const statement of sqliteSearchFillSql(table)) db.exec(statement);
}

/** Fails clearly when a table created for another schema lacks columns (it needs a migration). */
function checkColumns(db: Database.Database, layout: TableLayout): void {
  const present = new Set(
    (
      db
        .prepare(`SELECT name FROM pragma_table_xinfo(?)`)
        .pluck()
        .all(layout.descriptor.table) as string[]
    ).map((name) => name.toLowerCase()),
  );
  const missing = layout.expectedColumns().filter((c) => !present.has(c.toLowerCase()));
  if (missing.length > 0) {
    throw new Error(
      `SQLite table ${layout.descriptor.table} exists but lacks column(s) ${missing.join(', ')}; ` +
        `it was created for another schema; run entity-gen generate to write the migration that ` +
        `brings it up to date and start the service with its migrations (docs/migrations.md)`,
    );
  }
}
