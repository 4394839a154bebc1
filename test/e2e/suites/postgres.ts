/**
 * PostgreSQL for the end-to-end suites: the database named by `TEST_DATABASE_URL`, a fresh schema
 * per booted service (created by the driver's `schema` option, dropped in afterAll), and the skip
 * message when no database is configured (as in test/drivers/postgres.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import pg from 'pg';
import { describe, it } from 'vitest';

/** The PostgreSQL database of the tests, or undefined when `TEST_DATABASE_URL` is unset or empty. */
export const TEST_DATABASE_URL: string | undefined =
  process.env['TEST_DATABASE_URL'] === '' ? undefined : process.env['TEST_DATABASE_URL'];

export const SKIP_MESSAGE = 'PostgreSQL suite skipped: TEST_DATABASE_URL is not set';

/** Registers one skipped test under `title` and prints why. */
export function registerSkipped(title: string): void {
  console.warn(SKIP_MESSAGE);
  describe(title, () => {
    it.skip(SKIP_MESSAGE, () => {});
  });
}

/** `url` with `?schema=<schema>` set (other parameters kept). */
export function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}

/** Fresh schemas in one database, each remembered so that `dropAll()` removes them. */
export class TestSchemas {
  private readonly prefix: string;
  private readonly created: string[] = [];

  constructor(
    readonly url: string,
    label: string,
  ) {
    this.prefix = `eg_${label.replace(/[^a-z0-9_]/gi, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`;
  }

  /** A new schema name (the schema itself is created by the driver's open()). */
  next(): string {
    const schema = `${this.prefix}_${this.created.length}`;
    this.created.push(schema);
    return schema;
  }

  /** A driver on a new schema (not opened yet; bootFixture opens it). */
  driver(): PostgresDriver {
    return new PostgresDriver({ url: this.url, env: {}, schema: this.next(), poolMax: 4 });
  }

  /** Drops every schema handed out; call in afterAll, after the services are closed. */
  async dropAll(): Promise<void> {
    if (this.created.length === 0) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: 10_000,
    });
    await client.connect();
    try {
      for (const schema of this.created) {
        await client.query(`DROP SCHEMA IF EXISTS "${schema.replace(/"/g, '""')}" CASCADE`);
      }
    } finally {
      await client.end();
    }
  }
}
