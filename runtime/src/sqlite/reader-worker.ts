/**
 * A reader of the SQLite driver (see readers.ts): a worker thread with its own read-only
 * connection to the database file, running the list and count queries the main thread sends, so
 * that a slow one never blocks the event loop that serves every other request.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { decimalSortKey } from './decimal-key.js';
import { foldCase } from '../fold.js';
import { DECIMAL_KEY_FUNCTION, FOLD_FUNCTION } from './dialect.js';
import {
  RECORD_VALUE_FUNCTION,
  recordValueSql,
  rowTexts,
  type RecordShape,
} from './record-text.js';

/**
 * A query from the pool: `rows` answers raw rows, `value` the first column of the first row,
 * `texts` the JSON text of each row's record (`RowTexts`, with the raw row at `keep`).
 */
export interface ReadRequest {
  readonly id: number;
  readonly sql: string;
  readonly params: unknown[];
  readonly mode: 'rows' | 'value' | 'texts';
  /** For `texts`: the table's record shape. */
  readonly shape?: RecordShape;
  /** For `texts`: the index of the row also answered raw. */
  readonly keep?: number;
}

export type ReadResponse =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { readonly message: string; readonly code?: string } };

/** What the pool starts a reader with. */
export interface ReaderData {
  readonly filename: string;
  readonly busyTimeoutMs: number;
  /** Page cache of the connection, in KiB. */
  readonly cacheSizeKiB: number;
}

const { filename, busyTimeoutMs, cacheSizeKiB } = workerData as ReaderData;
const db = new Database(filename, { readonly: true, timeout: busyTimeoutMs });
db.pragma(`cache_size = ${-cacheSizeKiB}`);
// Filters on DECIMAL values inside JSON compare their sortable keys, like the main connection.
db.function(DECIMAL_KEY_FUNCTION, { deterministic: true }, (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? (decimalSortKey(value) ?? null) : null,
);
db.function(FOLD_FUNCTION, { deterministic: true }, (value: unknown) =>
  typeof value === 'string' ? foldCase(value) : null,
);
// Pages written as text, as on the main connection.
db.function(RECORD_VALUE_FUNCTION, { deterministic: true }, recordValueSql);
const statements = new Map<string, Database.Statement>();
/** Bounded like the main connection's cache: list SQL varies with filters and order. */
const CACHE_SIZE = 200;

function statement(sql: string, raw: boolean): Database.Statement {
  const key = `${raw ? 'r' : 'v'}${sql}`;
  let found = statements.get(key);
  if (found === undefined) {
    found = db.prepare(sql);
    if (raw) found.raw(true);
    else found.pluck(true);
    if (statements.size >= CACHE_SIZE) {
      const oldest = statements.keys().next();
      if (oldest.done !== true) statements.delete(oldest.value);
    }
    statements.set(key, found);
  }
  return found;
}

// The pool starts a query's time budget once the connection is open.
parentPort?.postMessage({ ready: true });

parentPort?.on('message', (request: ReadRequest) => {
  let response: ReadResponse;
  try {
    const result =
      request.mode === 'value'
        ? statement(request.sql, false).get(request.params)
        : request.mode === 'rows'
          ? statement(request.sql, true).all(request.params)
          : rowTexts(
              request.shape!,
              statement(request.sql, true).all(request.params) as unknown[][],
              request.keep ?? -1,
            );
    response = { id: request.id, result };
  } catch (error) {
    const code =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : undefined;
    response = {
      id: request.id,
      error: {
        message: error instanceof Error ? error.message : String(error),
        ...(code === undefined ? {} : { code }),
      },
    };
  }
  parentPort?.postMessage(response);
});
