/**
 * Picks and creates the storage driver a `DATABASE_URL` names (SQLite or PostgreSQL, loaded on
 * demand), and redacts URLs for logs.
 */
import type { StorageDriver } from './driver.js';
import type { Environment } from './env.js';

/**
 * Creates the driver a `DATABASE_URL` names, loading only that driver's module (and so only its
 * database client): `sqlite:<file>`, `sqlite::memory:`, `postgres://…` or `postgresql://…`. The
 * driver reads its further settings (`SQLITE_SYNCHRONOUS`, `PGPOOL_MAX`, …) from `env`.
 */
export async function createDriver(url: string, env: Environment = {}): Promise<StorageDriver> {
  const scheme = url.slice(0, url.indexOf(':') + 1).toLowerCase();
  if (scheme === 'sqlite:') {
    const sqlite = await importDriver(
      () => import('./sqlite/index.js'),
      'SQLite',
      'better-sqlite3',
    );
    return new sqlite.SqliteDriver({ ...sqlite.parseSqliteUrl(url), env });
  }
  if (scheme === 'postgres:' || scheme === 'postgresql:') {
    const postgres = await importDriver(() => import('./postgres/index.js'), 'PostgreSQL', 'pg');
    // Options with the environment: DATABASE_READ_URL and DATABASE_LISTEN_URL come from it too.
    return new postgres.PostgresDriver({ url, env });
  }
  throw new Error(
    `Unsupported DATABASE_URL ${redactUrl(url)}: use sqlite:<file>, sqlite::memory: or postgres://user@host:port/database`,
  );
}

/** A URL fit for logs: the password replaced by `***`. */
export function redactUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  let redacted = url;
  if (scheme !== null) {
    const rest = url.slice(scheme[0].length);
    const queryAt = rest.search(/[?#]/);
    const authority = queryAt === -1 ? rest : rest.slice(0, queryAt);
    // A host cannot contain '@', so the last one ends the user info, even when an unencoded
    // password holds '@', ':' or '/' itself.
    const at = authority.lastIndexOf('@');
    if (at !== -1) {
      const userInfo = authority.slice(0, at);
      const colon = userInfo.indexOf(':');
      const user = colon === -1 ? userInfo : `${userInfo.slice(0, colon)}:***`;
      redacted = `${scheme[0]}${user}${rest.slice(at)}`;
    }
  }
  // Query parameters that carry secrets (password=, sslpassword=, …) keep their name only.
  return redacted.replace(
    /([?&][^=&#]*(?:pass|secret|token)[^=&#]*=)[^&#]*/gi,
    (_match, name: string) => `${name}***`,
  );
}

/** Loads a driver module, explaining a missing database client instead of a bare resolve error. */
async function importDriver<T>(
  load: () => Promise<T>,
  database: string,
  client: string,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String(error).includes(`'${client}'`)) {
      throw new Error(
        `DATABASE_URL selects ${database}, but the ${client} package is not installed: run npm install ${client}, or regenerate the service with --driver both`,
        { cause: error },
      );
    }
    throw error;
  }
}
