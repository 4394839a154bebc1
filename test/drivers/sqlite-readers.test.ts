/**
 * The SQLite driver's readers: list and count queries of a file database run in worker threads,
 * so a slow one leaves the event loop free, and one over its time budget is stopped with a 503
 * while the next query runs on a fresh reader.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDriver } from '../../runtime/src/sqlite/driver.js';
import { resolveSqliteOptions } from '../../runtime/src/sqlite/options.js';
import { QueryTimeoutError, ReadPool } from '../../runtime/src/sqlite/readers.js';

const dir = mkdtempSync(join(tmpdir(), 'eg-readers-'));
const file = join(dir, 'readers.db');
const setup = new Database(file);
setup.pragma('journal_mode = WAL');
setup.exec('CREATE TABLE t (n INTEGER)');
setup.prepare('INSERT INTO t VALUES (?)').run(42);
afterAll(() => {
  setup.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A query that keeps SQLite busy for a second or two. */
const SLOW =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000000) SELECT count(*) FROM c';

describe('SQLite readers', () => {
  it('run queries in a worker and answer rows or a value', async () => {
    const pool = new ReadPool(file, 1000, 2, 5000);
    try {
      expect(await pool.run('SELECT n FROM t', [], 'rows')).toEqual([[42]]);
      expect(await pool.run('SELECT count(*) FROM t WHERE n = ?', [42], 'value')).toBe(1);
      await expect(pool.run('SELECT nope FROM t', [], 'rows')).rejects.toThrow(/no such column/);
    } finally {
      await pool.close();
    }
  });

  it('leave the event loop free while a slow query runs', async () => {
    const pool = new ReadPool(file, 1000, 1, 60_000);
    try {
      const order: string[] = [];
      const slow = pool.run(SLOW, [], 'value').then(
        () => order.push('query'),
        () => order.push('query'),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push('timer'); // a timer of the main thread fired while the query was running
      await pool.close(); // ends the slow query
      await slow;
      expect(order).toEqual(['timer', 'query']);
    } finally {
      await pool.close();
    }
  });

  it('stop a query over its budget with a 503, and serve the next one', async () => {
    // The budget also covers starting the reader that replaces the stopped one (slower with
    // coverage on a busy machine), so it is 500 ms: still well under the seconds SLOW takes.
    const pool = new ReadPool(file, 1000, 1, 500);
    try {
      const error = await pool.run(SLOW, [], 'value').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QueryTimeoutError);
      expect(error).toMatchObject({
        status: 503,
        reason:
          'The query took longer than 500 ms (QUERY_TIMEOUT_MS) and was stopped; narrow the filters or page with a smaller limit',
      });
      expect(await pool.run('SELECT n FROM t', [], 'rows')).toEqual([[42]]);
    } finally {
      await pool.close();
    }
  });

  it('open their connection with the page cache asked for (SQLITE_CACHE_SIZE, default 16 MiB)', async () => {
    const pool = new ReadPool(file, 1000, 1, 5000, 4096);
    try {
      expect(await pool.run('PRAGMA cache_size', [], 'value')).toBe(-4096);
    } finally {
      await pool.close();
    }
    expect(resolveSqliteOptions({ filename: file }).cacheSizeKiB).toBe(16_384);
    expect(
      resolveSqliteOptions({ filename: file, env: { SQLITE_CACHE_SIZE: '65536' } }).cacheSizeKiB,
    ).toBe(65_536);
    expect(() => resolveSqliteOptions({ filename: file, env: { SQLITE_CACHE_SIZE: '0' } })).toThrow(
      'SQLITE_CACHE_SIZE must be a whole number of at least 1, not "0"',
    );
    const driver = new SqliteDriver({ filename: join(dir, 'main.db'), cacheSizeKiB: 2048 });
    await driver.open([]);
    try {
      // The main connection answers the pages a composite index bounds: it has the same cache.
      const db = Reflect.get(driver, 'db') as Database.Database;
      expect(db.pragma('cache_size', { simple: true })).toBe(-2048);
    } finally {
      await driver.close();
    }
  });
});
