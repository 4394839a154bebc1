/**
 * Connections of the PostgreSQL driver: the `pg.Pool` settings made from the driver's settings,
 * and how statements run on a pooled client — a broken client is discarded, connection errors
 * become `StorageUnavailableError`, serialization failures and deadlocks are run again.
 */
import type pg from 'pg';
import { describeError, isRetryable, isUnavailable, translateError } from './errors.js';
import type { PostgresDriverOptions, PostgresSettings } from './options.js';
import { driverTypes } from './types.js';

/** How often a write is run again after a serialization failure or a deadlock (SQLSTATE 40001/40P01). */
const MAX_ATTEMPTS = 5;

/** The pool settings of a driver with settings `s`; `pool` (from the options) is merged last. */
export function poolConfigOf(
  s: PostgresSettings,
  pool: PostgresDriverOptions['pool'],
): pg.PoolConfig {
  const poolConfig: pg.PoolConfig = {
    host: s.host,
    port: s.port,
    user: s.user,
    password: s.password,
    database: s.database,
    max: s.poolMax,
    idleTimeoutMillis: s.idleTimeoutMs,
    connectionTimeoutMillis: s.connectTimeoutMs,
    ssl: s.ssl,
    application_name: s.applicationName,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: driverTypes,
    ...(s.statementTimeoutMs > 0
      ? {
          statement_timeout: s.statementTimeoutMs,
          // Client-side guard for a server that stops answering (network partition, SIGSTOP):
          // slightly longer than the server's own timeout, so that one normally fires first.
          query_timeout: s.statementTimeoutMs + Math.max(1000, s.connectTimeoutMs),
        }
      : {}),
    ...(s.options === undefined ? {} : { options: s.options }),
    ...(s.channelBinding ? { enableChannelBinding: true } : {}),
    ...pool,
  };
  for (const key of Object.keys(poolConfig) as (keyof pg.PoolConfig)[]) {
    if (poolConfig[key] === undefined) delete poolConfig[key];
  }
  return poolConfig;
}

/** Clients of the pools that have served a call before: a broken one of them may have died idle. */
const served = new WeakSet<pg.PoolClient>();

/**
 * Whether `error` shows a session that the server ended (an administrator or `idle_session_timeout`
 * terminated it, a restart of the server or of a pooler) or a client that had already lost its
 * connection: a session so ended rolled back whatever it had begun.
 */
function sessionEnded(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '57P01' || code === '57P02' || code === '57P05') return true;
  const message = (error as { message?: unknown } | null)?.message;
  return (
    typeof message === 'string' &&
    /is not queryable|^Connection terminated unexpectedly/i.test(message)
  );
}

/**
 * Runs `fn` on a pooled client. A client whose connection failed is discarded instead of being
 * returned to the pool; connection-level errors become `StorageUnavailableError`. A pooled
 * connection the server ended while it sat idle (the pool hears of that only when it next reads
 * from it) is replaced and `fn` run once more on a fresh one: the ended session rolled back
 * whatever `fn` had begun on it.
 */
export async function withClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  try {
    return await onClient(pool, fn);
  } catch (error) {
    if (!(error instanceof DiedIdle)) throw error;
    return await onClient(pool, fn, false);
  }
}

/** Thrown by `onClient` for a reused client whose session turned out to have ended. */
class DiedIdle extends Error {}

async function onClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  retry = true,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw translateError(error);
  }
  const reused = served.has(client);
  served.add(client);
  let broken: Error | undefined;
  // A checked-out client emits 'error' when its connection drops between queries; without a
  // listener that would be an uncaught exception.
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    return await fn(client);
  } catch (error) {
    if (isUnavailable(error))
      broken ??= error instanceof Error ? error : new Error(describeError(error));
    if (retry && reused && sessionEnded(error))
      throw new DiedIdle('session ended', { cause: error });
    throw translateError(error);
  } finally {
    client.off('error', onError);
    client.release(broken ?? false);
  }
}

/** Runs `fn` in a transaction on one client, all of it again on serialization failures and deadlocks. */
export function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withClient(pool, async (client) => {
    for (let attempt = 1; ; attempt++) {
      await client.query('BEGIN');
      try {
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
        await sleep(Math.random() * 20 * attempt);
      }
    }
  });
}

/**
 * Runs `fn` on `client`, inside its open transaction, in a savepoint: when `fn` fails, what it
 * did is rolled back and the transaction stays usable.
 */
export async function inSavepoint<T>(client: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
  await client.query('SAVEPOINT "_eg_write"');
  try {
    const result = await fn();
    await client.query('RELEASE SAVEPOINT "_eg_write"');
    return result;
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT "_eg_write"').catch(() => undefined);
    await client.query('RELEASE SAVEPOINT "_eg_write"').catch(() => undefined);
    throw error;
  }
}

/** One statement, re-run on serialization failures and deadlocks. */
export function runStatement(
  pool: pg.Pool,
  config: pg.QueryConfig | pg.QueryArrayConfig,
): Promise<pg.QueryResult> {
  return withClient(pool, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.query(config as pg.QueryConfig);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
        await sleep(Math.random() * 20 * attempt);
      }
    }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
