/**
 * The table layout of both SQL drivers as DDL text, without loading a database client: what
 * `entity-gen generate` needs to write migration files that leave a database exactly as the
 * drivers' `open()` would have created it. Subpath `@entity-gen/runtime/ddl`.
 */
import type { ColumnKind, TableDescriptor } from './driver.js';
import {
  createIndexSql as postgresIndexStatements,
  createLiveIndexSql,
  createTableSql as postgresTableStatement,
  quoteIdent,
  searchIndexName,
  searchIndexSql,
  liveIndexName,
  sqlType,
  tableCompositeIndexes,
  tableIndexes,
} from './postgres/schema.js';
import { SQLITE_COLUMN_TYPES, TableLayout } from './sqlite/schema.js';
import {
  postgresSearchColumnSql,
  SEARCH_COLUMN,
  sqliteSearchCreateSql,
  sqliteSearchDropSql,
  sqliteSearchFillSql,
} from './search.js';

export type {
  ColumnDescriptor,
  ColumnKind,
  IndexColumnDescriptor,
  TableDescriptor,
  ReferenceDescriptor,
} from './driver.js';
export { ACTIVITY_TABLE, CREATED_COLUMN, UPDATED_COLUMN, VERSION_COLUMN } from './sqlite/schema.js';
export { DELETED_AT_COLUMN, DELETED_BY_COLUMN } from './soft-delete.js';
export { HISTORY_TABLE } from './history.js';
export { SEARCH_COLUMN } from './search.js';
export { MIGRATIONS_TABLE, referenceCheckLine } from './migrations.js';
export { constraintCheckLine, type ConstraintCheck } from './constraint-checks.js';
export { uniqueCheckLine } from './unique-checks.js';
export { quoteLiteral } from './postgres/schema.js';
export { quoteIdentifier } from './sql/dialect.js';
export { decimalSortKey } from './sqlite/decimal-key.js';
export {
  DECIMAL_KEY_FUNCTION,
  DECIMAL_TEXT_FUNCTION,
  decimalShadowColumn,
} from './sqlite/dialect.js';

/** An index a driver creates for an indexed field. */
export interface IndexDescriptor {
  /** The field marked `index: true` (or `index: ci`). */
  readonly field: string;
  /** The index name. */
  readonly name: string;
  /** The column it covers (SQLite indexes a DECIMAL field through its shadow column). */
  readonly column: string;
  /** An `index: ci` index: on the column's case-folded text. */
  readonly ci?: boolean;
}

/** A composite index a driver creates for an entity-level `indexes:` entry. */
export interface CompositeIndexDescriptor {
  /** The index name. */
  readonly name: string;
  /** The declared fields as written (`-price` for descending). */
  readonly fields: readonly string[];
  /** Its `CREATE INDEX IF NOT EXISTS` (`CREATE UNIQUE INDEX IF NOT EXISTS` for a unique rule). */
  readonly sql: string;
  /** A unique rule's index (SPEC §16): `fields` are its columns, in declared order. */
  readonly unique: boolean;
}

/** The DDL of one SQL driver, exactly as its `open()` runs it. */
export interface DialectDdl {
  /** `CREATE TABLE IF NOT EXISTS` of an entity table. */
  createTable(table: TableDescriptor): string;
  /**
   * `CREATE INDEX IF NOT EXISTS` of each of its indexes: those of `indexes`, in that order, then
   * those of `compositeIndexes`, then `liveIndex`'s.
   */
  createIndexes(table: TableDescriptor): string[];
  /**
   * The partial index of a `softDelete` table's live rows (SPEC §13), where the dialect has one
   * (PostgreSQL); `undefined` otherwise.
   */
  liveIndex(table: TableDescriptor): { readonly name: string; readonly sql: string } | undefined;
  /** The single-field indexes `createIndexes` creates. */
  indexes(table: TableDescriptor): IndexDescriptor[];
  /** The composite indexes `createIndexes` creates, then the unique indexes. */
  compositeIndexes(table: TableDescriptor): CompositeIndexDescriptor[];
  /** SQL type of a column kind. */
  columnType(kind: ColumnKind): string;
  /**
   * What makes a table with `search` searchable (search.ts), indexing the rows it holds: on
   * SQLite the FTS5 and keys tables, their triggers and their filling; on PostgreSQL the
   * generated `tsvector` column (filled as it is added) and its GIN index.
   */
  createSearch(table: TableDescriptor): string[];
  /** What `createSearch` made, dropped (`IF EXISTS`). */
  dropSearch(table: TableDescriptor): string[];
  /**
   * What completes the search of a table `createTable` just made (its `CREATE TABLE` already holds
   * PostgreSQL's column): SQLite's tables and triggers, PostgreSQL's GIN index.
   */
  newTableSearch(table: TableDescriptor): string[];
}

/** The SQLite driver's DDL (`WITHOUT ROWID` tables, DECIMAL shadow columns). */
export const sqliteDdl: DialectDdl = {
  createTable: (table) => new TableLayout(table).createTableSql(),
  createIndexes: (table) => new TableLayout(table).createIndexSql(),
  indexes: (table) => new TableLayout(table).indexes(),
  compositeIndexes: (table) => new TableLayout(table).compositeIndexes(),
  // A table scan that skips the marked rows beats a partial index that must look each row up.
  liveIndex: () => undefined,
  columnType: (kind) => SQLITE_COLUMN_TYPES[kind],
  createSearch: (table) => [...sqliteSearchCreateSql(table), ...sqliteSearchFillSql(table)],
  dropSearch: (table) => sqliteSearchDropSql(table.table),
  newTableSearch: (table) => sqliteSearchCreateSql(table),
};

/** The PostgreSQL driver's DDL with unqualified names (migrations run with the schema on the search path). */
export const postgresDdl: DialectDdl = {
  createTable: (table) => postgresTableStatement(undefined, table),
  createIndexes: (table) => postgresIndexStatements(undefined, table),
  indexes: (table) => tableIndexes(table),
  compositeIndexes: (table) => tableCompositeIndexes(undefined, table),
  liveIndex: (table) =>
    table.softDelete === true
      ? { name: liveIndexName(table.table), sql: createLiveIndexSql(undefined, table) }
      : undefined,
  columnType: (kind) => sqlType(kind),
  createSearch: (table) => [
    `ALTER TABLE ${quoteIdent(table.table)} ADD COLUMN ${postgresSearchColumnSql(table)}`,
    ...searchIndexSql(undefined, table),
  ],
  dropSearch: (table) => [
    `DROP INDEX IF EXISTS ${quoteIdent(searchIndexName(table.table))}`,
    `ALTER TABLE ${quoteIdent(table.table)} DROP COLUMN IF EXISTS ${quoteIdent(SEARCH_COLUMN)}`,
  ],
  newTableSearch: (table) => searchIndexSql(undefined, table),
};
