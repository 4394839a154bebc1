import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ColumnDescriptor, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { isDuplicateKeyError, isStorageUnavailableError } from '../../runtime/src/errors.js';
import {
  SqliteDriver,
  decimalSortKey,
  openSqlite,
  parseSqliteUrl,
  type QueryPlanRow,
} from '../../runtime/src/sqlite/index.js';
import { Checkpointer } from '../../runtime/src/sqlite/checkpointer.js';
import { describeDriverContract } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'eg-sqlite-test-'));
let counter = 0;
const freshFile = (): string => join(root, `db-${++counter}`, 'service.db');

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

// ------------------------------------------------------------------------------------------------
// The contract, in memory and on a file

describeDriverContract('sqlite :memory:', async () => new SqliteDriver({ filename: ':memory:' }), {
  synchronousReads: true,
});

let contractFile = '';
describeDriverContract(
  'sqlite file',
  async () => {
    contractFile = freshFile();
    return new SqliteDriver({ filename: contractFile });
  },
  { reopen: async () => new SqliteDriver({ filename: contractFile }), synchronousReads: true },
);

// ------------------------------------------------------------------------------------------------
// SQLite specifics

const col = (
  name: string,
  kind: ColumnDescriptor['kind'],
  extra: Partial<ColumnDescriptor> = {},
): ColumnDescriptor => ({
  name,
  kind,
  fieldType: kind.toUpperCase(),
  required: false,
  indexed: false,
  ...extra,
});

const ITEMS: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  key: ['id'],
  columns: [
    col('id', 'text', { required: true, indexed: true }),
    col('name', 'text', { indexed: true }),
    col('qty', 'integer', { required: true, indexed: true }),
    col('price', 'decimal', { indexed: true }),
    col('active', 'boolean'),
    col('day', 'date'),
    col('at', 'datetime'),
    col('ratio', 'double'),
    col('meta', 'json', { indexed: true }),
  ],
};

describe('sqlite driver specifics', () => {
  const drivers: SqliteDriver[] = [];
  const track = <T extends SqliteDriver>(driver: T): T => {
    drivers.push(driver);
    return driver;
  };
  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const driver of drivers.splice(0)) await driver.close();
  });

  it('a database from before change events gets its outbox when opened, and events start', async () => {
    const file = freshFile();
    const first = track(new SqliteDriver({ filename: file }));
    await first.open([ITEMS]);
    await first.insert(ITEMS, [{ id: 'old', qty: 1 }], 1000);
    await first.close();
    // As a service that ran an older runtime left it: no outbox table.
    const raw = new Database(file);
    raw.exec('DROP TABLE "_eg_events"');
    raw.close();
    const again = track(new SqliteDriver({ filename: file }));
    await again.open([ITEMS]);
    expect(await again.changes.bounds()).toEqual({ first: 1, last: 0 });
    await again.update(ITEMS, ['old'], { id: 'old', qty: 2 }, 1, 2000);
    expect((await again.changes.read(0, 10)).map((c) => [c.seq, c.op, c.id])).toEqual([
      [1, 'updated', 'old'],
    ]);
  });

  describe('parseSqliteUrl', () => {
    it.each<[string, ReturnType<typeof parseSqliteUrl>]>([
      ['sqlite::memory:', { filename: ':memory:' }],
      ['sqlite:./data/service.db', { filename: './data/service.db' }],
      ['sqlite:data.db', { filename: 'data.db' }],
      ['sqlite:/abs/path.db', { filename: '/abs/path.db' }],
      ['sqlite:///abs/path.db', { filename: '/abs/path.db' }],
      ['sqlite://relative/dir/x.db', { filename: 'relative/dir/x.db' }],
      ['sqlite://:memory:', { filename: ':memory:' }],
      ['SQLite:x.db', { filename: 'x.db' }],
      [
        'sqlite:x.db?synchronous=normal&busy_timeout=250',
        { filename: 'x.db', synchronous: 'NORMAL', busyTimeoutMs: 250 },
      ],
      ['sqlite::memory:?busyTimeoutMs=10', { filename: ':memory:', busyTimeoutMs: 10 }],
    ])('%s', (url, expected) => {
      expect(parseSqliteUrl(url)).toEqual(expected);
    });

    it.each([
      'postgres://user:secret@host/db',
      'file:x.db',
      'x.db',
      'sqlite:',
      'sqlite://',
      'sqlite:?synchronous=FULL',
      'sqlite:x.db?foo=1',
      'sqlite:x.db?synchronous=OFF',
      'sqlite:x.db?busy_timeout=soon',
    ])('rejects %s with a clear error that leaks no password', (url) => {
      let message = '';
      try {
        parseSqliteUrl(url);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain('secret');
    });
  });

  describe('connection settings', () => {
    it('WAL, synchronous=FULL and a 5 s busy timeout by default', async () => {
      const driver = track(await openSqlite(`sqlite:${freshFile()}`));
      expect(driver.diagnostics()).toMatchObject({
        journalMode: 'wal',
        synchronous: 'FULL',
        busyTimeoutMs: 5000,
      });
    });

    it('synchronous=NORMAL and busy timeout from options', async () => {
      const driver = track(
        await openSqlite({ filename: freshFile(), synchronous: 'NORMAL', busyTimeoutMs: 1234 }),
      );
      expect(driver.diagnostics()).toMatchObject({ synchronous: 'NORMAL', busyTimeoutMs: 1234 });
    });

    it('SQLITE_SYNCHRONOUS=NORMAL from the env option; an explicit option wins', async () => {
      const env = { SQLITE_SYNCHRONOUS: 'normal' };
      const fromEnv = track(await openSqlite({ filename: freshFile(), env }));
      expect(fromEnv.diagnostics().synchronous).toBe('NORMAL');
      const explicit = track(
        await openSqlite({ ...parseSqliteUrl(`sqlite:${freshFile()}?synchronous=FULL`), env }),
      );
      expect(explicit.diagnostics().synchronous).toBe('FULL');
    });

    it('does not read process.env: the caller hands the environment in', async () => {
      vi.stubEnv('SQLITE_SYNCHRONOUS', 'normal');
      const driver = track(await openSqlite(`sqlite:${freshFile()}`));
      expect(driver.diagnostics().synchronous).toBe('FULL');
    });

    it('rejects an invalid SQLITE_SYNCHRONOUS', () => {
      expect(
        () => new SqliteDriver({ filename: ':memory:', env: { SQLITE_SYNCHRONOUS: 'OFF' } }),
      ).toThrow(/SQLITE_SYNCHRONOUS/);
    });

    it('checkpoints the WAL in a worker after writes; the connection itself only past 10 000 pages', async () => {
      const file = freshFile();
      const driver = track(await openSqlite({ filename: file }, [ITEMS]));
      expect(driver.diagnostics().walAutocheckpoint).toBe(10_000);
      // About 1 500 pages of records: past SQLite's own bound of 1 000 pages.
      const records = Array.from({ length: 3000 }, (_, i) => ({
        id: `wal-${i}`,
        name: `${i} ${'x'.repeat(1800)}`,
        qty: i,
      }));
      await driver.insert(ITEMS, records, 1000);
      let stats = driver.diagnostics().checkpoints;
      for (let waited = 0; waited < 10_000 && (stats?.checkpoints ?? 0) === 0; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        stats = driver.diagnostics().checkpoints;
      }
      expect(stats).toMatchObject({ lastError: undefined });
      expect(stats!.checkpoints).toBeGreaterThanOrEqual(1);
      expect(stats!.lastLog).toBeGreaterThan(1000);
      expect(stats!.lastCheckpointed).toBe(stats!.lastLog);
      // The pages are in the database file itself now.
      expect(statSync(file).size).toBeGreaterThan(1000 * 4096);
      expect((await driver.get(ITEMS, ['wal-2999']))?.record).toMatchObject({ qty: 2999 });
    });

    it('a checkpoint worker that cannot open the file gives up once and says so (the driver then checkpoints on its connection)', async () => {
      let gaveUp = 0;
      const checkpointer = new Checkpointer(join(root, 'missing', 'none.db'), 100, () => gaveUp++);
      checkpointer.committed();
      for (let waited = 0; waited < 10_000 && gaveUp === 0; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(gaveUp).toBe(1);
      expect(checkpointer.done.lastError).toMatch(/unable to open|does not exist|no such/i);
      // Later commits start no other worker.
      checkpointer.committed();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(gaveUp).toBe(1);
      expect(checkpointer.done.checkpoints).toBe(0);
      await checkpointer.close();
    });

    it('in-memory databases have no WAL', async () => {
      const driver = track(await openSqlite('sqlite::memory:'));
      expect(driver.diagnostics().journalMode).toBe('memory');
    });

    it('creates the parent directories of the file', async () => {
      const file = join(root, `nested-${++counter}`, 'a', 'b', 'service.db');
      const driver = track(await openSqlite({ filename: file }, [ITEMS]));
      await driver.insert(ITEMS, [{ id: 'x', qty: 1 }], 1);
      const raw = new Database(file, { readonly: true });
      expect(raw.prepare('SELECT count(*) FROM item').pluck().get()).toBe(1);
      raw.close();
    });

    it('an unusable path is StorageUnavailableError', async () => {
      const blocker = join(root, `blocker-${++counter}`);
      writeFileSync(blocker, 'not a directory');
      const error = await openSqlite({ filename: join(blocker, 'x.db') }).catch((e: unknown) => e);
      expect(isStorageUnavailableError(error)).toBe(true);
    });

    it('a file that is not a database is StorageUnavailableError', async () => {
      const file = join(root, `garbage-${++counter}.db`);
      writeFileSync(
        file,
        'this is not an SQLite database, just some text that is long enough'.repeat(20),
      );
      const error = await openSqlite({ filename: file }, [ITEMS]).catch((e: unknown) => e);
      expect(isStorageUnavailableError(error)).toBe(true);
    });
  });

  describe('schema', () => {
    it('tables, types and indexes as documented; tables survive reopening', async () => {
      const file = freshFile();
      const first = track(await openSqlite({ filename: file }, [ITEMS]));
      await first.insert(
        ITEMS,
        [{ id: 'a', qty: 1, price: '2.50', active: true, meta: { k: 1 } }],
        10,
      );
      await first.close();

      const raw = new Database(file, { readonly: true });
      const sql = raw
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'item'")
        .pluck()
        .get() as string;
      expect(sql).toContain('WITHOUT ROWID');
      expect(sql).toContain('PRIMARY KEY ("id")');
      const columns = raw
        .prepare('SELECT name, type, "notnull" FROM pragma_table_info(\'item\')')
        .all();
      expect(columns).toEqual([
        { name: 'id', type: 'TEXT', notnull: 1 },
        { name: 'name', type: 'TEXT', notnull: 0 },
        { name: 'qty', type: 'INTEGER', notnull: 1 },
        { name: 'price', type: 'TEXT', notnull: 0 },
        { name: 'active', type: 'INTEGER', notnull: 0 },
        { name: 'day', type: 'TEXT', notnull: 0 },
        { name: 'at', type: 'TEXT', notnull: 0 },
        { name: 'ratio', type: 'REAL', notnull: 0 },
        { name: 'meta', type: 'TEXT', notnull: 0 },
        { name: '_eg_dec_price', type: 'TEXT', notnull: 0 },
        { name: '_eg_created_ms', type: 'INTEGER', notnull: 1 },
        { name: '_eg_updated_ms', type: 'INTEGER', notnull: 1 },
        { name: '_eg_version', type: 'INTEGER', notnull: 1 },
      ]);
      const indexes = raw
        .prepare(
          "SELECT il.name AS name, ii.name AS col FROM pragma_index_list('item') il " +
            "JOIN pragma_index_info(il.name) ii WHERE il.origin = 'c' ORDER BY ii.name",
        )
        .all();
      // id is the primary key (no extra index); meta is JSON (an index on JSON text is useless).
      expect(indexes).toEqual([
        { name: 'item__price__idx', col: '_eg_dec_price' },
        { name: 'item__name__idx', col: 'name' },
        { name: 'item__qty__idx', col: 'qty' },
      ]);
      expect(raw.prepare('SELECT * FROM "_eg_activity"').all()).toEqual([
        { entity: 'ITEM', last_create_ms: 10, last_update_ms: null, last_delete_ms: null },
      ]);
      const stored = raw
        .prepare('SELECT price, _eg_dec_price AS key, active, meta FROM item')
        .get();
      expect(stored).toEqual({
        price: '2.50',
        key: decimalSortKey('2.5'),
        active: 1,
        meta: '{"k":1}',
      });
      raw.close();

      const second = track(await openSqlite({ filename: file }, [ITEMS]));
      expect(await second.get(ITEMS, ['a'])).toEqual({
        record: { id: 'a', qty: 1, price: '2.50', active: true, meta: { k: 1 } },
        version: 1,
        createdAt: 10,
        updatedAt: 10,
      });
    });

    it('a table left by another schema fails open() with a clear error', async () => {
      const file = freshFile();
      mkdirSync(join(file, '..'), { recursive: true });
      const raw = new Database(file);
      raw.exec('CREATE TABLE item (id TEXT PRIMARY KEY, name TEXT)');
      raw.close();
      await expect(openSqlite({ filename: file }, [ITEMS])).rejects.toThrow(
        /lacks column\(s\) qty/,
      );
    });

    it('field names clashing with hidden columns are rejected', async () => {
      const bad: TableDescriptor = {
        ...ITEMS,
        columns: [...ITEMS.columns, col('_EG_VERSION', 'integer')],
      };
      await expect(openSqlite('sqlite::memory:', [bad])).rejects.toThrow(/clashes/);
    });

    it('open() can add tables later; unknown tables are a programming error', async () => {
      const driver = track(await openSqlite('sqlite::memory:'));
      await expect(driver.get(ITEMS, ['a'])).rejects.toThrow(/was not passed to open/);
      await driver.open([ITEMS]);
      expect(await driver.get(ITEMS, ['a'])).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('a write blocked past the busy timeout is StorageUnavailableError', async () => {
      const file = freshFile();
      const driver = track(await openSqlite({ filename: file, busyTimeoutMs: 50 }, [ITEMS]));
      const other = new Database(file);
      other.exec('BEGIN IMMEDIATE');
      try {
        const error = await driver.insert(ITEMS, [{ id: 'a', qty: 1 }], 1).catch((e: unknown) => e);
        expect(isStorageUnavailableError(error)).toBe(true);
        expect((error as Error).message).toMatch(/SQLITE_BUSY/);
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      await driver.insert(ITEMS, [{ id: 'a', qty: 1 }], 1);
      expect(await driver.count(ITEMS, { filters: [] })).toBe(1);
    });

    it('a writer waits for another process-like connection instead of failing', async () => {
      const file = freshFile();
      const driver = track(await openSqlite({ filename: file }, [ITEMS]));
      const worker = new Worker(
        `
        const { workerData, parentPort } = require('node:worker_threads');
        const Database = require(workerData.module);
        const db = new Database(workerData.file);
        db.exec('BEGIN IMMEDIATE');
        db.prepare("INSERT INTO item (id, qty, _eg_created_ms, _eg_updated_ms, _eg_version) VALUES ('w', 1, 1, 1, 1)").run();
        parentPort.postMessage('locked');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
        db.exec('COMMIT');
        db.close();
        `,
        {
          eval: true,
          workerData: {
            module: createRequire(import.meta.url).resolve('better-sqlite3'),
            file,
            holdMs: 300,
          },
        },
      );
      // Listened for from the start: the worker may exit while the writes are still awaited.
      const exited = once(worker, 'exit');
      try {
        await once(worker, 'message');
        await driver.insert(ITEMS, [{ id: 'a', qty: 1 }], 1);
        const error = await driver.insert(ITEMS, [{ id: 'w', qty: 2 }], 1).catch((e: unknown) => e);
        expect(isDuplicateKeyError(error)).toBe(true);
      } finally {
        await exited;
      }
      expect(await driver.count(ITEMS, { filters: [] })).toBe(2);
    });

    it('programming errors are not mapped to StorageUnavailableError', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      const missingRequired = await driver.insert(ITEMS, [{ id: 'a' }], 1).catch((e: unknown) => e);
      expect(missingRequired).toBeInstanceOf(Error);
      expect(isStorageUnavailableError(missingRequired)).toBe(false);
      expect(isDuplicateKeyError(missingRequired)).toBe(false);
      const badDecimal = await driver
        .insert(ITEMS, [{ id: 'a', qty: 1, price: 'abc' }], 1)
        .catch((e: unknown) => e);
      expect(badDecimal).toBeInstanceOf(TypeError);
      const badKey = await driver.get(ITEMS, ['a', 'b']).catch((e: unknown) => e);
      expect((badKey as Error).message).toMatch(/expected 1 key values/);
    });

    it('every call after close() is StorageUnavailableError', async () => {
      const driver = await openSqlite('sqlite::memory:', [ITEMS]);
      await driver.close();
      for (const call of [
        () => driver.get(ITEMS, ['a']),
        () => driver.insert(ITEMS, [{ id: 'a', qty: 1 }], 1),
        () => driver.list(ITEMS, { filters: [], orderBy: [] }),
        () => driver.activity(),
        () => driver.open([ITEMS]),
      ]) {
        expect(isStorageUnavailableError(await call().catch((e: unknown) => e))).toBe(true);
      }
    });
  });

  describe('statements', () => {
    it('a count stays exact when its filter grows past what the main connection counts', async () => {
      const driver = track(await openSqlite({ filename: freshFile() }, [ITEMS]));
      const make = (from: number, n: number): Record<string, unknown>[] =>
        Array.from({ length: n }, (_, i) => ({ id: `c${from + i}`, qty: 1 }));
      const filters = [
        {
          anyOf: [
            { path: ['qty'], operator: 'EQUALS' as const, kind: 'integer' as const, value: 1 },
          ],
        },
      ];
      await driver.insert(ITEMS, make(0, 10), 1);
      expect(await driver.count(ITEMS, { filters })).toBe(10);
      expect(await driver.count(ITEMS, { filters })).toBe(10);
      await driver.insert(ITEMS, make(10, 6_000), 2);
      expect(await driver.count(ITEMS, { filters })).toBe(6_010);
      expect(await driver.count(ITEMS, { filters })).toBe(6_010);
      await driver.insert(ITEMS, [{ id: 'other', qty: 2 }], 3);
      expect(await driver.count(ITEMS, { filters })).toBe(6_010);
    });

    it('getMany answers as get does, key by key, in the order asked', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      await driver.insert(
        ITEMS,
        Array.from({ length: 250 }, (_, i) => ({ id: `k${i}`, qty: i })),
        1000,
      );
      const keys = Array.from({ length: 261 }, (_, i) => [`k${(i * 37) % 261}`]);
      const one: unknown[] = [];
      for (const key of keys) one.push(await driver.get(ITEMS, key));
      const many = await driver.getMany(ITEMS, keys);
      expect(many).toEqual(one);
      expect(many.filter((found) => found === undefined)).toHaveLength(11);
      expect(await driver.getMany(ITEMS, [])).toEqual([]);
      expect(await driver.getMany(ITEMS, [['k7']])).toEqual([await driver.get(ITEMS, ['k7'])]);
    });

    it('getMany finds keys whatever characters they hold, as get does', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      // Quotes, backslashes, escapes' look-alikes, control characters, NUL, astral characters.
      const ids = ['a"b', 'c\\d', '\\ud800', 'tab\tnew\nline', 'nul\u0000byte', '😀 ☃', 'é', ' '];
      await driver.insert(
        ITEMS,
        ids.map((id, qty) => ({ id, qty })),
        1000,
      );
      const keys = [...ids, 'absent', 'lone \ud800', 'nul\u0000'].map((id) => [id]);
      const one: unknown[] = [];
      for (const key of keys) one.push(await driver.get(ITEMS, key));
      expect(one.filter((found) => found !== undefined)).toHaveLength(ids.length);
      expect(await driver.getMany(ITEMS, keys)).toEqual(one);
      // Without a lone surrogate or a backslash before `ud`, all are read by one statement.
      const plain = keys.flatMap((key, index) =>
        String(key[0]).includes('\\ud') || String(key[0]).includes('\ud800') ? [] : [index],
      );
      expect(plain).toHaveLength(keys.length - 2);
      expect(
        await driver.getMany(
          ITEMS,
          plain.map((index) => keys[index]!),
        ),
      ).toEqual(plain.map((index) => one[index]));
    });

    it('updateMany keeps the DECIMAL shadow key of a changed or respelled value right', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      await driver.insert(
        ITEMS,
        [
          { id: 'a', qty: 1, price: '1.5' },
          { id: 'b', qty: 2, price: '7' },
        ],
        1000,
      );
      const priced = (value: string) =>
        driver.list(ITEMS, {
          filters: [{ anyOf: [{ path: ['price'], operator: 'EQUALS', kind: 'decimal', value }] }],
          orderBy: [],
        });
      const [a, b] = await driver.getMany(ITEMS, [['a'], ['b']]);
      expect(
        await driver.updateMany(
          ITEMS,
          [
            {
              key: ['a'],
              record: { id: 'a', qty: 1, price: '1.50' },
              expectedVersion: 1,
              previous: a!.record,
            },
            {
              key: ['b'],
              record: { id: 'b', qty: 2, price: '12' },
              expectedVersion: 1,
              previous: b!.record,
            },
          ],
          2000,
        ),
      ).toEqual([2, 2]);
      expect((await priced('1.5')).map((found) => found.record)).toEqual([
        { id: 'a', qty: 1, price: '1.50' },
      ]);
      expect((await priced('12.0')).map((found) => found.record.id)).toEqual(['b']);
      expect(await priced('7')).toEqual([]);
    });

    it('updateMany: all records at their next versions with consecutive changes, or none', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      await driver.insert(
        ITEMS,
        [
          { id: 'a', qty: 1, name: 'A', price: '1.50' },
          { id: 'b', qty: 2, name: 'B' },
          { id: 'c', qty: 3 },
        ],
        1000,
      );
      const [a, b] = await driver.getMany(ITEMS, [['a'], ['b'], ['nope']]);
      expect(a?.record).toEqual({ id: 'a', qty: 1, name: 'A', price: '1.50' });
      const last = (await driver.changes.bounds()).last;
      // Only some columns differ from the rows read (`previous`), or are not known to (c).
      expect(
        await driver.updateMany(
          ITEMS,
          [
            {
              key: ['a'],
              record: { id: 'a', qty: 1, price: '2' },
              expectedVersion: 1,
              previous: a!.record,
            },
            {
              key: ['b'],
              record: { id: 'b', qty: 5, name: 'B' },
              expectedVersion: 1,
              previous: b!.record,
            },
            { key: ['c'], record: { id: 'c', qty: 4, meta: { x: 1 } }, expectedVersion: 1 },
          ],
          2000,
        ),
      ).toEqual([2, 2, 2]);
      expect(
        (await driver.getMany(ITEMS, [['a'], ['b'], ['c']])).map((found) => found?.record),
      ).toEqual([
        { id: 'a', qty: 1, price: '2' },
        { id: 'b', qty: 5, name: 'B' },
        { id: 'c', qty: 4, meta: { x: 1 } },
      ]);
      expect((await driver.changes.read(last, 10)).map((c) => [c.seq - last, c.op, c.id])).toEqual([
        [1, 'updated', 'a'],
        [2, 'updated', 'b'],
        [3, 'updated', 'c'],
      ]);
      // b is no longer at version 1: nothing is written, a included.
      expect(
        await driver.updateMany(
          ITEMS,
          [
            { key: ['a'], record: { id: 'a', qty: 9 }, expectedVersion: 2 },
            { key: ['b'], record: { id: 'b', qty: 9 }, expectedVersion: 1 },
          ],
          3000,
        ),
      ).toBeUndefined();
      expect(await driver.get(ITEMS, ['a'])).toMatchObject({ version: 2, record: { qty: 1 } });
      expect((await driver.changes.bounds()).last).toBe(last + 3);
      // A rename (the key changes) is an update too: deleted under the old key, created under the new.
      expect(
        await driver.updateMany(
          ITEMS,
          [{ key: ['c'], record: { id: 'd', qty: 4 }, expectedVersion: 2 }],
          4000,
        ),
      ).toEqual([3]);
      expect(await driver.get(ITEMS, ['c'])).toBeUndefined();
      expect((await driver.get(ITEMS, ['d']))?.record).toEqual({ id: 'd', qty: 4 });
      // Renamed onto a key that exists: nothing is written.
      expect(
        await driver.updateMany(
          ITEMS,
          [{ key: ['d'], record: { id: 'a', qty: 4 }, expectedVersion: 3 }],
          5000,
        ),
      ).toBeUndefined();
      expect((await driver.get(ITEMS, ['d']))?.version).toBe(3);
    });

    it('the list statement cache is bounded', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      for (let n = 1; n <= 260; n++) {
        const anyOf = Array.from({ length: n }, (_, i) => ({
          path: ['qty'],
          operator: 'EQUALS' as const,
          kind: 'integer' as const,
          value: i,
        }));
        await driver.list(ITEMS, { filters: [{ anyOf }], orderBy: [] });
      }
      expect(driver.diagnostics().cachedQueries).toBeLessThanOrEqual(200);
      expect(driver.diagnostics().cachedQueries).toBeGreaterThan(100);
    });

    it('every value is a bound parameter, but the checked LIMIT, written as a number', async () => {
      const driver = track(await openSqlite('sqlite::memory:', [ITEMS]));
      const { sql, params } = driver.listSql(ITEMS, {
        filters: [
          {
            anyOf: [{ path: ['name'], operator: 'CONTAINS', kind: 'text', value: "x' OR '1'='1" }],
          },
          { anyOf: [{ path: ['meta', 'ab', 'c'], operator: 'EQUALS', kind: 'text', value: 'v' }] },
          { anyOf: [{ path: ['price'], operator: 'GT', kind: 'decimal', value: '10.5' }] },
        ],
        orderBy: [{ column: 'qty', descending: true }],
        after: [5, 'k'],
        limit: 10,
        offset: 3,
      });
      expect(sql).not.toContain("x'");
      expect(sql).not.toContain('10.5');
      // SQLite plans a statement again each time its LIMIT parameter is bound: the limit, a
      // non-negative safe integer (anything else is refused), is written into the statement.
      expect(sql).toMatch(/ LIMIT 10 OFFSET \?$/);
      expect(params).toContain("x' OR '1'='1");
      expect(params).toContain('$."ab"."c"');
      expect(params).toContain(decimalSortKey('10.5'));
      expect(params.slice(-1)).toEqual([3]);
      expect(params).not.toContain(10);
    });
  });

  describe('query plans (100 000 rows)', () => {
    const PLAN: TableDescriptor = {
      entity: 'PLAN',
      table: 'plan',
      key: ['id'],
      columns: [
        col('id', 'text', { required: true }),
        col('rank', 'integer', { indexed: true }),
        col('level', 'integer', { required: true, indexed: true }),
        col('amount', 'decimal', { indexed: true }),
        col('note', 'text'),
        // 5 000 rows per value (the most a count on the main connection counts, COUNT_MAIN_ROWS)
        // and 50 000.
        col('bucket', 'integer', { indexed: true }),
        col('half', 'integer', { indexed: true }),
      ],
    };
    const ROWS = 100_000;
    const id = (i: number): string => `p${String(i).padStart(6, '0')}`;
    const row = (i: number): Record<string, unknown> => ({
      id: id(i),
      ...(i % 10 === 0 ? {} : { rank: (i * 7919) % 5000 }),
      level: i % 100,
      ...(i % 7 === 0 ? {} : { amount: (((i * 31) % 100_000) / 100).toFixed(2) }),
      note: `n${i}`,
      bucket: i % 20,
      half: i % 2,
    });
    let driver: SqliteDriver;

    beforeAll(async () => {
      driver = await openSqlite({ filename: freshFile() }, [PLAN]);
      await driver.insert(
        PLAN,
        Array.from({ length: ROWS }, (_, i) => row(i)),
        1,
      );
    });
    afterAll(async () => {
      await driver.close();
    });

    const assertIndexed = (plan: readonly QueryPlanRow[], range: boolean): void => {
      const details = plan.map((r) => r.detail);
      const message = details.join(' | ');
      expect(
        details.some((d) => d.includes('TEMP B-TREE')),
        message,
      ).toBe(false);
      expect(
        details.some((d) => /^SCAN \S+$/.test(d)),
        message,
      ).toBe(false);
      expect(
        details.some((d) => /USING (COVERING )?INDEX|USING PRIMARY KEY/.test(d)),
        message,
      ).toBe(true);
      if (range)
        expect(
          details.some((d) => d.startsWith('SEARCH')),
          message,
        ).toBe(true);
    };

    it.each<[string, [string, number | string][], number]>([
      ['an indexed field, few matches', [['level', 5]], 1_000],
      ["an indexed field, exactly the main connection's cap", [['bucket', 3]], 5_000],
      ['an indexed field, more than the limit', [['half', 1]], 50_000],
      ['the key', [['id', 'p000042']], 1],
      ['an indexed decimal', [['amount', '310.00']], 1],
      [
        'two indexed fields, no index holds both',
        [
          ['level', 5],
          ['half', 1],
        ],
        1_000,
      ],
      ['a field without an index', [['note', 'n77']], 1],
      ['no match', [['level', 1_000]], 0],
    ])('count with %s is exact', async (_label, equalities, expected) => {
      const filters = equalities.map(([column, value]) => ({
        anyOf: [
          {
            path: [column],
            operator: 'EQUALS' as const,
            kind: PLAN.columns.find((c) => c.name === column)!.kind,
            value,
          },
        ],
      }));
      const matching = Array.from({ length: ROWS }, (_, i) => row(i)).filter((r) =>
        equalities.every(([column, value]) => r[column] === value),
      ).length;
      expect(matching).toBe(expected);
      // The first count of a filter runs in a reader, the next ones where its size says.
      expect(await driver.count(PLAN, { filters })).toBe(expected);
      expect(await driver.count(PLAN, { filters })).toBe(expected);
      expect(await driver.count(PLAN, { filters })).toBe(expected);
    });

    it.each<[string, string | undefined, boolean, number | undefined, boolean]>([
      // label, order column, descending, cursor row, expect an index range (SEARCH)
      ['nullable column ascending', 'rank', false, 50_001, true],
      ['nullable column ascending, NULL cursor', 'rank', false, 10, false],
      ['nullable column descending (index scan, no range)', 'rank', true, 50_001, false],
      ['required column ascending', 'level', false, 50_050, true],
      ['required column descending', 'level', true, 50_050, true],
      ['decimal column ascending', 'amount', false, 1, true],
      ['decimal column descending, NULL cursor', 'amount', true, 70_000, true],
      ['key only', undefined, false, 50_000, true],
      ['first page', 'rank', false, undefined, false],
    ])(
      '%s: the index serves order and cursor',
      async (_label, column, descending, cursorRow, range) => {
        const orderBy = column === undefined ? [] : [{ column, descending }];
        const after =
          cursorRow === undefined
            ? undefined
            : [
                ...(column === undefined
                  ? []
                  : [(row(cursorRow)[column] ?? null) as string | number | null]),
                id(cursorRow),
              ];
        const query: ListQuery = {
          filters: [],
          orderBy,
          limit: 20,
          ...(after === undefined ? {} : { after }),
        };
        assertIndexed(driver.explainList(PLAN, query).plan, range);
        const page = await driver.list(PLAN, query);
        expect(page).toHaveLength(20);
        const ids = (await driver.list(PLAN, { filters: [], orderBy })).map((r) => r.record['id']);
        const start = cursorRow === undefined ? 0 : ids.indexOf(id(cursorRow)) + 1;
        expect(page.map((r) => r.record['id'])).toEqual(ids.slice(start, start + 20));
      },
    );
  });

  describe('decimalSortKey', () => {
    it('orders decimals numerically and exactly', () => {
      const ascending = [
        '-1e30',
        '-12345678901234567890.123456789',
        '-12345678901234567890.123456788',
        '-100',
        '-10.5',
        '-9.75',
        '-1',
        '-0.55',
        '-0.5',
        '-0.000000000000000000001',
        '0',
        '0.000000000000000000001',
        '0.5',
        '0.55',
        '1',
        '9.75',
        '10.5',
        '100',
        '12345678901234567890.123456788',
        '12345678901234567890.123456789',
        '1e30',
      ];
      const shuffled = [...ascending].reverse().sort((a, b) => (a.length % 3) - (b.length % 3));
      const sorted = shuffled.sort((a, b) => {
        const x = decimalSortKey(a)!;
        const y = decimalSortKey(b)!;
        return x < y ? -1 : x > y ? 1 : 0;
      });
      expect(sorted).toEqual(ascending);
    });

    it('gives numerically equal values the same key', () => {
      const key = decimalSortKey('1.5');
      for (const same of ['1.50', '+1.5', '01.5', '15e-1', '0.15E1', '.15e1', 1.5]) {
        expect(decimalSortKey(same), String(same)).toBe(key);
      }
      expect(decimalSortKey('-0')).toBe(decimalSortKey('0.000'));
    });

    it('rejects what is not a decimal', () => {
      for (const bad of ['', '.', 'abc', '1.2.3', '1e', '--1', 'NaN', '1e99999', Infinity]) {
        expect(decimalSortKey(bad), String(bad)).toBeUndefined();
      }
    });
  });
});
