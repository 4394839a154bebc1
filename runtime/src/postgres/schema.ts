/**
 * The PostgreSQL table layout: column types per kind, bookkeeping columns and tables, identifier
 * quoting, and the DDL of entity tables, indexes and bookkeeping tables.
 */
import { createHash } from 'node:crypto';
import type { ColumnKind, TableDescriptor } from '../driver.js';
import { ciIndexName, compositeIndexes, uniqueIndexes } from '../indexes.js';
import { DELETED_AT_COLUMN, DELETED_BY_COLUMN, LIVE_INDEX_PREDICATE } from '../soft-delete.js';
import { postgresSearchColumnSql, SEARCH_COLUMN } from '../search.js';

/** Name of the table holding each entity's last create/update/delete time. */
export const ACTIVITY_TABLE = '_eg_activity';

/** Bookkeeping columns of every entity table. */
export const CREATED_COLUMN = '_eg_created_ms';
export const UPDATED_COLUMN = '_eg_updated_ms';
export const VERSION_COLUMN = '_eg_version';

/** PostgreSQL identifiers longer than this many bytes are silently truncated by the server. */
const MAX_IDENTIFIER_BYTES = 63;

/** A double-quoted identifier; any name is safe, NUL is rejected. */
export function quoteIdent(name: string): string {
  if (name.includes('\0')) throw new Error(`SQL identifier contains NUL: ${JSON.stringify(name)}`);
  return `"${name.replace(/"/g, '""')}"`;
}

/** A string literal (used only for names in DDL and catalog look-ups, never for values). */
export function quoteLiteral(text: string): string {
  if (text.includes('\0')) throw new Error('SQL literal contains NUL');
  return `'${text.replace(/'/g, "''")}'`;
}

export function shortHash(text: string, length = 12): string {
  return createHash('sha1').update(text).digest('hex').slice(0, length);
}

/** The SQL type of a column kind. Text uses the "C" collation so comparisons and ORDER BY are bytewise, as in SQLite. */
export function sqlType(kind: ColumnKind): string {
  switch (kind) {
    case 'text':
      return 'TEXT COLLATE "C"';
    case 'integer':
      return 'BIGINT';
    case 'double':
      return 'DOUBLE PRECISION';
    case 'decimal':
      return 'NUMERIC';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'datetime':
      return 'TIMESTAMPTZ';
    case 'json':
      return 'JSONB';
  }
}

/** The type a text parameter is cast to when it carries a value of this kind. */
export function castType(kind: ColumnKind): string {
  switch (kind) {
    case 'text':
      return 'TEXT';
    case 'integer':
      return 'BIGINT';
    case 'double':
      return 'DOUBLE PRECISION';
    case 'decimal':
      return 'NUMERIC';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'datetime':
      return 'TIMESTAMPTZ';
    case 'json':
      return 'JSONB';
  }
}

/**
 * Case folding in SQL: simple uppercase, then simple lowercase, under the database's default
 * collation (its LC_CTYPE: a UTF-8 locale maps every script; the "C" locale only ASCII). The
 * folded text compares bytewise (`COLLATE "C"`), the collation of an `index: ci` index on the
 * same expression (createIndexSql), so the planner can serve IEQUALS and ISTARTS_WITH from it.
 */
export function foldSql(sql: string): string {
  return `(lower(upper((${sql})::TEXT COLLATE "default")) COLLATE "C")`;
}

/** The schema-qualified (when a schema is configured) quoted name of a table. */
export function qualify(schema: string | undefined, table: string): string {
  return schema === undefined ? quoteIdent(table) : `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/** Index name of an indexed column, unique per table and within the identifier length limit. */
export function indexName(table: string, column: string): string {
  const name = `${table}__${column}__idx`;
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  const prefix = Buffer.from(table)
    .subarray(0, 40)
    .toString()
    .replace(/\uFFFD+$/, '');
  return `${prefix}_${shortHash(`${table}\0${column}`)}_idx`;
}

/** Field names that clash with the bookkeeping columns. */
export function checkColumnNames(table: TableDescriptor): void {
  const reserved = new Set([CREATED_COLUMN, UPDATED_COLUMN, VERSION_COLUMN]);
  const seen = new Set<string>();
  for (const column of table.columns) {
    if (reserved.has(column.name) || seen.has(column.name)) {
      throw new Error(
        `Table ${table.table}: field ${JSON.stringify(column.name)} clashes with another column ` +
          `(${CREATED_COLUMN}, ${UPDATED_COLUMN} and ${VERSION_COLUMN} are reserved)`,
      );
    }
    if (Buffer.byteLength(column.name) > MAX_IDENTIFIER_BYTES) {
      throw new Error(
        `Table ${table.table}: field name ${column.name} is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES}-byte identifier limit`,
      );
    }
    seen.add(column.name);
  }
  if (Buffer.byteLength(table.table) > MAX_IDENTIFIER_BYTES) {
    throw new Error(
      `Table name ${table.table} is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES}-byte identifier limit`,
    );
  }
  if (table.key.length === 0) throw new Error(`Table ${table.table} has no key columns`);
  for (const key of table.key) {
    if (!seen.has(key)) throw new Error(`Table ${table.table}: key column ${key} is not a field`);
  }
}

/**
 * CREATE TABLE statement of an entity: a column per field (NOT NULL for key and required fields,
 * as in the SQLite driver), the bookkeeping columns and the key as primary key.
 */
export function createTableSql(schema: string | undefined, table: TableDescriptor): string {
  const keys = new Set(table.key);
  const columns = table.columns.map(
    (column) =>
      `  ${quoteIdent(column.name)} ${sqlType(column.kind)}${
        column.required || keys.has(column.name) ? ' NOT NULL' : ''
      }`,
  );
  columns.push(
    `  ${quoteIdent(CREATED_COLUMN)} BIGINT NOT NULL`,
    `  ${quoteIdent(UPDATED_COLUMN)} BIGINT NOT NULL`,
    `  ${quoteIdent(VERSION_COLUMN)} INTEGER NOT NULL`,
    ...(table.softDelete === true
      ? [`  ${quoteIdent(DELETED_AT_COLUMN)} BIGINT`, `  ${quoteIdent(DELETED_BY_COLUMN)} TEXT`]
      : []),
    ...(table.search === undefined ? [] : [`  ${postgresSearchColumnSql(table)}`]),
    `  PRIMARY KEY (${table.key.map(quoteIdent).join(', ')})`,
  );
  return `CREATE TABLE IF NOT EXISTS ${qualify(schema, table.table)} (\n${columns.join(',\n')}\n)`;
}

/** Every column an entity table must have. */
export function expectedColumns(table: TableDescriptor): string[] {
  return [
    ...table.columns.map((c) => c.name),
    CREATED_COLUMN,
    UPDATED_COLUMN,
    VERSION_COLUMN,
    ...(table.softDelete === true ? [DELETED_AT_COLUMN, DELETED_BY_COLUMN] : []),
    ...(table.search === undefined ? [] : [SEARCH_COLUMN]),
  ];
}

/** The GIN index of a searchable table's `_eg_search` column (search.ts). */
export function searchIndexSql(schema: string | undefined, table: TableDescriptor): string[] {
  if (table.search === undefined) return [];
  return [
    `CREATE INDEX IF NOT EXISTS ${quoteIdent(searchIndexName(table.table))} ON ${qualify(schema, table.table)} USING GIN (${quoteIdent(SEARCH_COLUMN)})`,
  ];
}

/** The name of the GIN index of a searchable table. */
export function searchIndexName(table: string): string {
  return indexName(table, SEARCH_COLUMN);
}

/**
 * CREATE INDEX statements of the columns the schema marks as indexed. The first key column is
 * covered by the primary key; JSON columns are skipped (no list filter can use a B-tree on them),
 * as in the SQLite driver. `NULLS FIRST` matches the list order (NULLs first ascending, last
 * descending, the latter by a backward scan), so ORDER BY can read the index.
 */
export function createIndexSql(schema: string | undefined, table: TableDescriptor): string[] {
  return [
    ...tableIndexes(table).map(
      (index) =>
        `CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${qualify(
          schema,
          table.table,
        )} (${index.ci === true ? foldSql(quoteIdent(index.column)) : quoteIdent(index.column)} NULLS FIRST)`,
    ),
    ...tableCompositeIndexes(schema, table).map((index) => index.sql),
    ...(table.softDelete === true ? [createLiveIndexSql(schema, table)] : []),
  ];
}

/**
 * The partial index of a `softDelete` table's live rows, on its key (SPEC §13): a page in key
 * order, the default, reads it instead of the primary key and so never visits a soft-deleted row
 * nor the heap page its marking moved it to (a page of 100 by offset read 48 buffers instead of
 * 13). Its predicate is the list's live condition as written (`LIVE_INDEX_PREDICATE`); the
 * planner uses a partial index only for a query whose condition it can match.
 */
export function createLiveIndexSql(schema: string | undefined, table: TableDescriptor): string {
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(liveIndexName(table.table))} ON ${qualify(
    schema,
    table.table,
  )} (${table.key.map(quoteIdent).join(', ')}) WHERE ${LIVE_INDEX_PREDICATE}`;
}

/** `<table>__live`, or a hashed name when that is too long (no field or composite index ends so). */
export function liveIndexName(table: string): string {
  const plain = `${table}__live`;
  if (Buffer.byteLength(plain) <= MAX_IDENTIFIER_BYTES) return plain;
  return `${Buffer.from(table)
    .subarray(0, 40)
    .toString()
    .replace(/\uFFFD+$/, '')}_${shortHash(plain)}_live`;
}

/**
 * The declared composite indexes with their `CREATE INDEX IF NOT EXISTS`. Each column's NULL
 * order is the one the listing's ORDER BY writes (`ASC NULLS FIRST` / `DESC NULLS LAST`, nothing
 * for key columns), so the planner reads the index forwards for that order and backwards for
 * its reverse.
 */
export function tableCompositeIndexes(
  schema: string | undefined,
  table: TableDescriptor,
): { name: string; fields: readonly string[]; sql: string; unique: boolean }[] {
  const keys = new Set(table.key);
  return [
    ...compositeIndexes(table).map((index) => {
      const columns = index.columns.map(({ column, descending }) => {
        const nulls = keys.has(column.name) ? '' : descending ? ' NULLS LAST' : ' NULLS FIRST';
        return `${quoteIdent(column.name)}${descending ? ' DESC' : ''}${nulls}`;
      });
      return {
        name: index.name,
        fields: index.fields,
        sql: `CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${qualify(schema, table.table)} (${columns.join(', ')})`,
        unique: false,
      };
    }),
    // Unique rules (SPEC §16); NULLs are distinct, so absent values never collide.
    ...uniqueIndexes(table).map((index) => ({
      name: index.name,
      fields: index.columns.map((column) => column.name),
      sql: `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${qualify(schema, table.table)} (${index.columns.map((column) => quoteIdent(column.name)).join(', ')})`,
      unique: true,
    })),
  ];
}

/** The indexes `createIndexSql` creates: one per indexed column but JSON and the first key column. */
export function tableIndexes(
  table: TableDescriptor,
): { field: string; name: string; column: string; ci?: boolean }[] {
  return [
    ...table.columns
      .filter((c) => c.indexed && c.kind !== 'json' && table.key[0] !== c.name)
      .map((c) => ({ field: c.name, name: indexName(table.table, c.name), column: c.name })),
    // `index: ci`: on the folded text (bytewise), the expression the case-insensitive operators compare.
    ...table.columns
      .filter((c) => c.ciIndexed === true && c.kind === 'text')
      .map((c) => ({
        field: c.name,
        name: ciIndexName(table.table, c.name),
        column: c.name,
        ci: true,
      })),
  ];
}

/** The sequence of a table's `generated: sequence` key column: `<table>__<column>__seq`. */
export function sequenceNameOf(table: TableDescriptor): string {
  const name = `${table.table}__${table.sequence ?? ''}__seq`;
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  return `${Buffer.from(table.table)
    .subarray(0, 40)
    .toString()
    .replace(/\uFFFD+$/, '')}_${createHash('sha1').update(name).digest('hex').slice(0, 12)}_seq`;
}

/** Table holding the service's generated secrets (the key that signs list cursors). */
export const SECRETS_TABLE = '_eg_secrets';
/** The outbox: one row per committed change (SPEC §9; see outbox.ts). */
export const EVENTS_TABLE = '_eg_events';
/** The one-row counter that hands out the outbox's seqs. */
export const EVENT_SEQ_TABLE = '_eg_event_seq';
/** The queue of committed changes not yet numbered (outbox.ts, relay.ts). */
export const PENDING_TABLE = '_eg_pending';

export function createSecretsTableSql(schema: string | undefined): string {
  return `CREATE TABLE IF NOT EXISTS ${qualify(schema, SECRETS_TABLE)} (
  "name" TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  "value" TEXT NOT NULL
)`;
}

export function createActivityTableSql(schema: string | undefined): string {
  return `CREATE TABLE IF NOT EXISTS ${qualify(schema, ACTIVITY_TABLE)} (
  "entity" TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  "last_create_ms" BIGINT,
  "last_update_ms" BIGINT,
  "last_delete_ms" BIGINT
)`;
}
