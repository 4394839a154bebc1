import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import { describe } from 'vitest';
import { describeWith, POSTGRES } from './environment.js';
import { bootFixture, type BootedService } from './service.js';

/**
 * Declares the listing suite `factory` on each driver, as the groups `on sqlite` (in memory) and
 * `on postgres` (the database of TEST_DATABASE_URL; skipped, saying why, when it is not set).
 */
export function describeOnListingDrivers(factory: (driverName: string) => void): void {
  describe('on sqlite', () => factory('sqlite'));
  describeWith(POSTGRES, 'on postgres', () => factory('postgres'));
}

/** The key that signs the listing services' cursors, so that tests can make their own. */
export const LISTING_CURSOR_SECRET = 'listing-suite-cursor-secret';

/** Boots the listing fixture on `driverName`; on PostgreSQL in a fresh schema dropped on close. */
export async function bootListing(driverName: string, folder: string): Promise<BootedService> {
  const cursorSecret = LISTING_CURSOR_SECRET;
  if (driverName === 'sqlite') return bootFixture('listing', { folder, cursorSecret });
  const url = POSTGRES.value;
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
