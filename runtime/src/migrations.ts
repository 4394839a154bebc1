/**
 * Schema migrations of a generated service: SQL files written by `entity-gen generate` when the
 * schema changes (`migrations/<seq>_<slug>_<hash8>.<dialect>.sql`), applied by the storage driver
 * at start-up and recorded in the `_eg_migrations` table. This module holds what both SQL drivers
 * share: loading the files, ordering, checksums and the decision what to apply; each driver runs
 * the SQL itself, inside one transaction (see `docs/migrations.md`).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MigrationScript, TableDescriptor } from './driver.js';

/** Table recording the migrations applied to a database: `(id, applied_ms, checksum)`. */
export const MIGRATIONS_TABLE = '_eg_migrations';

/** A row of `_eg_migrations`. */
export interface AppliedMigration {
  readonly id: string;
  readonly checksum: string;
}

/** What a driver does with a database, decided by `planMigrationRun`. */
export type MigrationRun =
  /** A new database: the tables are created from the current descriptors; every known migration is recorded as applied without running it. */
  | { readonly mode: 'baseline'; readonly record: readonly MigrationScript[] }
  /** Run these (in this order), recording each. */
  | { readonly mode: 'apply'; readonly pending: readonly MigrationScript[] };

const MIGRATION_ERROR = Symbol.for('@entity-gen/runtime.MigrationError');

/** Why the migrations of a database cannot be brought in line with the code. */
export type MigrationErrorCode =
  | 'DATABASE_AHEAD'
  | 'CHECKSUM_MISMATCH'
  | 'MIGRATION_FAILED'
  /** A migration that adds `onDelete` found stored references to missing records (SPEC §11). */
  | 'DANGLING_REFERENCES'
  /** A migration that adds or changes constraints found stored records that break them (SPEC §16). */
  | 'CONSTRAINT_VIOLATIONS'
  /** A migration that adds a unique rule found stored records that share values (SPEC §16). */
  | 'DUPLICATE_VALUES';

/** The service must not start: the database and the code's migrations disagree, or one failed. */
export class MigrationError extends Error {
  readonly [MIGRATION_ERROR] = true;

  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    /** The migration ids concerned. */
    readonly ids: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/** True for a `MigrationError` from this copy of the runtime or another. */
export function isMigrationError(error: unknown): error is MigrationError {
  return typeof error === 'object' && error !== null && MIGRATION_ERROR in error;
}

/** SHA-256 (hex) of a migration's SQL with line ends normalised, as recorded in `_eg_migrations`. */
export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
}

/**
 * Orders migration ids: by the numeric sequence before the first `_`, then by the whole id, so
 * two migrations with the same sequence (made on two branches) have a fixed order too.
 */
export function compareMigrationIds(a: string, b: string): number {
  const seq = (id: string): number => {
    const match = /^(\d+)_/.exec(id);
    return match === null ? Number.MAX_SAFE_INTEGER : Number(match[1]);
  };
  const bySeq = seq(a) - seq(b);
  if (bySeq !== 0) return bySeq;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Reads the migrations of one dialect from a folder: every `*.<dialect>.sql` file, sorted by
 * `compareMigrationIds`. A missing folder means no migrations.
 *
 * @example await loadMigrations('./migrations', 'sqlite') // [{ id: '0002_add-…', sql: '…' }]
 */
export async function loadMigrations(dir: string, dialect: string): Promise<MigrationScript[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw error;
  }
  const suffix = `.${dialect}.sql`;
  const scripts = await Promise.all(
    names
      .filter((name) => name.endsWith(suffix) && name.length > suffix.length)
      .map(async (name) => ({
        id: name.slice(0, -suffix.length),
        sql: await readFile(join(dir, name), 'utf8'),
      })),
  );
  return scripts.sort((a, b) => compareMigrationIds(a.id, b.id));
}

/**
 * Decides what to do with a database, given the code's migrations and the database's state:
 * - no `_eg_migrations` table and no entity-gen tables at all: a new database → baseline;
 * - no `_eg_migrations` table but tables (created by a runtime from before migrations): every
 *   migration is pending;
 * - otherwise the code's migrations not yet recorded are pending, in order.
 * Refuses (MigrationError) when the database recorded a migration the code does not have (the
 * database is ahead of the code) or an applied migration's file changed since.
 */
export function planMigrationRun(
  scripts: readonly MigrationScript[],
  state: {
    /** `undefined` when the database has no `_eg_migrations` table. */
    readonly applied: readonly AppliedMigration[] | undefined;
    /** Whether the database already holds entity-gen tables (`_eg_activity`). */
    readonly hasTables: boolean;
  },
): MigrationRun {
  const known = [...scripts].sort((a, b) => compareMigrationIds(a.id, b.id));
  const duplicate = known.find((script, index) => known[index + 1]?.id === script.id);
  if (duplicate !== undefined) {
    throw new MigrationError('MIGRATION_FAILED', `Migration ${duplicate.id} is given twice`, [
      duplicate.id,
    ]);
  }
  if (state.applied === undefined) {
    return state.hasTables
      ? { mode: 'apply', pending: known }
      : { mode: 'baseline', record: known };
  }
  const byId = new Map(known.map((script) => [script.id, script]));
  const unknown = state.applied
    .map((row) => row.id)
    .filter((id) => !byId.has(id))
    .sort(compareMigrationIds);
  if (unknown.length > 0) {
    throw new MigrationError(
      'DATABASE_AHEAD',
      `The database is ahead of the code: it has migration(s) ${unknown.join(', ')} applied, ` +
        `which this service does not have. Start a service version that includes them (or ` +
        `restore a backup taken before they were applied); this version refuses to start so ` +
        `that it cannot misread the newer tables`,
      unknown,
    );
  }
  const changed = state.applied
    .filter((row) => migrationChecksum(byId.get(row.id)!.sql) !== row.checksum)
    .map((row) => row.id)
    .sort(compareMigrationIds);
  if (changed.length > 0) {
    throw new MigrationError(
      'CHECKSUM_MISMATCH',
      `Migration file(s) ${changed.join(', ')} changed after they were applied to this database; ` +
        `restore the files as they were (migrations are never edited once applied) or, if the ` +
        `database really is in the state the new files describe, update the checksum in ` +
        `${MIGRATIONS_TABLE}`,
      changed,
    );
  }
  const done = new Set(state.applied.map((row) => row.id));
  return { mode: 'apply', pending: known.filter((script) => !done.has(script.id)) };
}

/** The error a driver throws when running a migration failed (the transaction is rolled back). */
export function migrationFailed(id: string, cause: unknown): MigrationError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new MigrationError(
    'MIGRATION_FAILED',
    `Migration ${id} failed, nothing was changed: ${reason}`,
    [id],
    { cause },
  );
}

/**
 * The line a migration carries for each reference it gives `onDelete` (SPEC §11): after running
 * the migration, the driver looks for stored values that name no record, and fails the migration
 * listing them.
 */
const CHECK_LINE =
  /^-- entity-gen:check-references ([A-Za-z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)[ \t]*$/gm;

/** The line of a migration that asks for the check of `entity.field`. */
export function referenceCheckLine(entity: string, field: string): string {
  return `-- entity-gen:check-references ${entity}.${field}`;
}

/** The references a migration's SQL asks to check (`referenceCheckLine`). */
export function referenceChecksOf(sql: string): { entity: string; field: string }[] {
  return [...sql.matchAll(CHECK_LINE)].map((match) => ({ entity: match[1]!, field: match[2]! }));
}

/** At most this many dangling references are listed (the query reads one more). */
export const DANGLING_LISTED = 20;

/**
 * The query listing the stored values of `source.field` that name no record of its target
 * (`referenceCheckLine`): the referencing record's id and the value, at most `DANGLING_LISTED` + 1
 * rows. Unqualified table names (the migration's own search path).
 */
export function danglingReferencesSql(
  dialect: 'sqlite' | 'postgres',
  tables: readonly TableDescriptor[],
  check: { entity: string; field: string },
): string | undefined {
  const byEntity = (name: string): TableDescriptor | undefined =>
    tables.find((table) => table.entity.toUpperCase() === name.toUpperCase());
  const source = byEntity(check.entity);
  const reference = source?.references?.find((candidate) => candidate.field === check.field);
  const target = reference === undefined ? undefined : byEntity(reference.entity);
  if (source === undefined || reference === undefined || target === undefined) return undefined;
  const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const text = (column: string): string =>
    dialect === 'sqlite' ? `CAST(${column} AS TEXT)` : `(${column})::TEXT`;
  const separator = `'${(source.keySeparator ?? '~').replaceAll("'", "''")}'`;
  const idOf = (alias: string, table: TableDescriptor): string =>
    table.key
      .map((k) => text(`${alias}.${q(k)}`))
      .join(` || '${(table.keySeparator ?? '~').replaceAll("'", "''")}' || `);
  const sourceId =
    source.key.length === 1
      ? text(`s.${q(source.key[0]!)}`)
      : source.key.map((k) => text(`s.${q(k)}`)).join(` || ${separator} || `);
  const column = `s.${q(reference.field)}`;
  if (!reference.array) {
    return `SELECT ${sourceId}, ${text(column)} FROM ${q(source.table)} AS s WHERE ${column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${q(target.table)} AS t WHERE ${idOf('t', target)} = ${text(column)}) ORDER BY 1 LIMIT ${DANGLING_LISTED + 1}`;
  }
  const element = dialect === 'sqlite' ? text('e.value') : `(e.value #>> '{}')`;
  const elements =
    dialect === 'sqlite'
      ? `json_each(${column}) AS e`
      : `jsonb_array_elements(${column}) AS e(value)`;
  return `SELECT ${sourceId}, ${element} FROM ${q(source.table)} AS s, ${elements} WHERE ${column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${q(target.table)} AS t WHERE ${idOf('t', target)} = ${element}) ORDER BY 1 LIMIT ${DANGLING_LISTED + 1}`;
}

/** The error of a migration whose check found dangling references (`rows`: id and value). */
export function danglingReferencesError(
  id: string,
  check: { entity: string; field: string },
  rows: readonly (readonly unknown[])[],
): MigrationError {
  const listed = rows
    .slice(0, DANGLING_LISTED)
    .map(
      ([record, value]) =>
        `${check.entity} ${JSON.stringify(String(record))} ${check.field} = ${JSON.stringify(String(value))}`,
    );
  const more = rows.length > DANGLING_LISTED ? `; and more` : '';
  return new MigrationError(
    'DANGLING_REFERENCES',
    `Migration ${id} gives ${check.entity}.${check.field} an onDelete rule, but stored values name no record: ` +
      `${listed.join('; ')}${more}. Fix or remove them, or regenerate with --clear-dangling-references ` +
      `to clear them in the migration (docs/migrations.md)`,
    [id],
  );
}
