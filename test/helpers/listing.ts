import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import { bootFixture, type BootedService } from './service.js';

/**
 * The drivers the listing suites run on: SQLite in memory always; PostgreSQL as well when
 * TEST_DATABASE_URL names a database (as for test/drivers/postgres.test.ts).
 */
export const PG_URL = process.env['TEST_DATABASE_URL'];
export const LISTING_DRIVERS: readonly string[] =
  PG_URL === undefined || PG_URL === '' ? ['sqlite'] : ['sqlite', 'postgres'];

/** The key that signs the listing services' cursors, so that tests can make their own. */
export const LISTING_CURSOR_SECRET = 'listing-suite-cursor-secret';

/** Boots the listing fixture on `driverName`; on PostgreSQL in a fresh schema dropped on close. */
export async function bootListing(driverName: string, folder: string): Promise<BootedService> {
  const cursorSecret = LISTING_CURSOR_SECRET;
  if (driverName === 'sqlite' || PG_URL === undefined)
    return bootFixture('listing', { folder, cursorSecret });
  const url = PG_URL;
  const schema = `eg_${folder.replaceAll('-', '_')}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const driver = new PostgresDriver({ url, env: {}, schema, poolMax: 4 });
  const booted = await bootFixture('listing', { folder: `${folder}-pg`, driver, cursorSecret });
  return {
    ...booted,
    close: async () => {
      await booted.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
