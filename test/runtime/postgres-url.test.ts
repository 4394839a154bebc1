/**
 * The PostgreSQL driver's pure parts, which need no server and so always run: the connection URL
 * and environment (`parsePostgresUrl`) and the canonical form of `timestamptz` text. The driver
 * against a real server: test/drivers/postgres.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  PostgresConfigError,
  PostgresDriver,
  parsePostgresUrl,
} from '../../runtime/src/postgres/index.js';
import { canonicalTimestamptz } from '../../runtime/src/postgres/types.js';

/** The error `call` throws; fails the test when it returns instead. */
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return expect.fail('expected the call to throw, but it returned');
}

describe('parsePostgresUrl', () => {
  it('reads the URL parts and the defaults', () => {
    const s = parsePostgresUrl('postgresql://app%40x:p%2Fss@db.example:6543/my%20db', {});
    expect(s).toMatchObject({
      host: 'db.example',
      port: 6543,
      user: 'app@x',
      password: 'p/ss',
      database: 'my db',
      schema: undefined,
      poolMax: 10,
      statementTimeoutMs: 5_000,
      connectTimeoutMs: 5000,
      idleTimeoutMs: 10_000,
      sslMode: 'disable',
      ssl: false,
      applicationName: 'entity-gen',
    });
  });

  it('reads parameters, which win over the environment', () => {
    const env = {
      PGPOOL_MAX: '3',
      PG_STATEMENT_TIMEOUT_MS: '1000',
      PG_CONNECT_TIMEOUT_MS: '700',
      PGSCHEMA: 'envschema',
    };
    expect(parsePostgresUrl('postgres://h/db', env)).toMatchObject({
      poolMax: 3,
      statementTimeoutMs: 1000,
      connectTimeoutMs: 700,
      schema: 'envschema',
    });
    expect(
      parsePostgresUrl(
        'postgres://h/db?pool_max=20&statement_timeout=0&connect_timeout=3&schema=App&application_name=svc&idle_timeout_ms=0',
        env,
      ),
    ).toMatchObject({
      poolMax: 20,
      statementTimeoutMs: 0,
      connectTimeoutMs: 3000,
      schema: 'App',
      applicationName: 'svc',
      idleTimeoutMs: 0,
    });
    expect(parsePostgresUrl('postgres://h/db?connect_timeout_ms=250', {}).connectTimeoutMs).toBe(
      250,
    );
    expect(parsePostgresUrl('postgres:///db?host=/var/run/postgresql', {}).host).toBe(
      '/var/run/postgresql',
    );
  });

  it('reads the parts before the query as pg does', () => {
    const parts = (url: string) => {
      const s = parsePostgresUrl(url, {});
      return { host: s.host, port: s.port, user: s.user, database: s.database };
    };
    expect(parts('postgres://[::1]:5433/db')).toEqual({
      host: '::1',
      port: 5433,
      user: undefined,
      database: 'db',
    });
    expect(parts('postgres://%2Fvar%2Frun%2Fpostgresql/db').host).toBe('/var/run/postgresql');
    expect(parts('postgres://app@/db')).toEqual({
      host: undefined,
      port: undefined,
      user: 'app',
      database: 'db',
    });
    expect(parts('postgres://')).toEqual({
      host: undefined,
      port: undefined,
      user: undefined,
      database: undefined,
    });
    const malformed = (() => {
      try {
        parsePostgresUrl('postgres://u:secret@h:99999/db', {});
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(malformed).toBeInstanceOf(PostgresConfigError);
    expect(String(malformed)).toMatch(/The PostgreSQL URL is malformed/);
    expect(String(malformed)).not.toContain('secret');
  });

  it('reads no environment unless one is handed in', async () => {
    vi.stubEnv('PGPOOL_MAX', '3');
    const drivers = [
      new PostgresDriver('postgres://h/db'),
      new PostgresDriver({ url: 'postgres://h/db' }),
      new PostgresDriver({ env: { DATABASE_URL: 'postgres://e/db', PGPOOL_MAX: '4' } }),
    ];
    try {
      expect(parsePostgresUrl('postgres://h/db').poolMax).toBe(10);
      expect(drivers.map((driver) => driver.settings.poolMax)).toEqual([10, 10, 4]);
      expect(drivers[2]!.settings.host).toBe('e');
    } finally {
      vi.unstubAllEnvs();
      await Promise.all(drivers.map((driver) => driver.close()));
    }
  });

  it('maps sslmode', () => {
    expect(parsePostgresUrl('postgres://h/db?sslmode=disable', {}).ssl).toBe(false);
    expect(parsePostgresUrl('postgres://h/db?sslmode=require', {}).ssl).toEqual({
      rejectUnauthorized: false,
    });
    expect(parsePostgresUrl('postgres://h/db?sslmode=verify-full', {}).ssl).toEqual({
      rejectUnauthorized: true,
    });
    expect(parsePostgresUrl('postgres://h/db', { PGSSLMODE: 'require' }).sslMode).toBe('require');
    expect(() => parsePostgresUrl('postgres://h/db?sslmode=prefer', {})).toThrow(
      PostgresConfigError,
    );
    expect(() => parsePostgresUrl('postgres://h/db?sslmode=verify-ca', {})).toThrow(/sslrootcert/);
  });

  it.each([
    [
      'an unknown parameter',
      'postgres://u:secret@h/db?poolmax=3',
      /Unknown PostgreSQL URL parameter "poolmax"/,
    ],
    ['a pool of 0', 'postgres://u:secret@h/db?pool_max=0', /pool_max/],
    ['a pool that is no number', 'postgres://u:secret@h/db?pool_max=x', /pool_max/],
    ['a timeout with a unit', 'postgres://u:secret@h/db?statement_timeout=1s', /statement_timeout/],
    ['another scheme', 'mysql://u:secret@h/db', /starts with postgres:\/\//],
  ])('rejects %s, naming the problem without the password', (_case, url, reason) => {
    const error = thrownBy(() => parsePostgresUrl(url, {}));
    expect(error).toBeInstanceOf(PostgresConfigError);
    expect((error as Error).message).toMatch(reason);
    expect(String(error)).not.toContain('secret');
  });

  it('rejects a bad number in the environment, naming the variable', () => {
    expect(() => parsePostgresUrl('postgres://h/db', { PGPOOL_MAX: 'ten' })).toThrow(/PGPOOL_MAX/);
  });
});

describe('canonicalTimestamptz', () => {
  it.each([
    ['an offset with minutes', '2024-03-01 05:00:00.123+05:30', '2024-02-29T23:30:00.123Z'],
    ['UTC without fraction', '1970-01-01 00:00:00+00', '1970-01-01T00:00:00.000Z'],
    ['an offset with seconds, year 1', '0001-01-01 00:00:00-00:01:15', '0001-01-01T00:01:15.000Z'],
  ])('reads %s as UTC', (_case, given, want) => {
    expect(canonicalTimestamptz(given)).toBe(want);
  });
});
