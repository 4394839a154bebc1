/**
 * The SQLite driver's readers: list and count queries of a file database run in worker threads,
 * so a slow one leaves the event loop free, and one over its time budget is stopped with a 503
 * while the next query runs on a fresh reader.
 *
 * A slow query is made slow by the test, not hoped for: a second file in rollback-journal mode
 * whose exclusive lock the test holds, so that a reader's query waits (in SQLite's busy handler,
 * off the main thread) until the test releases the lock — however fast the machine.
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

/** A database in rollback-journal mode: readers cannot read while another connection writes. */
const lockable = join(dir, 'lockable.db');
const locker = new Database(lockable);
locker.pragma('journal_mode = DELETE');
locker.exec('CREATE TABLE t (n INTEGER)');
locker.prepare('INSERT INTO t VALUES (?)').run(7);

afterAll(() => {
  if (locker.inTransaction) locker.exec('ROLLBACK');
  locker.close();
  setup.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Holds the exclusive lock of `lockable` until the returned function is called: meanwhile every
 * reader's query of that file waits.
 */
function holdLock(): () => void {
  locker.exec('BEGIN EXCLUSIVE');
  return () => {
    if (locker.inTransaction) locker.exec('COMMIT');
  };
}

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

  it('leave the event loop free while a query runs, and answer it once it can go on', async () => {
    // The busy timeout is far longer than the test: only the release lets the query finish.
    const pool = new ReadPool(lockable, 60_000, 1, 60_000);
    const release = holdLock();
    try {
      const order: string[] = [];
      const slow = pool.run('SELECT n FROM t', [], 'rows').then((rows) => {
        order.push('query');
        return rows;
      });
      // A timer of the main thread fires while the query cannot have finished.
      await new Promise((resolve) => setTimeout(resolve, 0));
      order.push('timer');
      // And the main thread's own SQLite work goes on.
      expect(setup.prepare('SELECT n FROM t').pluck().get()).toBe(42);
      order.push('main thread read');
      release();
      expect(await slow).toEqual([[7]]);
      expect(order).toEqual(['timer', 'main thread read', 'query']);
    } finally {
      release();
      await pool.close();
    }
  });

  it('stop a query over its budget with a 503, and serve the next one', async () => {
    // The query waits on the lock for as long as the test holds it: it always outlasts the budget.
    const pool = new ReadPool(lockable, 60_000, 1, 500);
    // The reader is started first (opening its connection waits on the lock too, and the budget
    // does not count a reader's start).
    expect(await pool.run('SELECT n FROM t', [], 'rows')).toEqual([[7]]);
    const release = holdLock();
    try {
      const error = await pool
        .run('SELECT n FROM t', [], 'value')
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QueryTimeoutError);
      expect(error).toMatchObject({
        status: 503,
        reason:
          'The query took longer than 500 ms (QUERY_TIMEOUT_MS) and was stopped; narrow the filters or page with a smaller limit',
      });
      release();
      expect(await pool.run('SELECT n FROM t', [], 'rows')).toEqual([[7]]);
    } finally {
      release();
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
