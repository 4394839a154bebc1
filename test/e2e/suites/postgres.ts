/**
 * PostgreSQL for the end-to-end suites: the database named by `TEST_DATABASE_URL`, a fresh schema
 * per booted service (created by the driver's `schema` option, dropped in afterAll). Whether the
 * database is configured, and the skip when it is not: test/helpers/environment.ts (`POSTGRES`).
 */
import { randomBytes } from 'node:crypto';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import pg from 'pg';

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
