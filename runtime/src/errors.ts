/**
 * Errors of the runtime as small classes carrying data: the HTTP errors a request can end with
 * (rendered by `errorMiddleware`, detected by a brand rather than `instanceof`) and the storage
 * errors drivers throw.
 */
import type { Issue } from './issues.js';

/**
 * Errors are small classes carrying data, rendered into the envelope by one middleware. They are
 * recognised by a brand rather than `instanceof`, because a process may load two copies of this
 * package (for example a service and a user's plug-in driver built against another version).
 */
const HTTP_ERROR = Symbol.for('@entity-gen/runtime.HttpError');
const DUPLICATE_KEY = Symbol.for('@entity-gen/runtime.DuplicateKeyError');
const UNIQUE_VIOLATION = Symbol.for('@entity-gen/runtime.UniqueViolationError');
const STORAGE_UNAVAILABLE = Symbol.for('@entity-gen/runtime.StorageUnavailableError');
const QUERY_TIMEOUT = Symbol.for('@entity-gen/runtime.QueryTimeoutError');

/** An error that becomes an HTTP response with its status and reason. */
export class HttpError extends Error {
  readonly [HTTP_ERROR] = true;
  /** 4xx reasons are sent to the client; 5xx reasons are logged and replaced by a generic one. */
  readonly expose: boolean;
  readonly issues: readonly Issue[] | undefined;
  readonly headers: Readonly<Record<string, string>>;
  /** The index of the operation of a `POST /batch` that failed (`error.operation`). */
  readonly operation: number | undefined;

  constructor(
    readonly status: number,
    readonly reason: string,
    options: {
      issues?: readonly Issue[];
      headers?: Record<string, string>;
      cause?: unknown;
      expose?: boolean;
      operation?: number;
    } = {},
  ) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.expose = options.expose ?? status < 500;
    this.issues = options.issues;
    this.headers = options.headers ?? {};
    this.operation = options.operation;
  }
}

/**
 * The most bytes (UTF-8) a key or indexed text value may hold, and a composite key's whole record
 * id. PostgreSQL refuses index entries beyond about 2 700 bytes while SQLite stores them: one limit
 * well below that keeps a record that one driver accepts acceptable to the other.
 */
export const MAX_INDEXED_BYTES = 1024;

/** How much of a client's input an error reason quotes. */
const QUOTE_MAX_LENGTH = 100;

/**
 * A client-supplied text (an id, an entity name) as a reason quotes it: at most 100 characters,
 * then `…`, so that an 8 KB id does not come back in the answer and the log.
 */
export function quoteInput(text: string): string {
  if (text.length <= QUOTE_MAX_LENGTH) return text;
  let end = QUOTE_MAX_LENGTH;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // do not split a surrogate pair
  return `${text.slice(0, end)}…`;
}

/** True for any `HttpError`, from this copy of the runtime or another. */
export function isHttpError(error: unknown): error is HttpError {
  return typeof error === 'object' && error !== null && HTTP_ERROR in error;
}

/** 400 for a request that is malformed or names something that does not exist in the schema. */
export class BadRequestError extends HttpError {
  constructor(reason: string, issues?: readonly Issue[]) {
    super(400, reason, issues === undefined ? {} : { issues });
  }
}

/** 400 for a record whose logical key is already taken. */
export class KeyExistsError extends HttpError {
  constructor(entity: string, id: string, issues?: readonly Issue[]) {
    super(
      400,
      `Logical key ${quoteInput(id)} for Entity ${entity} already exists`,
      issues === undefined ? {} : { issues },
    );
  }
}

/** 400 for a write of a key that a soft-deleted record keeps (SPEC §13). */
export class DeletedKeyError extends HttpError {
  constructor(entity: string, id: string, issues?: readonly Issue[]) {
    super(
      400,
      `Logical key ${quoteInput(id)} for Entity ${entity} belongs to a deleted record; restore it (POST /data/${entity.toLowerCase()}/${encodeURIComponent(id)}/restore) or purge it (DELETE with ?purge=true) first`,
      issues === undefined ? {} : { issues },
    );
  }
}

/** 403 for an operation switched off by the REST configuration. */
export class MethodForbiddenError extends HttpError {
  constructor(entity: string, method: 'GET_LIST' | 'GET_BYID' | 'NEW' | 'UPDATE' | 'DELETE') {
    super(403, `Method ${method} not allowed for Entity ${entity}`);
  }
}

/** 404 for an id that no record has. */
export class RecordNotFoundError extends HttpError {
  constructor(entity: string, id: string) {
    super(404, `EntityRecord with id ${quoteInput(id)} not found for ${entity}`);
  }
}

/** 404 for an entity name the schema does not define. */
export class EntityNotFoundError extends HttpError {
  constructor(name: string) {
    super(404, `Entity ${quoteInput(name)} not found`);
  }
}

/** 405 with the `Allow` header listing what the resource does accept. */
export class MethodNotAllowedError extends HttpError {
  constructor(reason: string, allowed: readonly string[]) {
    super(405, reason, { headers: { Allow: allowed.join(', ') } });
  }
}

/** 412 when `If-Match` names another version than the stored one. */
export class PreconditionFailedError extends HttpError {
  constructor(reason: string) {
    super(412, reason);
  }
}

/**
 * Thrown by a driver when an insert or rename hits an existing key. `index` is the position of
 * the offending record in the insert, when the driver can tell.
 */
export class DuplicateKeyError extends Error {
  readonly [DUPLICATE_KEY] = true;
  constructor(
    readonly table: string,
    readonly index: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(`Duplicate key in table ${table}`, options);
    this.name = 'DuplicateKeyError';
  }
}

/** True for a `DuplicateKeyError` from any copy of the runtime. */
export function isDuplicateKeyError(error: unknown): error is DuplicateKeyError {
  return typeof error === 'object' && error !== null && DUPLICATE_KEY in error;
}

/**
 * Thrown by a driver when an insert or update would give a record the values of a unique rule
 * (SPEC §16) that another record holds: `fields` are the rule's fields, `index` the position of
 * the offending record in the insert when the driver can tell. Nothing was written.
 */
export class UniqueViolationError extends Error {
  readonly [UNIQUE_VIOLATION] = true;
  constructor(
    readonly table: string,
    readonly fields: readonly string[],
    readonly index: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(`Unique rule (${fields.join(', ')}) of table ${table} violated`, options);
    this.name = 'UniqueViolationError';
  }
}

/** True for a `UniqueViolationError` from any copy of the runtime. */
export function isUniqueViolationError(error: unknown): error is UniqueViolationError {
  return typeof error === 'object' && error !== null && UNIQUE_VIOLATION in error;
}

/** Thrown by a driver when the database cannot be reached; answered with 503. */
export class StorageUnavailableError extends HttpError {
  readonly [STORAGE_UNAVAILABLE] = true;
  constructor(detail: string, options?: { cause?: unknown }) {
    super(503, 'Storage unavailable', { ...options, expose: true });
    this.message = `Storage unavailable: ${detail}`;
    this.name = 'StorageUnavailableError';
  }
}

/** True for a `StorageUnavailableError` from any copy of the runtime. */
export function isStorageUnavailableError(error: unknown): error is StorageUnavailableError {
  return typeof error === 'object' && error !== null && STORAGE_UNAVAILABLE in error;
}

/** 503 for a query that ran out of its time budget (`QUERY_TIMEOUT_MS`). */
export class QueryTimeoutError extends HttpError {
  readonly [QUERY_TIMEOUT] = true;
  constructor(timeoutMs: number | undefined) {
    super(
      503,
      `The query took longer than ${timeoutMs === undefined ? 'its time budget' : `${timeoutMs} ms`} (QUERY_TIMEOUT_MS) and was stopped; narrow the filters or page with a smaller limit`,
      { expose: true },
    );
    this.name = 'QueryTimeoutError';
  }
}

/** True for a `QueryTimeoutError` from any copy of the runtime. */
export function isQueryTimeoutError(error: unknown): error is QueryTimeoutError {
  return typeof error === 'object' && error !== null && QUERY_TIMEOUT in error;
}
