/**
 * Runs a driver-level suite on both drivers: on SQLite (a new database file in a temporary folder
 * for each `fresh()`) and, with PostgreSQL (`describeWith(POSTGRES, …)`), on a new schema for each
 * `fresh()`; the schemas are dropped and the folder removed after the suite.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import type { StorageDriver } from '../../runtime/src/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { describeWith, POSTGRES } from './environment.js';
import { withPgClient } from './pg-client.js';

/**
 * `suite(name, make, fresh)`: `fresh()` picks a new, empty database; `make()` then opens a driver
 * on it. `folderPrefix` names the temporary folder, `schemaPrefix` the PostgreSQL schemas.
 */
export function describeOnBothDrivers(
  { folderPrefix, schemaPrefix }: { folderPrefix: string; schemaPrefix: string },
  suite: (name: string, make: () => StorageDriver, fresh: () => void) => void,
): void {
  const root = mkdtempSync(join(tmpdir(), folderPrefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let file = '';
  let files = 0;
  describe('sqlite', () => {
    suite(
      'sqlite',
      () => new SqliteDriver({ filename: file }),
      () => {
        file = join(root, `db-${++files}.db`);
      },
    );
  });

  describeWith(POSTGRES, 'postgres', (url) => {
    const prefix = `${schemaPrefix}${process.pid}_${randomBytes(3).toString('hex')}`;
    let n = 0;
    let current = '';
    afterAll(() =>
      withPgClient(url, async (client) => {
        for (let i = 1; i <= n; i++)
          await client.query(`DROP SCHEMA IF EXISTS "${prefix}_${i}" CASCADE`);
      }),
    );
    suite(
      'postgres',
      () => new PostgresDriver({ url, env: {}, schema: current, poolMax: 2 }),
      () => {
        current = `${prefix}_${++n}`;
      },
    );
  });
}
