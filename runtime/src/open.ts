import type { StorageDriver } from './driver.js';

/**
 * Creates the driver a `DATABASE_URL` names, loading only that driver's module (and so only its
 * database client): `sqlite:<file>`, `sqlite::memory:`, `postgres://…` or `postgresql://…`.
 */
export async function createDriver(url: string): Promise<StorageDriver> {
  if (url.startsWith('sqlite:')) {
    const sqlite = await import('./sqlite/index.js');
    return new sqlite.SqliteDriver(sqlite.parseSqliteUrl(url));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const postgres = await import('./postgres/index.js');
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
