/**
 * Record history at the driver (SPEC §13), on SQLite and (with `TEST_DATABASE_URL`) PostgreSQL:
 * `HISTORY_RETENTION` trimming keeps the newest version of each record, and the setting's parsing.
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

describeTrim('sqlite', () => new SqliteDriver({ filename: ':memory:' }));

describeWith(POSTGRES, 'history trimming on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'hist_trim');
  afterAll(() => schemas.dropAll());
  describeTrim('postgres', () => schemas.driver());
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
