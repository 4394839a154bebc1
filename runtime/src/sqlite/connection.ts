/**
 * The main connection of the SQLite driver: creates the database's folder, opens the file (or
 * `:memory:`) with WAL, the configured `synchronous` and page cache, and registers the functions
 * DECIMAL columns and migrations call (`decimal-key.ts`).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { toDecimal } from '../convert.js';
import { decimalSortKey } from './decimal-key.js';
import { foldCase } from '../fold.js';
import { DECIMAL_KEY_FUNCTION, DECIMAL_TEXT_FUNCTION, FOLD_FUNCTION } from './dialect.js';
import type { SqliteSynchronous } from './options.js';
import { RECORD_VALUE_FUNCTION, recordValueSql } from './record-text.js';

/** The settings a connection is opened with. */
export interface ConnectionSettings {
  readonly synchronous: SqliteSynchronous;
  readonly busyTimeoutMs: number;
  readonly cacheSizeKiB: number;
}

/** Opens the main connection to `filename` (`:memory:` for an in-memory database). */
export function openConnection(filename: string, settings: ConnectionSettings): Database.Database {
  const memory = filename === ':memory:';
  if (!memory) mkdirSync(dirname(resolve(filename)), { recursive: true });
  const db = new Database(filename, { timeout: settings.busyTimeoutMs });
  try {
    if (!memory) db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${settings.synchronous}`);
    // Pages an index serves run here (all lists without readers): the lists' page cache.
    db.pragma(`cache_size = ${-settings.cacheSizeKiB}`);
    db.function(DECIMAL_KEY_FUNCTION, { deterministic: true }, (value: unknown) =>
      typeof value === 'string' || typeof value === 'number'
        ? (decimalSortKey(value) ?? null)
        : null,
    );
    // Pages written as text hand the values SQLite would write otherwise back to JavaScript.
    db.function(RECORD_VALUE_FUNCTION, { deterministic: true }, recordValueSql);
    // The case-insensitive filter operators compare folded text.
    db.function(FOLD_FUNCTION, { deterministic: true }, (value: unknown) =>
      typeof value === 'string' ? foldCase(value) : null,
    );
    // Used by migrations converting numbers to DECIMAL or STRING: the canonical decimal text.
    db.function(DECIMAL_TEXT_FUNCTION, { deterministic: true }, (value: unknown) =>
      typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint'
        ? (toDecimal(typeof value === 'bigint' ? String(value) : value, [], '', []) ?? null)
        : null,
    );
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
