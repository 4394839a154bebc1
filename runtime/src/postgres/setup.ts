/**
 * What `PostgresDriver.open` does to the database, under an advisory lock that serialises
 * concurrent instances: check the DateStyle, create the schema, run the pending migrations
 * (docs/migrations.md) in one transaction, create the bookkeeping tables, the outbox and every
 * missing entity table and index, and check that existing tables have the expected columns.
 */
import { PostgresHistory } from './history.js';
import type pg from 'pg';
import {
  constraintChecksOf,
  constraintViolations,
  constraintViolationsError,
  storedValuesSql,
} from '../constraint-checks.js';
import type { MigrationScript, TableDescriptor } from '../driver.js';
import {
  MIGRATIONS_TABLE,
  danglingReferencesError,
  danglingReferencesSql,
  migrationChecksum,
  migrationFailed,
  planMigrationRun,
  referenceChecksOf,
  type AppliedMigration,
} from '../migrations.js';
import { isUnavailable, sqlState } from './errors.js';
import { duplicateValuesError, duplicatesSql, migrationParts } from '../unique-checks.js';
import { PostgresOutbox } from './outbox.js';
import {
  ACTIVITY_TABLE,
  createActivityTableSql,
  createIndexSql,
  searchIndexSql,
  createSecretsTableSql,
  createTableSql,
  expectedColumns,
  qualify,
  quoteIdent,
  sequenceNameOf,
  shortHash,
} from './schema.js';

/** What `setUpDatabase` needs to know. */
export interface SetUp {
  /** The configured schema (`undefined`: the search path's first). */
  readonly schema: string | undefined;
  readonly outbox: PostgresOutbox;
  readonly tables: readonly TableDescriptor[];
  readonly migrations: readonly MigrationScript[] | undefined;
}

/**
 * Brings the database up to date for `tables` on `client`. Safe to run from several instances at
 * once (an advisory lock serialises the DDL; "already exists" races are absorbed). Returns the ids
 * of the migrations run and the notification channel of the outbox.
 */
export async function setUpDatabase(
  client: pg.PoolClient,
  { schema, outbox, tables, migrations }: SetUp,
): Promise<{ applied: readonly string[]; channel: string }> {
  const dateStyle = (await client.query<{ DateStyle: string }>('SHOW DateStyle')).rows[0]
    ?.DateStyle;
  if (dateStyle !== undefined && !/^ISO/i.test(dateStyle)) {
    throw new Error(
      `PostgreSQL DateStyle is ${dateStyle}; the driver needs ISO output. Set it for the database ` +
        `(ALTER DATABASE … SET DateStyle = ISO) or add ?options=-c%20DateStyle%3DISO to the URL`,
    );
  }
  let applied: readonly string[] = [];
  const locked = await advisoryLock(client, schema);
  try {
    if (schema !== undefined) {
      const exists = await client.query(
        'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1',
        [schema],
      );
      if (exists.rowCount === 0)
        await ddl(client, `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    }
    if (migrations !== undefined) {
      applied = await runMigrations(client, schema, migrations, tables);
    }
    await ddl(client, createActivityTableSql(schema));
    await ddl(client, createSecretsTableSql(schema));
    // Created at start like the other bookkeeping tables, so services that existed before
    // change events get their outbox without a migration.
    for (const statement of outbox.createSql()) await ddl(client, statement);
    await ddl(client, PostgresHistory.createSql(schema));
    const current = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
    const channel = PostgresOutbox.channel(schema ?? current.rows[0]?.schema ?? '');
    for (const table of tables) {
      await ddl(client, createTableSql(schema, table));
      await checkColumns(client, schema, table);
      for (const statement of createIndexSql(schema, table)) await ddl(client, statement);
      for (const statement of searchIndexSql(schema, table)) await ddl(client, statement);
      if (table.sequence !== undefined) {
        // The sequence starts after the largest stored key (records written before it existed).
        const sequence = qualify(schema, sequenceNameOf(table));
        await ddl(client, `CREATE SEQUENCE IF NOT EXISTS ${sequence} AS BIGINT MINVALUE 1`);
        await client.query(
          `SELECT setval('${sequence.replaceAll("'", "''")}', m) FROM (SELECT MAX(${quoteIdent(table.sequence)}) AS m FROM ${qualify(schema, table.table)}) AS s ` +
            `WHERE m IS NOT NULL AND m >= (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM ${sequence})`,
        );
      }
    }
    return { applied, channel };
  } finally {
    if (locked) await client.query('SELECT pg_advisory_unlock($1, $2)', advisoryKey(schema));
  }
}

/**
 * Brings the database's migrations in line with the code (see `planMigrationRun`) in ONE
 * transaction, under the advisory lock `open()` holds: pending migrations run with the
 * configured schema alone on the search path (the files use unqualified names), without a
 * statement timeout and with shortest-exact float output. Returns the ids run.
 */
async function runMigrations(
  client: pg.PoolClient,
  schema: string | undefined,
  scripts: readonly MigrationScript[],
  tables: readonly TableDescriptor[],
): Promise<string[]> {
  const table = qualify(schema, MIGRATIONS_TABLE);
  await client.query('BEGIN');
  try {
    // No timeout for table rewrites; float8 as text in its shortest exact form (DOUBLE → DECIMAL).
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SET LOCAL extra_float_digits = 1');
    if (schema !== undefined) {
      await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    }
    const exists = async (name: string): Promise<boolean> =>
      (
        await client.query(
          `SELECT 1 FROM pg_catalog.pg_tables
            WHERE schemaname = COALESCE($1, current_schema()) AND tablename = $2`,
          [schema ?? null, name],
        )
      ).rowCount !== 0;
    const hasTable = await exists(MIGRATIONS_TABLE);
    const applied = hasTable
      ? (await client.query<AppliedMigration>(`SELECT id, checksum FROM ${table}`)).rows
      : undefined;
    const run = planMigrationRun(scripts, {
      applied,
      hasTables: await exists(ACTIVITY_TABLE),
    });
    if (!hasTable) {
      await client.query(
        `CREATE TABLE ${table} (\n  id TEXT COLLATE "C" NOT NULL PRIMARY KEY,\n` +
          `  applied_ms BIGINT NOT NULL,\n  checksum TEXT NOT NULL\n)`,
      );
    }
    const record = async (script: MigrationScript): Promise<void> => {
      await client.query(`INSERT INTO ${table} (id, applied_ms, checksum) VALUES ($1, $2, $3)`, [
        script.id,
        Date.now(),
        migrationChecksum(script.sql),
      ]);
    };
    let ran: string[] = [];
    if (run.mode === 'baseline') {
      for (const script of run.record) await record(script);
    } else {
      for (const script of run.pending) {
        for (const part of migrationParts(script.sql)) {
          if (part.kind === 'check') {
            const sql = duplicatesSql('postgres', tables, part.check);
            if (sql === undefined) continue;
            const rows = (await client.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
            if (rows.length > 0) throw duplicateValuesError(script.id, part.check, rows);
            continue;
          }
          try {
            await client.query(part.sql);
          } catch (error) {
            if (isUnavailable(error)) throw error;
            throw migrationFailed(script.id, error);
          }
        }
        for (const check of referenceChecksOf(script.sql)) {
          const sql = danglingReferencesSql('postgres', tables, check);
          if (sql === undefined) continue;
          const rows = (await client.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
          if (rows.length > 0) throw danglingReferencesError(script.id, check, rows);
        }
        for (const check of constraintChecksOf(script.sql)) {
          const sql = storedValuesSql('postgres', tables, check);
          if (sql === undefined) continue;
          const rows = (await client.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
          const violations = constraintViolations(rows, check, 'postgres');
          if (violations.length > 0) throw constraintViolationsError(script.id, check, violations);
        }
        await record(script);
      }
      ran = run.pending.map((script) => script.id);
    }
    await client.query('COMMIT');
    return ran;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Session advisory lock serialising DDL of concurrent `open()`s; false where the engine has none. */
async function advisoryLock(client: pg.PoolClient, schema: string | undefined): Promise<boolean> {
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', advisoryKey(schema));
    return true;
  } catch (error) {
    const state = sqlState(error);
    if (state === '42883' || state === '0A000') return false; // undefined_function, feature_not_supported
    throw error;
  }
}

/** Fails clearly when a table created for another schema lacks columns (there are no migrations). */
async function checkColumns(
  client: pg.PoolClient,
  schema: string | undefined,
  table: TableDescriptor,
): Promise<void> {
  const result = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
      WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2`,
    [schema ?? null, table.table],
  );
  const present = new Set(result.rows.map((r) => r.column_name));
  const missing = expectedColumns(table).filter((c) => !present.has(c));
  if (missing.length > 0) {
    throw new Error(
      `PostgreSQL table ${table.table} exists but lacks column(s) ${missing.join(', ')}; ` +
        `it was created for another schema; run entity-gen generate to write the migration that ` +
        `brings it up to date and start the service with its migrations (docs/migrations.md)`,
    );
  }
}

function advisoryKey(schema: string | undefined): [number, number] {
  // First half: "EGen" as a 32-bit integer; second half: hash of the schema (or the default).
  const hash = Number.parseInt(shortHash(`schema:${schema ?? ''}`, 8), 16) | 0;
  return [0x4547656e, hash];
}

/** DDL statement; "already exists" from a concurrent creator (without advisory locks) is fine. */
async function ddl(client: pg.PoolClient, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (error) {
    const state = sqlState(error);
    // unique_violation on the catalog, duplicate_table / _object / _schema
    if (state === '23505' || state === '42P07' || state === '42710' || state === '42P06') {
      await client.query(sql);
      return;
    }
    throw error;
  }
}
