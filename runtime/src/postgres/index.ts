/**
 * PostgreSQL storage driver of `@entity-gen/runtime` (`pg` connection pool).
 *
 * ## DATABASE_URL grammar
 *
 * ```
 * url    = ("postgres" | "postgresql") "://" [user [":" password] "@"] [host] [":" port]
 *          ["/" database] ["?" param *("&" param)]
 * param  = "schema=" name                 tables live in this schema, created at open when missing
 *                                         (env PGSCHEMA; default: the connection's search_path)
 *        | "pool_max=" n                  max pooled connections, n ≥ 1 (env PGPOOL_MAX; default 10)
 *        | "statement_timeout=" ms        server-side statement timeout, 0 = none
 *                                         (env PG_STATEMENT_TIMEOUT_MS; default 30000)
 *        | "connect_timeout=" seconds     libpq-style connect timeout (0 = use the default)
 *        | "connect_timeout_ms=" ms       the same in milliseconds, also the time to wait for a free
 *                                         pooled connection (env PG_CONNECT_TIMEOUT_MS; default 5000)
 *        | "idle_timeout_ms=" ms          idle pooled connections close after this (env
 *                                         PGPOOL_IDLE_TIMEOUT_MS; default 10000; 0 = never)
 *        | "sslmode=" ("disable" | "require" | "verify-ca" | "verify-full")
 *                                         (env PGSSLMODE; default disable). require: encrypted,
 *                                         certificate not verified (libpq semantics); verify-ca:
 *                                         chain checked against sslrootcert; verify-full: chain
 *                                         and host name checked (system CAs unless sslrootcert).
 *                                         allow/prefer are rejected (pg cannot fall back).
 *        | "sslrootcert=" file | "sslcert=" file | "sslkey=" file     PEM files
 *        | "channel_binding=" ("disable" | "prefer" | "require")      require: SCRAM channel binding
 *        | "application_name=" name       default "entity-gen"
 *        | "options=" text                raw startup options, e.g. -c%20DateStyle%3DISO
 *        | "host=" host-or-socket-dir | "port=" n | "user=" u | "password=" p | "dbname=" db
 *                                         override the URL parts (host=/var/run/postgresql for a
 *                                         Unix socket)
 * ```
 *
 * Precedence: explicit `PostgresDriverOptions` > URL parameters > environment (the `env` the
 * driver is given; it reads no `process.env` of its own) > defaults. Parts missing from the URL
 * fall back to pg's own environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE)
 * and ~/.pgpass. The part before `?` is read by pg's own parser
 * (pg-connection-string): user, password and host are percent-decoded, and so is the database,
 * except escaped URL delimiters such as `%2F`. An unknown parameter or a bad value throws
 * `PostgresConfigError` from the constructor (the message never includes the password).
 *
 * ## Column types
 *
 * text TEXT COLLATE "C" (bytewise order, as SQLite) · integer BIGINT (read back as number) ·
 * double DOUBLE PRECISION · decimal NUMERIC (read back as the exact canonical string) · boolean
 * BOOLEAN · date DATE ('YYYY-MM-DD') · datetime TIMESTAMPTZ ('YYYY-MM-DDTHH:mm:ss.sssZ') · json
 * JSONB. Bookkeeping: `_eg_created_ms BIGINT`, `_eg_updated_ms BIGINT`, `_eg_version INTEGER`;
 * tables `_eg_activity`, `_eg_secrets`, and the change events' outbox `_eg_events` with its seq
 * counter `_eg_event_seq` and its queue `_eg_pending` (outbox.ts, relay.ts). Type parsers are set
 * per pool, never on the process-wide `pg.types`.
 *
 * ## More than one server (SPEC §15)
 *
 * From the driver's `env`: `DATABASE_READ_URL` (read replicas, replicas.ts; with
 * `READ_AFTER_WAIT_MS` and `MAX_REPLICA_LAG_MS`) and `DATABASE_LISTEN_URL` (a direct connection
 * for LISTEN and start-up when `DATABASE_URL` is a transaction pooler, topology.ts).
 *
 * ## Unavailability
 *
 * Refused/reset/timed-out connections, pool wait timeouts, server shutdown (57P01…), connection
 * exceptions (08xxx), statement timeouts (57014) and too-many-connections become
 * `StorageUnavailableError` (HTTP 503). `open()` against a server that is down rejects with it and
 * may simply be called again later (the service retries with backoff); after an outage the pool
 * reconnects by itself, the driver need not be recreated.
 */
import type { TableDescriptor } from '../driver.js';
import { PostgresDriver, type PostgresDriverOptions } from './driver.js';

export { PostgresDriver, type PostgresDriverOptions } from './driver.js';
export {
  POSTGRES_DEFAULTS,
  PostgresConfigError,
  describeSettings,
  isPostgresUrl,
  parsePostgresUrl,
  type PostgresSettings,
  type PostgresSettingsOverrides,
  type PostgresSslMode,
} from './options.js';
export { isUnavailable as isPostgresUnavailableError } from './errors.js';

/**
 * Creates a PostgreSQL driver from a URL or options and opens it with `tables`. Rejects with
 * `StorageUnavailableError` when the server cannot be reached (the pool is closed again then).
 */
export async function openPostgres(
  target: string | PostgresDriverOptions,
  tables: readonly TableDescriptor[] = [],
): Promise<PostgresDriver> {
  const driver = new PostgresDriver(target);
  try {
    await driver.open(tables);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return driver;
}
