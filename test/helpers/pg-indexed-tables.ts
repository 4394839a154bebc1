/**
 * A private PostgreSQL schema holding a table with indexes and its twin without them, both
 * filled with the same rows and ANALYZEd, so that the planner's choices in a query-plan test mean
 * something. Registers its own `beforeAll` and `afterAll`.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { TableDescriptor } from '../../runtime/src/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { withPgClient } from './pg-client.js';

export interface IndexedTables {
  /** The schema the tables live in. */
  readonly schema: string;
  /** The driver over the schema (set once `beforeAll` ran). */
  driver(): PostgresDriver;
  /** Runs `fn` on a raw connection (EXPLAIN, catalog queries). */
  admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T>;
}

export function indexedTables(
  url: string,
  suffix: string,
  tables: { indexed: TableDescriptor; plain: TableDescriptor },
  rows: number,
  record: (i: number) => Record<string, unknown>,
): IndexedTables {
  const schema = `eg_test_${process.pid}_${randomBytes(4).toString('hex')}_${suffix}`;
  const admin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withPgClient(url, fn);
  let driver: PostgresDriver | undefined;

  beforeAll(async () => {
    driver = new PostgresDriver({ url, env: {}, schema, poolMax: 2 });
    await driver.open([tables.indexed, tables.plain]);
    const records = Array.from({ length: rows }, (_, i) => record(i));
    for (let from = 0; from < rows; from += 5_000) {
      await driver.insert(tables.indexed, records.slice(from, from + 5_000), 1);
      await driver.insert(tables.plain, records.slice(from, from + 5_000), 1);
    }
    await admin(async (client) => {
      await client.query(`ANALYZE "${schema}"."${tables.indexed.table}"`);
      await client.query(`ANALYZE "${schema}"."${tables.plain.table}"`);
    });
  });

  afterAll(async () => {
    await driver?.close();
    await admin((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  });

  return {
    schema,
    admin,
    driver: () => {
      if (driver === undefined) throw new Error('the tables are set up in beforeAll');
      return driver;
    },
  };
}
