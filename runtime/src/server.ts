/**
 * `startServer`: how a generated `server.ts` runs its service. Opens the storage (through
 * `RetryingOpenDriver`, so an unreachable database means 503s and retries, not a failed start),
 * applies migrations, listens with request limits, and shuts down gracefully on SIGTERM/SIGINT.
 */
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { resolve } from 'node:path';
import type { Authenticator } from './auth/credentials.js';
import { errorBody } from './envelope.js';
import type { StorageDriver, TableDescriptor } from './driver.js';
import type { Environment } from './env.js';
import { EventHub } from './events/hub.js';
import { historyRetentionFromEnv, startHistoryTrimming } from './history-retention.js';
import { eventSettingsFromEnv } from './events/settings.js';
import { adminEnabledFromEnv } from './admin.js';
import { createLogger } from './logger.js';
import { loadMigrations } from './migrations.js';
import { createDriver, redactUrl } from './open.js';
import { RetryingOpenDriver } from './retrying-driver.js';
import type { ServiceApp, ServiceOptions } from './service.js';

/** How a generated `server.ts` starts its service. */
export interface StartOptions {
  readonly createApp: (options: ServiceOptions) => ServiceApp;
  readonly tables: readonly TableDescriptor[];
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /**
   * The environment the storage driver reads its further settings from (`SQLITE_SYNCHRONOUS`,
   * `PGPOOL_MAX`, …; docs/configuration.md). A generated `server.ts` passes `process.env`.
   */
  readonly env: Environment;
  readonly logLevel?: string;
  readonly bodyLimit?: number;
  /** Credentials for the access rules (see `authFromEnv`); none: only public methods work. */
  readonly auth?: Authenticator;
  /** Origins allowed to call the service from a browser (`CORS_ORIGINS`). */
  readonly corsOrigins?: readonly string[];
  /**
   * Time a client has to send a whole request, headers and body (default 30 s,
   * `REQUEST_TIMEOUT_MS`); the headers must arrive within it too (at most 20 s).
   */
  readonly requestTimeoutMs?: number;
  /** Open connections at most; more are refused (default 1024, `MAX_CONNECTIONS`). */
  readonly maxConnections?: number;
  /** The largest page a list answers (default 1000, `MAX_PAGE_SIZE`). */
  readonly maxPageSize?: number;
  /** The key that signs list cursors (`CURSOR_SECRET`); default: generated, kept in the storage. */
  readonly cursorSecret?: string;
  /** Trust the `X-Forwarded-*` headers of a proxy in front (`TRUST_PROXY=true`; default false). */
  readonly trustProxy?: boolean;
  /** Stop waiting for open requests after this long on shutdown (default 10 s). */
  readonly shutdownTimeoutMs?: number;
  /**
   * Folder of the service's migration files (`<seq>_<slug>_<hash>.<dialect>.sql`); the files of
   * the storage's dialect are applied before the service listens (docs/migrations.md). Default
   * `<cwd>/migrations`; a missing folder means no migrations. A generated `server.ts` passes the
   * folder next to its own `src`/`dist`, e.g.
   * `fileURLToPath(new URL('../migrations', import.meta.url))`.
   */
  readonly migrationsDir?: string;
}

/** A started service. */
export interface RunningService {
  readonly server: Server;
  readonly driver: StorageDriver;
  /** Stops accepting connections, waits for open requests, closes the storage. */
  close(): Promise<void>;
  /**
   * Settles once the service has stopped: resolves after a graceful shutdown (`close()`, SIGTERM
   * or SIGINT), rejects when the shutdown failed or the service had to stop because its storage
   * became unusable (logged as `fatal`). What the process does then is the caller's choice: a
   * generated `server.ts` exits with 0 or 1.
   */
  readonly stopped: Promise<void>;
}

/** The levels pino knows. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Starts a service: opens the storage (retrying with backoff while it is unreachable, answering
 * 503 meanwhile), listens, and shuts down gracefully on SIGTERM and SIGINT. It never ends the
 * process itself: see `RunningService.stopped`.
 */
export async function startServer(options: StartOptions): Promise<RunningService> {
  const level = options.logLevel ?? 'info';
  if (!LOG_LEVELS.includes(level)) {
    throw new Error(
      `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(level)}`,
    );
  }
  const logger = createLogger({ level });
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new Error(`PORT must be an integer from 0 to 65535, not ${options.port}`);
  }
  const stopped = deferred();
  let failure: { readonly error: unknown } | undefined;
  let started = false;
  /** Stops the service because it cannot go on; `stopped` rejects with `error`. */
  const stop = (error: unknown): void => {
    failure ??= { error };
    // Before the service listens, it stops as soon as it does (see below).
    if (started) void close().catch(() => undefined);
  };
  // The change events' settings (EVENTS, EVENTS_RETENTION, …) come from the same environment.
  const eventSettings = eventSettingsFromEnv(options.env);
  const historyRetentionMs = historyRetentionFromEnv(options.env);
  const admin = adminEnabledFromEnv(options.env);
  const inner = await createDriver(options.databaseUrl, options.env);
  const storage = redactUrl(options.databaseUrl);
  const migrationsDir = resolve(options.migrationsDir ?? 'migrations');
  const migrations = await loadMigrations(migrationsDir, inner.dialect);
  const driver = new RetryingOpenDriver(
    inner,
    options.tables,
    {
      migrations,
      events: eventSettings.enabled,
      onMigrationsApplied: (ids) =>
        logger.info({ migrations: ids, migrationsDir }, `applied ${ids.length} migration(s)`),
    },
    logger,
    storage,
    (fatal) => {
      // Reachable again but unusable (e.g. the database is ahead of the code): the service
      // cannot serve, so it stops as a failed first start does.
      const reason = fatal instanceof Error ? fatal.message : String(fatal);
      logger.fatal({ storage, err: fatal }, `storage cannot be used: ${reason}`);
      stop(fatal);
    },
  );
  try {
    await driver.openOnce();
  } catch (error) {
    // A refused start (migrations, bad tables) must not leave connections behind.
    await inner.close().catch(() => undefined);
    throw error;
  }
  const events = new EventHub(driver, { settings: eventSettings, logger });
  const app = options.createApp({
    driver,
    logger,
    events,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
    ...(options.maxPageSize === undefined ? {} : { maxPageSize: options.maxPageSize }),
    ...(options.cursorSecret === undefined ? {} : { cursorSecret: options.cursorSecret }),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(admin ? {} : { admin }),
  });
  const server = limitedServer(app, options);
  server.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  logger.info(
    { port, host: options.host, storage: driver.dialect },
    `listening on http://${options.host}:${port}`,
  );
  if (eventSettings.enabled) events.start();
  const stopTrimming =
    historyRetentionMs !== undefined && options.tables.some((t) => t.history === true)
      ? startHistoryTrimming(driver, historyRetentionMs, logger)
      : () => undefined;

  const shutdown = async (): Promise<void> => {
    // A second signal during the shutdown gets Node's default: the process ends at once.
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    logger.info('shutting down');
    const timeout = setTimeout(
      () => server.closeAllConnections(),
      options.shutdownTimeoutMs ?? 10_000,
    );
    timeout.unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Event streams never end by themselves: end them cleanly (clients resume elsewhere with
    // their last id), then their connections are idle like the others.
    await events.close();
    stopTrimming();
    server.closeIdleConnections();
    await closed;
    clearTimeout(timeout);
    await driver.close();
    logger.info('stopped');
  };
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    if (closing === undefined) {
      closing = shutdown();
      closing.then(
        () => (failure === undefined ? stopped.resolve() : stopped.reject(failure.error)),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          stopped.reject(error);
        },
      );
    }
    return closing;
  };
  function onSignal(signal: NodeJS.Signals): void {
    logger.info({ signal }, 'signal received');
    void close().catch(() => undefined); // reported through `stopped`
  }
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  started = true;
  // The storage turned out unusable while the service was starting to listen.
  if (failure !== undefined) void close().catch(() => undefined);
  return { server, driver, close, stopped: stopped.promise };
}

/** A promise with its settle functions. */
function deferred(): {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
} {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // A caller that ignores `stopped` must not get an unhandled rejection for it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Default of `requestTimeoutMs`. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Default of `maxConnections`. */
const DEFAULT_MAX_CONNECTIONS = 1024;
/** An idle keep-alive connection is closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/**
 * Bounds what one client can hold on to: a slow upload or a trickle of header bytes is cut off
 * after the request timeout, idle keep-alive connections close, the number of connections is
 * capped, and requests Node itself refuses (malformed, headers too large, timed out) get the JSON
 * envelope like every other answer.
 */
function limitedServer(app: ServiceApp, options: StartOptions): Server {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const server = createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(requestTimeout, 20_000),
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // How often the timeouts above are checked (Node's default, 30 s, would let a slow client
      // hold its connection up to that much longer).
      connectionsCheckingInterval: Math.min(1_000, requestTimeout),
    },
    app.callback(),
  );
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request headers are too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, `The request did not arrive within ${requestTimeout} ms`]
          : [400, 'Malformed HTTP request'];
    const body = JSON.stringify(errorBody(reason));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
  return server;
}
