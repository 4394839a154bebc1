/** Group commit of the SQLite driver: concurrent writes share a transaction, each fails alone. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { StoredChange, TableDescriptor } from '../../runtime/src/driver.js';
import { isDuplicateKeyError } from '../../runtime/src/errors.js';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';

const root = mkdtempSync(join(tmpdir(), 'eg-sqlite-group-'));
let counter = 0;
const freshFile = (): string => join(root, `db-${++counter}`, 'service.db');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ITEMS: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  key: ['id'],
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'qty', kind: 'integer', fieldType: 'INTEGER', required: true, indexed: false },
  ],
};

const drivers: SqliteDriver[] = [];
afterEach(async () => {
  for (const driver of drivers.splice(0)) await driver.close();
});
async function open(options: { groupCommit?: boolean; env?: Record<string, string> } = {}) {
  const filename = freshFile();
  const driver = new SqliteDriver({ filename, ...options });
  drivers.push(driver);
  await driver.open([ITEMS]);
  return { driver, filename };
}

describe('sqlite group commit', () => {
  it('concurrent writes share one transaction; each is acknowledged with its own result', async () => {
    const { driver } = await open();
    await driver.insert(ITEMS, [{ id: 'x', qty: 0 }], 1);
    const before = driver.diagnostics().writeCommits;
    const results = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => driver.insert(ITEMS, [{ id: `k${i}`, qty: i }], 2)),
      driver.update(ITEMS, ['x'], { id: 'x', qty: 5 }, 1, 2),
      driver.update(ITEMS, ['x'], { id: 'x', qty: 6 }, 1, 2), // the first one moved the version on
    ]);
    expect(driver.diagnostics().writeCommits).toBe(before + 1);
    expect(results.slice(20)).toEqual([{ status: 'updated', version: 2 }, { status: 'conflict' }]);
    expect(await driver.count(ITEMS, { filters: [] })).toBe(21);
    expect((await driver.get(ITEMS, ['x']))?.record).toEqual({ id: 'x', qty: 5 });
  });

  it('a failing write in a group fails alone; its neighbours commit and its events do not exist', async () => {
    const { driver } = await open();
    await driver.insert(ITEMS, [{ id: 'taken', qty: 0 }], 1);
    const seen: StoredChange[] = [];
    driver.changes.watch((committed) => seen.push(...committed));
    const before = driver.diagnostics().writeCommits;
    const outcomes = await Promise.allSettled([
      driver.insert(ITEMS, [{ id: 'a', qty: 1 }], 2),
      driver.insert(
        ITEMS,
        [
          { id: 'b', qty: 2 },
          { id: 'taken', qty: 2 },
        ],
        2,
      ),
      driver.insert(ITEMS, [{ id: 'c', qty: 3 }], 2),
      driver.insert(ITEMS, [{ id: 'd' }], 2), // qty is NOT NULL
      driver.delete(ITEMS, ['taken'], undefined, 2),
    ]);
    expect(driver.diagnostics().writeCommits).toBe(before + 1);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const duplicate = (outcomes[1] as PromiseRejectedResult).reason as unknown;
    expect(isDuplicateKeyError(duplicate) && duplicate.index).toBe(1);
    // 'b' was in the failing list: rolled back with it.
    expect(await driver.get(ITEMS, ['b'])).toBeUndefined();
    expect(await driver.get(ITEMS, ['d'])).toBeUndefined();
    expect((await driver.get(ITEMS, ['a']))?.record).toEqual({ id: 'a', qty: 1 });
    expect((await driver.get(ITEMS, ['c']))?.record).toEqual({ id: 'c', qty: 3 });
    expect(await driver.get(ITEMS, ['taken'])).toBeUndefined();
    // Events: the committed writes only, gapless, in seq order, told to watchers in that order.
    const stored = await driver.changes.read(0, 100);
    expect(stored.map((c) => [c.seq, c.id, c.op])).toEqual([
      [1, 'taken', 'created'],
      [2, 'a', 'created'],
      [3, 'c', 'created'],
      [4, 'taken', 'deleted'],
    ]);
    expect(seen).toEqual(stored.slice(1));
  });

  it('a write is acknowledged only once committed: another connection sees it', async () => {
    const { driver, filename } = await open();
    const other = new Database(filename, { readonly: true });
    try {
      const count = other.prepare('SELECT count(*) FROM item').pluck();
      const writes = Array.from({ length: 10 }, (_, i) =>
        driver.insert(ITEMS, [{ id: `k${i}`, qty: i }], 1).then(() => count.get() as number),
      );
      // Queued, not yet run: nothing is visible before the acknowledgement.
      expect(count.get()).toBe(0);
      for (const seenAtAck of await Promise.all(writes)) expect(seenAtAck).toBe(10);
      // The reader threads (list, count) read it too.
      expect(await driver.count(ITEMS, { filters: [] })).toBe(10);
    } finally {
      other.close();
    }
  });

  it('close commits the writes already queued', async () => {
    const { driver, filename } = await open();
    const write = driver.insert(ITEMS, [{ id: 'late', qty: 1 }], 1);
    await driver.close();
    await write;
    const db = new Database(filename, { readonly: true });
    try {
      expect(db.prepare('SELECT qty FROM item WHERE id = ?').pluck().get('late')).toBe(1);
    } finally {
      db.close();
    }
  });

  it('off (option or SQLITE_GROUP_COMMIT=off), every write commits alone', async () => {
    for (const options of [{ groupCommit: false }, { env: { SQLITE_GROUP_COMMIT: 'off' } }]) {
      const { driver } = await open(options);
      expect(driver.groupCommit).toBe(false);
      const outcomes = await Promise.allSettled(
        ['a', 'b', 'a', 'c'].map((id) => driver.insert(ITEMS, [{ id, qty: 1 }], 1)),
      );
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      expect(driver.diagnostics().writeCommits).toBe(4);
    }
    expect((await open({ env: { SQLITE_GROUP_COMMIT: 'on' } })).driver.groupCommit).toBe(true);
    expect((await open()).driver.groupCommit).toBe(true);
    expect(
      () => new SqliteDriver({ filename: freshFile(), env: { SQLITE_GROUP_COMMIT: 'x' } }),
    ).toThrow(/SQLITE_GROUP_COMMIT must be on or off/);
  });
});

describe('sqlite bulk insert (rows bound in chunks per statement)', () => {
  const list = (n: number, prefix = 'r'): { id: string; qty: number }[] =>
    Array.from({ length: n }, (_, i) => ({ id: `${prefix}${String(i).padStart(4, '0')}`, qty: i }));

  it('stores every record and appends one created change each, with consecutive seqs', async () => {
    const { driver } = await open();
    await driver.insert(ITEMS, [{ id: 'first', qty: 0 }], 1);
    const records = list(1000 + 37); // whole chunks and a remainder
    await driver.insert(ITEMS, records, 2);
    expect(await driver.count(ITEMS, { filters: [] })).toBe(records.length + 1);
    expect((await driver.get(ITEMS, ['r1036']))?.record).toEqual({ id: 'r1036', qty: 1036 });
    const changes = await driver.changes.read(1, 2000);
    expect(changes.map((c) => c.seq)).toEqual(records.map((_, i) => i + 2));
    expect(changes.map((c) => c.id)).toEqual(records.map((r) => r.id));
    expect(changes.every((c, i) => c.op === 'created' && JSON.parse(c.record).qty === i)).toBe(
      true,
    );
  });

  it('a taken key deep in the list names its record and stores nothing', async () => {
    const { driver } = await open();
    await driver.insert(ITEMS, [{ id: 'r0150', qty: 0 }], 1);
    const taken = await driver.insert(ITEMS, list(300), 2).catch((e: unknown) => e);
    expect(isDuplicateKeyError(taken) && taken.index).toBe(150);
    const records = list(300, 'x');
    records[130] = { id: records[70]!.id, qty: 130 }; // a repeat within one list
    const repeated = await driver.insert(ITEMS, records, 2).catch((e: unknown) => e);
    expect(isDuplicateKeyError(repeated) && repeated.index).toBe(130);
    expect(await driver.count(ITEMS, { filters: [] })).toBe(1);
    expect((await driver.changes.bounds()).last).toBe(1);
  });
});
