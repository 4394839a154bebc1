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
import type { MigrationScript } from './driver.js';

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
export type MigrationErrorCode = 'DATABASE_AHEAD' | 'CHECKSUM_MISMATCH' | 'MIGRATION_FAILED';

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
