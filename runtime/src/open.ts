import type { StorageDriver } from './driver.js';

/**
 * Creates the driver a `DATABASE_URL` names, loading only that driver's module (and so only its
 * database client): `sqlite:<file>`, `sqlite::memory:`, `postgres://…` or `postgresql://…`.
 */
export async function createDriver(url: string): Promise<StorageDriver> {
  const scheme = url.slice(0, url.indexOf(':') + 1).toLowerCase();
  if (scheme === 'sqlite:') {
    const sqlite = await importDriver(
      () => import('./sqlite/index.js'),
      'SQLite',
      'better-sqlite3',
    );
    return new sqlite.SqliteDriver(sqlite.parseSqliteUrl(url));
  }
  if (scheme === 'postgres:' || scheme === 'postgresql:') {
    const postgres = await importDriver(() => import('./postgres/index.js'), 'PostgreSQL', 'pg');
    return new postgres.PostgresDriver(postgres.parsePostgresUrl(url));
  }
  throw new Error(
    `Unsupported DATABASE_URL ${redactUrl(url)}: use sqlite:<file>, sqlite::memory: or postgres://user@host:port/database`,
  );
}

/** A URL fit for logs: the password replaced by `***`. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
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
