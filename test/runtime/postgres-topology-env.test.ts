/**
 * The PostgreSQL driver's topology variables (SPEC §15) as the environment gives them: what
 * they turn on, and the errors that name the variable. No server is needed: the driver connects
 * only when opened.
 */
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { replicaSettingsFromEnv } from '../../runtime/src/postgres/replicas.js';

const URL = 'postgres://app:secret@db.example:5432/app?schema=shop';

describe('DATABASE_READ_URL, DATABASE_LISTEN_URL and their companions', () => {
  it('without them, reads stay on DATABASE_URL and writes answer without tokens', async () => {
    const driver = new PostgresDriver({ url: URL, env: {} });
    expect(driver.readAfter).toBe(false);
    expect(driver.router).toBeUndefined();
    await driver.close();
  });

  it('reads the replicas, the wait and the lag, with their defaults', async () => {
    expect(
      replicaSettingsFromEnv({ DATABASE_READ_URL: ' postgres://r1/app , postgres://r2/app ' }),
    ).toEqual({
      urls: ['postgres://r1/app', 'postgres://r2/app'],
      readAfterWaitMs: 500,
      maxLagMs: 10_000,
    });
    expect(
      replicaSettingsFromEnv({
        DATABASE_READ_URL: 'postgres://r1/app',
        READ_AFTER_WAIT_MS: '0',
        MAX_REPLICA_LAG_MS: '2000',
      }),
    ).toMatchObject({ readAfterWaitMs: 0, maxLagMs: 2000 });
    expect(replicaSettingsFromEnv({ DATABASE_READ_URL: '' })).toBeUndefined();
    const driver = new PostgresDriver({
      url: URL,
      env: { DATABASE_READ_URL: 'postgres://replica.example/app' },
    });
    expect(driver.readAfter).toBe(true);
    // The replica is read in the primary's schema.
    expect(driver.router!.describe()).toEqual([
      { host: 'replica.example:5432', healthy: false, lagMs: Number.POSITIVE_INFINITY },
    ]);
    await driver.close();
  });

  it('names the variable of a bad value, never the password', () => {
    const make = (env: Record<string, string>) => () => new PostgresDriver({ url: URL, env });
    expect(make({ DATABASE_READ_URL: 'mysql://replica/app' })).toThrow(
      /^DATABASE_READ_URL must be one or more postgres:\/\/ URLs/,
    );
    expect(make({ DATABASE_READ_URL: 'postgres://replica/app?colour=blue' })).toThrow(
      /^DATABASE_READ_URL: Unknown PostgreSQL URL parameter "colour"/,
    );
    expect(make({ DATABASE_READ_URL: 'postgres://r/app', READ_AFTER_WAIT_MS: 'soon' })).toThrow(
      'READ_AFTER_WAIT_MS must be an integer ≥ 0 (milliseconds), got "soon"',
    );
    expect(make({ DATABASE_READ_URL: 'postgres://r/app', MAX_REPLICA_LAG_MS: '-1' })).toThrow(
      /^MAX_REPLICA_LAG_MS must be an integer/,
    );
    expect(make({ DATABASE_LISTEN_URL: 'postgres://app:secret@direct/app?pool=1' })).toThrow(
      /^DATABASE_LISTEN_URL: Unknown PostgreSQL URL parameter "pool"/,
    );
    try {
      make({ DATABASE_LISTEN_URL: 'postgres://app:secret@direct/app?pool=1' })();
    } catch (error) {
      expect(String(error)).not.toContain('secret');
    }
  });
});
