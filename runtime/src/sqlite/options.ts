/**
 * Settings of the SQLite driver: the `sqlite:` URL grammar, the environment variables
 * (`SQLITE_SYNCHRONOUS`, `SQLITE_READERS`, …), their defaults and checks.
 */
import type { Environment } from '../env.js';

/** Options of the SQLite driver. */
export interface SqliteOptions {
  /** Path of the database file (relative to the working directory, or absolute), or `:memory:`. */
  readonly filename: string;
  /**
   * `FULL` (default): an acknowledged write survives a power loss. `NORMAL`: in WAL mode a power
   * loss may roll back the last transactions (never corrupts), for about twice the single-insert
   * rate. When omitted, `SQLITE_SYNCHRONOUS` of `env` decides, then `FULL`.
   */
  readonly synchronous?: SqliteSynchronous;
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /**
   * Worker threads that run list and count queries of a file database, off the event loop
   * (default 2, `SQLITE_READERS`; 0 runs them on the main thread; an in-memory database always
   * does).
   */
  readonly readers?: number;
  /** Time budget of a list or count query in a reader (default 5000 ms, `QUERY_TIMEOUT_MS`). */
  readonly queryTimeoutMs?: number;
  /**
   * Group commit (default on, `SQLITE_GROUP_COMMIT`): writes that arrive while a commit is in
   * flight share the next transaction, one savepoint each, and are acknowledged after its commit.
   * Off, every write commits in its own transaction.
   */
  readonly groupCommit?: boolean;
  /**
   * Page cache, in KiB, of each connection that runs lists: every reader's and the main
   * connection's (it answers the pages a composite index bounds) (default 16 384 = 16 MiB,
   * `SQLITE_CACHE_SIZE`). A cache holds only pages read, so memory grows with the pages lists
   * touch, up to this much per connection.
   */
  readonly cacheSizeKiB?: number;
  /**
   * Environment read for `SQLITE_SYNCHRONOUS`, `SQLITE_READERS`, `SQLITE_GROUP_COMMIT`,
   * `QUERY_TIMEOUT_MS` and `SQLITE_CACHE_SIZE` where the options leave them out; default none (a
   * generated service passes `process.env`).
   */
  readonly env?: Environment;
}

export type SqliteSynchronous = 'FULL' | 'NORMAL';

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Parses a SQLite `DATABASE_URL`. Grammar:
 *
 * ```
 * url    = scheme ":" target [ "?" query ]
 * scheme = "sqlite"                         (case-insensitive)
 * target = ":memory:"                       in-memory database, one per driver
 *        | "//" path                        "//" is dropped: sqlite:///abs/x.db → /abs/x.db,
 *                                           sqlite://data/x.db → data/x.db (there is no host)
 *        | path                             sqlite:./data/service.db, sqlite:data.db,
 *                                           sqlite:/var/lib/app/x.db
 * query  = param *( "&" param )
 * param  = "synchronous=" ( "FULL" | "NORMAL" )        (case-insensitive value)
 *        | "busy_timeout=" milliseconds                (also "busyTimeoutMs=")
 * ```
 *
 * A relative path is resolved against the working directory. The path is taken literally (no
 * percent-decoding), so it cannot contain `?`; use the options object for such names. Any other
 * scheme, an empty path or an unknown parameter is rejected with an `Error` (which names only the
 * scheme, never the rest of the URL, so no password of another URL is logged).
 */
export function parseSqliteUrl(url: string): SqliteOptions {
  const colon = url.indexOf(':');
  const scheme = colon < 0 ? '' : url.slice(0, colon);
  if (scheme.toLowerCase() !== 'sqlite') {
    throw new Error(
      `Unsupported database URL${scheme === '' ? '' : ` with scheme "${scheme}:"`}: expected ` +
        `sqlite:<path>, sqlite:///<absolute path> or sqlite::memory:`,
    );
  }
  let rest = url.slice(colon + 1);
  let query = '';
  const question = rest.indexOf('?');
  if (question >= 0) {
    query = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') {
    throw new Error(
      'Invalid SQLite URL: the database path is empty (use sqlite::memory: or sqlite:<path>)',
    );
  }
  let synchronous: SqliteSynchronous | undefined;
  let busyTimeoutMs: number | undefined;
  if (query !== '') {
    for (const pair of query.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      if (name === 'synchronous') {
        synchronous = parseSynchronous(value, 'SQLite URL parameter synchronous');
      } else if (name === 'busy_timeout' || name === 'busyTimeoutMs') {
        busyTimeoutMs = parseTimeout(value, `SQLite URL parameter ${name}`);
      } else {
        throw new Error(
          `Unknown SQLite URL parameter "${name}": expected synchronous or busy_timeout`,
        );
      }
    }
  }
  return {
    filename: rest,
    ...(synchronous === undefined ? {} : { synchronous }),
    ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }),
  };
}

/** Reads `FULL` / `NORMAL` (case-insensitive). */
export function parseSynchronous(value: string, what: string): SqliteSynchronous {
  const upper = value.trim().toUpperCase();
  if (upper === 'FULL' || upper === 'NORMAL') return upper;
  throw new Error(`${what} must be FULL or NORMAL, not ${JSON.stringify(value)}`);
}

function parseTimeout(value: string, what: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new Error(`${what} must be a whole number of milliseconds, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** Fills in defaults: `synchronous` from the option, then `SQLITE_SYNCHRONOUS` of `env`, then FULL. */
export function resolveSqliteOptions(options: SqliteOptions): Required<Omit<SqliteOptions, 'env'>> {
  const env = options.env ?? {};
  if (typeof options.filename !== 'string' || options.filename === '') {
    throw new Error('SQLite driver: filename must be a non-empty path or ":memory:"');
  }
  const fromEnv = env['SQLITE_SYNCHRONOUS'];
  const synchronous =
    options.synchronous !== undefined
      ? parseSynchronous(options.synchronous, 'SQLite option synchronous')
      : fromEnv !== undefined && fromEnv !== ''
        ? parseSynchronous(fromEnv, 'SQLITE_SYNCHRONOUS')
        : 'FULL';
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2 ** 31 - 1) {
    throw new Error(
      `SQLite option busyTimeoutMs must be a non-negative integer, not ${busyTimeoutMs}`,
    );
  }
  const readers = options.readers ?? envCount(env, 'SQLITE_READERS', DEFAULT_READERS, 0);
  const queryTimeoutMs =
    options.queryTimeoutMs ?? envCount(env, 'QUERY_TIMEOUT_MS', DEFAULT_QUERY_TIMEOUT_MS, 1);
  const groupCommit = options.groupCommit ?? envSwitch(env, 'SQLITE_GROUP_COMMIT', true);
  const cacheSizeKiB =
    options.cacheSizeKiB ?? envCount(env, 'SQLITE_CACHE_SIZE', DEFAULT_CACHE_SIZE_KIB, 1);
  if (!Number.isSafeInteger(cacheSizeKiB) || cacheSizeKiB < 1) {
    throw new Error(`SQLite option cacheSizeKiB must be a positive integer, not ${cacheSizeKiB}`);
  }
  return {
    filename: options.filename,
    synchronous,
    busyTimeoutMs,
    readers,
    queryTimeoutMs,
    groupCommit,
    cacheSizeKiB,
  };
}

/** An on/off variable (`on`/`off`, `true`/`false`, `1`/`0`); unset or empty means `fallback`. */
function envSwitch(env: Environment, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new Error(`${name} must be on or off, not ${JSON.stringify(env[name])}`);
}

export const DEFAULT_READERS = 2;
/**
 * 16 MiB: the benchmark's filtered, sorted pages (100 000 products, 50 categories) read between 8
 * and 16 MiB of pages; with SQLite's default 2 MiB most row lookups miss the cache. A larger cache
 * helps them no further, and the main connection's cache also fills with what reads by key touch.
 */
export const DEFAULT_CACHE_SIZE_KIB = 16_384;
export const DEFAULT_QUERY_TIMEOUT_MS = 5000;

/** A whole-number variable of at least `min`; unset or empty means `fallback`. */
function envCount(env: Environment, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min) {
    throw new Error(
      `${name} must be a whole number of at least ${min}, not ${JSON.stringify(raw)}`,
    );
  }
  return value;
}
