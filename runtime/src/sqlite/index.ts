/**
 * The `@entity-gen/runtime/sqlite` subpath: the SQLite driver, its options and `openSqlite`.
 */
import type { TableDescriptor } from '../driver.js';
import { SqliteDriver } from './driver.js';
import { parseSqliteUrl, type SqliteOptions } from './options.js';

export { SqliteDriver, type QueryPlanRow, type SqliteDiagnostics } from './driver.js';
export {
  DEFAULT_BUSY_TIMEOUT_MS,
  parseSqliteUrl,
  type SqliteOptions,
  type SqliteSynchronous,
} from './options.js';
export { SQLITE_COLUMN_TYPES } from './schema.js';
export { decimalSortKey } from './decimal-key.js';

/**
 * Creates a SQLite driver from a `sqlite:` URL (see `parseSqliteUrl`) or options and opens it
 * with `tables` (creating missing tables and indexes). More tables can be added later with
 * `driver.open(moreTables)`.
 */
export async function openSqlite(
  target: string | SqliteOptions,
  tables: readonly TableDescriptor[] = [],
): Promise<SqliteDriver> {
  const driver = new SqliteDriver(typeof target === 'string' ? parseSqliteUrl(target) : target);
  try {
    await driver.open(tables);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return driver;
}
