/**
 * Record history at the driver (SPEC §13), on SQLite and (with `TEST_DATABASE_URL`) PostgreSQL:
 * `HISTORY_RETENTION` trimming keeps the newest version of each record, an update keeps a version
 * (and its event carries it) only when it happened, and the setting's parsing.
 */
import type { StorageDriver, TableDescriptor } from '@entity-gen/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { historyRetentionFromEnv } from '../../runtime/src/history-retention.js';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { TestSchemas } from '../e2e/suites/postgres.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';

const TABLE: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'n', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
  key: ['id'],
  history: true,
};

function describeTrim(label: string, makeDriver: () => StorageDriver): void {
  describe(`history trimming (${label})`, () => {
    it('deletes the versions older than the time but the newest of each record', async () => {
      const driver = makeDriver();
      try {
        await driver.open([TABLE]);
        await driver.insert(
          TABLE,
          [
            { id: 'a', n: 1 },
            { id: 'b', n: 1 },
          ],
          1000,
          { by: 'x' },
        );
        await driver.update(TABLE, ['a'], { id: 'a', n: 2 }, 1, 2000);
        await driver.update(TABLE, ['a'], { id: 'a', n: 3 }, 2, 3000);
        // b has one version, older than the time: kept (its only, newest one).
        expect(await driver.trimHistory!(2500)).toBe(2);
        const a = await driver.history!(TABLE, ['a'], 10);
        expect(a.map((v) => [v.version, v.timeUnix, v.by])).toEqual([[3, 3000, null]]);
        expect((await driver.history!(TABLE, ['b'], 10)).map((v) => v.version)).toEqual([1]);
        // asOf before the oldest kept version finds nothing.
        expect(await driver.versionAt!(TABLE, ['a'], 2500)).toBeUndefined();
        expect((await driver.versionAt!(TABLE, ['a'], 3000))?.record).toBe('{"id":"a","n":3}');
        expect(await driver.trimHistory!(2500)).toBe(0);
      } finally {
        await driver.close();
      }
    });
  });
}

/** The ops and versions of the events committed after `seq`. */
async function eventsAfter(
  driver: StorageDriver,
  seq: number,
): Promise<[string, string, number?][]> {
  return (await driver.changes!.read(seq, 100)).map((c) => [c.id, c.op, c.version]);
}

function describeUpdates(label: string, makeDriver: () => StorageDriver): void {
  describe(`history of updates (${label})`, () => {
    it('keeps a version and numbers the event only for an update that happened', async () => {
      const driver = makeDriver();
      try {
        await driver.open([TABLE]);
        await driver.insert(TABLE, [{ id: 'a', n: 1 }], 1000);
        const seq = (await driver.changes!.bounds()).last;
        expect(await driver.update(TABLE, ['a'], { id: 'a', n: 2 }, 1, 2000, { by: 'u' })).toEqual({
          status: 'updated',
          version: 2,
        });
        // A stale version: no write, no version, no event.
        expect(await driver.update(TABLE, ['a'], { id: 'a', n: 9 }, 1, 3000)).toEqual({
          status: 'conflict',
        });
        expect(await driver.update(TABLE, ['zz'], { id: 'zz', n: 9 }, 1, 3000)).toEqual({
          status: 'conflict',
        });
        // In a transaction, the event is appended at its end, with the version it kept.
        await driver.transaction!(async () => {
          await driver.update(TABLE, ['a'], { id: 'a', n: 3 }, 2, 4000);
          await driver.update(TABLE, ['a'], { id: 'a', n: 4 }, 3, 4000);
        });
        const versions = await driver.history!(TABLE, ['a'], 10);
        expect(versions.map((v) => [v.version, v.op, v.timeUnix, v.by, v.record])).toEqual([
          [4, 'updated', 4000, null, '{"id":"a","n":4}'],
          [3, 'updated', 4000, null, '{"id":"a","n":3}'],
          [2, 'updated', 2000, 'u', '{"id":"a","n":2}'],
          [1, 'created', 1000, null, '{"id":"a","n":1}'],
        ]);
        expect(await eventsAfter(driver, seq)).toEqual([
          ['a', 'updated', 2],
          ['a', 'updated', 3],
          ['a', 'updated', 4],
        ]);
        // A transaction that fails keeps neither the write nor its version.
        await expect(
          driver.transaction!(async () => {
            await driver.update(TABLE, ['a'], { id: 'a', n: 5 }, 4, 5000);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect((await driver.history!(TABLE, ['a'], 10)).map((v) => v.version)).toEqual([
          4, 3, 2, 1,
        ]);
      } finally {
        await driver.close();
      }
    });

    it('keeps one version when two updates of a record race with the same version', async () => {
      const driver = makeDriver();
      try {
        await driver.open([TABLE]);
        await driver.insert(TABLE, [{ id: 'r', n: 0 }], 1000);
        for (let round = 1; round <= 5; round++) {
          const results = await Promise.all(
            [1, 2, 3].map((i) =>
              driver.update(TABLE, ['r'], { id: 'r', n: round * 10 + i }, round, 1000 + round),
            ),
          );
          expect(results.filter((r) => r.status === 'updated')).toEqual([
            { status: 'updated', version: round + 1 },
          ]);
          expect(results.filter((r) => r.status === 'conflict')).toHaveLength(2);
        }
        const versions = await driver.history!(TABLE, ['r'], 10);
        expect(versions.map((v) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
        const stored = await driver.get(TABLE, ['r']);
        expect(JSON.parse(versions[0]!.record)).toEqual(stored?.record);
      } finally {
        await driver.close();
      }
    });
  });
}

describeTrim('sqlite', () => new SqliteDriver({ filename: ':memory:' }));
describeUpdates('sqlite', () => new SqliteDriver({ filename: ':memory:' }));

describeWith(POSTGRES, 'history trimming on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'hist_trim');
  afterAll(() => schemas.dropAll());
  describeTrim('postgres', () => schemas.driver());
  describeUpdates('postgres', () => schemas.driver());
});

describe('HISTORY_RETENTION', () => {
  it('is forever by default and a duration otherwise; anything else stops the start', () => {
    expect(historyRetentionFromEnv({})).toBeUndefined();
    expect(historyRetentionFromEnv({ HISTORY_RETENTION: 'forever' })).toBeUndefined();
    expect(historyRetentionFromEnv({ HISTORY_RETENTION: '365d' })).toBe(365 * 86_400_000);
    expect(() => historyRetentionFromEnv({ HISTORY_RETENTION: '1y' })).toThrow(
      'HISTORY_RETENTION must be forever or a duration like 365d, 12h, 30m or 90s, not "1y"',
    );
  });
});
