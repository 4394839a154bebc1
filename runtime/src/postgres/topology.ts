/**
 * Where the PostgreSQL driver's connections go when there is more than one server (SPEC §15):
 *
 * - `DATABASE_LISTEN_URL`: a direct connection to the primary for what needs a session of its
 *   own — the LISTEN connection of the change events and the start-up work (`open()`: schema,
 *   migrations, tables, under a session advisory lock). Setting it says that `DATABASE_URL` is a
 *   pooler in transaction mode (PgBouncer's `pool_mode = transaction`): the pool's statements then
 *   run unnamed (no prepared statement outlives its transaction on a server connection another
 *   client may get next), and no session setting is sent at connect (a pooler refuses startup
 *   parameters such as `statement_timeout`; set it for the role or database instead). Every
 *   statement of the driver is then a transaction of its own, or inside an explicit
 *   BEGIN … COMMIT on one connection; nothing relies on session state.
 * - `DATABASE_READ_URL`: read replicas (replicas.ts).
 */
import pg from 'pg';
import type { Environment } from '../env.js';
import { PostgresConfigError, parsePostgresUrl, type PostgresSettings } from './options.js';
import { poolConfigOf } from './pool.js';

/** The direct connection's settings, when `DATABASE_LISTEN_URL` is set (the schema: the primary's). */
export function listenSettingsFromEnv(
  env: Environment,
  base: PostgresSettings,
): PostgresSettings | undefined {
  const url = env['DATABASE_LISTEN_URL']?.trim() ?? '';
  if (url === '') return undefined;
  try {
    return parsePostgresUrl(url, env, base.schema === undefined ? {} : { schema: base.schema });
  } catch (error) {
    throw new PostgresConfigError(`DATABASE_LISTEN_URL: ${(error as Error).message}`);
  }
}

/** The config of a direct (unpooled) connection: no statement timeout, it waits. */
export function directClientConfig(settings: PostgresSettings): pg.ClientConfig {
  const config: pg.ClientConfig = { ...poolConfigOf(settings, undefined) };
  delete config.statement_timeout;
  delete config.query_timeout;
  return config;
}

/**
 * A `pg` client that never names its statements: behind a pooler in transaction mode a named
 * prepared statement would be created on one server connection and looked for on another.
 */
export class UnnamedStatementClient extends pg.Client {
  // pg's overloads cannot be restated one by one; every form forwards to the original.
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config) {
      const rest: Record<string, unknown> = { ...(config as Record<string, unknown>) };
      delete rest['name'];
      args[0] = rest;
    }
    return (super.query as (...forwarded: unknown[]) => never)(...args);
  }
}

/** Pool settings for a transaction-mode pooler: unnamed statements, no startup settings. */
export function poolerConfig(config: pg.PoolConfig): pg.PoolConfig {
  const pooled: pg.PoolConfig = { ...config, Client: UnnamedStatementClient };
  delete pooled.statement_timeout;
  delete pooled.options;
  return pooled;
}
