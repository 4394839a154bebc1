/**
 * Error mapping of the SQLite driver: which SQLite result codes (from the main connection or a
 * reader thread) mean "storage unavailable", and how a duplicate primary key is recognised.
 */
import Database from 'better-sqlite3';
import type { TableDescriptor } from '../driver.js';
import { StorageUnavailableError, UniqueViolationError } from '../errors.js';
import { uniqueIndexOnColumns } from '../indexes.js';
import { decimalShadowColumn } from './dialect.js';
import { ReaderError } from './readers.js';

export function sqliteCode(error: unknown): string | undefined {
  if (error instanceof Database.SqliteError || error instanceof ReaderError) return error.code;
  return undefined;
}

export function isPrimaryKeyViolation(error: unknown): boolean {
  return sqliteCode(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * The `UniqueViolationError` of a write that broke a unique index of `table` (SQLite names the
 * index's columns: `UNIQUE constraint failed: product.category, product.name`), or undefined.
 */
export function uniqueViolation(
  error: unknown,
  table: TableDescriptor,
  index: number | undefined,
): UniqueViolationError | undefined {
  if (sqliteCode(error) !== 'SQLITE_CONSTRAINT_UNIQUE' || table.unique === undefined)
    return undefined;
  const listed = /UNIQUE constraint failed: (.*)$/.exec((error as Error).message)?.[1];
  if (listed === undefined) return undefined;
  const columns = listed.split(', ').map((item) => item.slice(item.indexOf('.') + 1));
  const found = uniqueIndexOnColumns(table, columns, (column) =>
    column.kind === 'decimal' ? decimalShadowColumn(column.name) : column.name,
  );
  if (found === undefined) return undefined;
  return new UniqueViolationError(
    table.table,
    found.columns.map((column) => column.name),
    index,
    { cause: error },
  );
}

/** Primary result codes meaning the database cannot be used right now (or at all). */
const UNAVAILABLE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_PROTOCOL',
  'SQLITE_READONLY',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_NOLFS',
  'SQLITE_AUTH',
]);

/** SQLite errors meaning "storage unreachable" become `StorageUnavailableError`; others pass. */
export function mapError(error: unknown): unknown {
  const code = sqliteCode(error);
  if (code !== undefined) {
    const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
    if (UNAVAILABLE.has(primary)) {
      return new StorageUnavailableError(`SQLite ${code}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return error;
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    // mkdir of the database directory failed, and the like.
    if (['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOTDIR', 'EEXIST', 'EIO'].includes(error.code)) {
      return new StorageUnavailableError(`${error.code}: ${error.message}`, { cause: error });
    }
  }
  return error;
}
