/**
 * Error mapping of the PostgreSQL driver: which SQLSTATEs and socket errors mean "storage
 * unavailable" or "retry", and how they become the runtime's errors.
 */
import type { TableDescriptor } from '../driver.js';
import { uniqueIndexNamed } from '../indexes.js';
import {
  UniqueViolationError,
  BadRequestError,
  MAX_INDEXED_BYTES,
  QueryTimeoutError,
  StorageUnavailableError,
  isStorageUnavailableError,
} from '../errors.js';

/** SQLSTATE codes that mean "the database cannot serve us right now". */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovery)
  '57P05', // idle_session_timeout
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction (connected to a standby / failover in progress)
  '25P03', // idle_in_transaction_session_timeout
]);

/** Node.js socket error codes of an unreachable server. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT', // Unix socket file missing: server not running
]);

/** Messages `pg` / `pg-pool` use for lost or unobtainable connections (they carry no code). */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/i, // "Connection terminated", "… unexpectedly", "… due to connection timeout"
  /timeout exceeded when trying to connect/i, // pg-pool connectionTimeoutMillis
  /^Query read timeout/i, // client-side query_timeout
  /is not queryable/i, // "Client has encountered a connection error and is not queryable"
  /^Client was closed and is not queryable/i,
  /server closed the connection unexpectedly/i,
  /the database system is (?:starting up|shutting down|in recovery mode)/i,
];

/** SQLSTATE of a PostgreSQL error, if it has one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** True when the error means the server is unreachable, gone or refusing work for now. */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  if (isStorageUnavailableError(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_ERRNOS.has(code)) return true;
    if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  const message = (error as { message?: unknown }).message;
  if (
    typeof message === 'string' &&
    UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))
  ) {
    return true;
  }
  // Node's happy-eyeballs connect reports an AggregateError of one error per address.
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested) && nested.length > 0) {
    return nested.every((inner) => isUnavailable(inner, depth + 1));
  }
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && isUnavailable(cause, depth + 1);
}

/** A short, secret-free description of a connection-level error. */
export function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  const nested = (error as { errors?: unknown }).errors;
  let text = typeof message === 'string' && message !== '' ? message : '';
  if (text === '' && Array.isArray(nested) && nested.length > 0) text = describeError(nested[0]);
  if (typeof code === 'string' && !text.includes(code))
    text = text === '' ? code : `${code}: ${text}`;
  return text === '' ? 'unknown error' : text;
}

/** SQLSTATEs of values PostgreSQL cannot store: U+0000 in text (22021) or in JSONB (22P05). */
const UNSTORABLE_VALUE = new Set(['22021', '22P05']);

/**
 * Rethrows connection-level failures as `StorageUnavailableError` and values PostgreSQL cannot
 * store (NUL characters, values beyond its size limits) as a 400; other errors pass unchanged.
 */
export function translateError(error: unknown): unknown {
  if (isStorageUnavailableError(error)) return error;
  const state = sqlState(error);
  if (state !== undefined && UNSTORABLE_VALUE.has(state)) {
    return new BadRequestError(
      'A value contains a character the database cannot store (U+0000, the NUL character)',
    );
  }
  // program_limit_exceeded: a value beyond a size limit of the server. The runtime keeps keys and
  // indexed values far below the index limit (MAX_INDEXED_BYTES); this is the safety net.
  if (state === '54000') {
    const message = (error as { message?: unknown }).message;
    return new BadRequestError(
      typeof message === 'string' && /index row/i.test(message)
        ? `A key or indexed value is too large for the database's index; a key or indexed field holds at most ${MAX_INDEXED_BYTES} bytes`
        : 'A value is too large for the database to store',
    );
  }
  // A statement that ran out of statement_timeout is a slow query, not an outage.
  if (state === '57014') return new QueryTimeoutError(undefined);
  if (isUnavailable(error)) {
    return new StorageUnavailableError(`PostgreSQL: ${describeError(error)}`, { cause: error });
  }
  return error;
}

/** Serialization failures and deadlocks: the whole transaction may simply be run again. */
export function isRetryable(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40001' || state === '40P01';
}

/**
 * The `UniqueViolationError` of a write that broke a unique index of `table` (SQLSTATE 23505
 * naming one of its unique indexes, not the primary key), or undefined.
 */
export function uniqueViolation(
  error: unknown,
  table: TableDescriptor,
  index: number | undefined,
): UniqueViolationError | undefined {
  if (sqlState(error) !== '23505' || table.unique === undefined) return undefined;
  const name = (error as { constraint?: unknown }).constraint;
  if (typeof name !== 'string') return undefined;
  const found = uniqueIndexNamed(table, name);
  if (found === undefined) return undefined;
  return new UniqueViolationError(
    table.table,
    found.columns.map((column) => column.name),
    index,
    { cause: error },
  );
}
