/**
 * Migration SQL for the SQLite driver's tables (WITHOUT ROWID, a hidden `_eg_dec_<field>`
 * sortable key per DECIMAL field, indexes `<table>__<field>__idx`). Columns change with
 * ALTER TABLE (ADD / RENAME / DROP COLUMN, SQLite ≥ 3.35); a column whose SQL type or NOT NULL
 * changes is swapped for a new one (add, copy converted, drop, rename), which keeps every other
 * column as it is even when another branch's migration added some. Only a key change rebuilds
 * the table. Runs through the SQLite driver, which provides `eg_decimal_key` and `eg_decimal_text`.
 */
import {
  ACTIVITY_TABLE,
  CREATED_COLUMN,
  UPDATED_COLUMN,
  VERSION_COLUMN,
  decimalShadowColumn,
  sqliteDdl,
  type TableDescriptor,
} from '@entity-gen/runtime/ddl';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { EntityDiff, KeptField } from './diff.js';
import {
  decimalKeyLiteral,
  decimalKeyOf,
  keptValue,
  literal,
  lkValueLiteral,
  q,
  text,
} from './sql.js';
import {
  historyStatements,
  indexCreation,
  rebuiltIndexes,
  softDeleteCopy,
  softDeleteStatements,
  tableDescriptor,
  withoutSearch,
  withSearch,
} from './tables.js';

/** A placeholder default for NOT NULL columns added before their values are copied in. */
const PLACEHOLDER: Readonly<Record<string, string>> = { TEXT: "''", INTEGER: '0', REAL: '0' };

/** The statements of one entity's change, in order. */
export function sqliteStatements(diff: EntityDiff): string[] {
  switch (diff.kind) {
    case 'create': {
      const table = tableDescriptor(diff.new);
      return [
        sqliteDdl.createTable(table),
        ...sqliteDdl.createIndexes(table),
        ...(table.search === undefined ? [] : sqliteDdl.newTableSearch(table)),
      ];
    }
    case 'drop':
      return [
        ...(diff.old.table.search === undefined
          ? []
          : sqliteDdl.dropSearch(tableDescriptor(diff.old))),
        `DROP TABLE IF EXISTS ${q(diff.old.tableName)}`,
        `DELETE FROM ${q(ACTIVITY_TABLE)} WHERE entity = ${text(diff.old.name)}`,
        ...historyStatements(diff.old, undefined),
      ];
    case 'alter':
      return withSearch(sqliteDdl, diff, diff.rekey ? rebuild(diff) : alter(diff));
  }
}

interface ColumnWork {
  readonly field: KeptField;
  /** SQL type or NOT NULL changes: the column is replaced by a new one. */
  readonly swap: boolean;
  /** The new value, over the column's new name. */
  readonly value: string;
  readonly dropShadow: boolean;
  readonly addShadow: boolean;
}

function alter(diff: Extract<EntityDiff, { kind: 'alter' }>): string[] {
  const oldTable = tableDescriptor(diff.old);
  const newTable = tableDescriptor(diff.new);
  const t = q(newTable.table);
  const work = diff.kept.map((field) => columnWork(field));
  const statements: string[] = [];
  // Indexes first: SQLite cannot drop or swap an indexed column, and has no ALTER INDEX RENAME.
  const newIndexes = sqliteDdl.indexes(newTable);
  const untouched = new Set<string>();
  for (const index of sqliteDdl.indexes(oldTable)) {
    const column = work.find((item) => item.field.old.name === index.field);
    const unchanged =
      oldTable.table === newTable.table &&
      column !== undefined &&
      column.field.new.name === index.field &&
      !column.swap &&
      !column.dropShadow &&
      newIndexes.some((other) => other.name === index.name && other.column === index.column);
    if (unchanged) untouched.add(index.name);
    else statements.push(`DROP INDEX IF EXISTS ${q(index.name)}`);
  }
  // A composite index stays only when its statement is the same and none of its columns changes.
  const newComposites = sqliteDdl.compositeIndexes(newTable);
  for (const index of sqliteDdl.compositeIndexes(oldTable)) {
    const same = newComposites.some((other) => other.sql === index.sql);
    const touched = work.some(
      (item) =>
        (item.swap || item.dropShadow) &&
        index.fields.some((field) => field.replace(/^-/, '') === item.field.new.name),
    );
    if (same && !touched) untouched.add(index.name);
    else statements.push(`DROP INDEX IF EXISTS ${q(index.name)}`);
  }
  if (oldTable.table !== newTable.table) {
    statements.push(`ALTER TABLE ${q(oldTable.table)} RENAME TO ${t}`);
  }
  if (diff.old.name !== diff.new.name) statements.push(renameActivity(diff.old, diff.new));
  for (const field of diff.dropped) {
    statements.push(`ALTER TABLE ${t} DROP COLUMN ${q(field.name)}`);
    if (field.columnKind === 'decimal') {
      statements.push(`ALTER TABLE ${t} DROP COLUMN ${q(decimalShadowColumn(field.name))}`);
    }
  }
  for (const { field } of work) {
    if (field.old.name === field.new.name) continue;
    statements.push(`ALTER TABLE ${t} RENAME COLUMN ${q(field.old.name)} TO ${q(field.new.name)}`);
    if (field.old.columnKind === 'decimal') {
      statements.push(
        `ALTER TABLE ${t} RENAME COLUMN ${q(decimalShadowColumn(field.old.name))} TO ` +
          q(decimalShadowColumn(field.new.name)),
      );
    }
  }
  for (const item of work) statements.push(...columnStatements(t, item));
  for (const field of diff.added) statements.push(...addColumn(t, field));
  statements.push(...softDeleteStatements(diff.old, diff.new, t, 'INTEGER'));
  statements.push(...historyStatements(diff.old, diff.new));
  statements.push(...createIndexes(newTable, untouched));
  return statements;
}

/** The driver's CREATE INDEX statements of the indexes not in `existing`. */
function createIndexes(table: TableDescriptor, existing: ReadonlySet<string>): string[] {
  const statements = sqliteDdl.createIndexes(table);
  return [
    ...sqliteDdl
      .indexes(table)
      .flatMap((index, position) => (existing.has(index.name) ? [] : [statements[position]!])),
    ...sqliteDdl
      .compositeIndexes(table)
      .flatMap((index) => (existing.has(index.name) ? [] : [indexCreation(table, index)])),
  ];
}

function columnWork(field: KeptField): ColumnWork {
  const { old: before, new: after } = field;
  const swap =
    sqliteDdl.columnType(before.columnKind) !== sqliteDdl.columnType(after.columnKind) ||
    before.required !== after.required;
  const value = keptValue('sqlite', field, q(after.name));
  const changed = value !== q(after.name);
  const addShadow =
    after.columnKind === 'decimal' && (swap || changed || before.columnKind !== 'decimal');
  const dropShadow =
    before.columnKind === 'decimal' && (after.columnKind !== 'decimal' || addShadow);
  return { field, swap, value, dropShadow, addShadow };
}

function columnStatements(t: string, item: ColumnWork): string[] {
  const after = item.field.new;
  const column = q(after.name);
  const statements: string[] = [];
  if (item.dropShadow) {
    statements.push(`ALTER TABLE ${t} DROP COLUMN ${q(decimalShadowColumn(after.name))}`);
  }
  if (item.swap) {
    const temporary = q(`_eg_new_${after.name}`);
    statements.push(
      `ALTER TABLE ${t} ADD COLUMN ${temporary} ${columnType(after)}`,
      `UPDATE ${t} SET ${temporary} = ${item.value}`,
      `ALTER TABLE ${t} DROP COLUMN ${column}`,
      `ALTER TABLE ${t} RENAME COLUMN ${temporary} TO ${column}`,
    );
  } else if (item.value !== column) {
    statements.push(`UPDATE ${t} SET ${column} = ${item.value}`);
  }
  if (item.addShadow) {
    const shadow = q(decimalShadowColumn(after.name));
    statements.push(
      `ALTER TABLE ${t} ADD COLUMN ${shadow} TEXT${after.required ? ` NOT NULL DEFAULT '1'` : ''}`,
      `UPDATE ${t} SET ${shadow} = ${decimalKeyOf(column)}`,
    );
  }
  return statements;
}

/** `TYPE [NOT NULL DEFAULT x]`: SQLite adds a NOT NULL column only with a non-NULL default. */
function columnType(field: FieldModel): string {
  const type = sqliteDdl.columnType(field.columnKind);
  if (!field.required) return type;
  const fallback =
    field.default === undefined
      ? PLACEHOLDER[type]!
      : literal('sqlite', field.columnKind, field.default);
  return `${type} NOT NULL DEFAULT ${fallback}`;
}

function addColumn(t: string, field: FieldModel): string[] {
  const column = q(field.name);
  const statements = [`ALTER TABLE ${t} ADD COLUMN ${column} ${columnType(field)}`];
  const backfill = !field.required && field.default !== undefined;
  if (backfill) {
    statements.push(
      `UPDATE ${t} SET ${column} = ${literal('sqlite', field.columnKind, field.default!)}`,
    );
  }
  if (field.columnKind === 'decimal') {
    const shadow = q(decimalShadowColumn(field.name));
    const notNull = field.required
      ? ` NOT NULL DEFAULT ${field.default === undefined ? "'1'" : decimalKeyLiteral(field.default)}`
      : '';
    statements.push(`ALTER TABLE ${t} ADD COLUMN ${shadow} TEXT${notNull}`);
    if (backfill)
      statements.push(`UPDATE ${t} SET ${shadow} = ${decimalKeyLiteral(field.default!)}`);
  }
  return statements;
}

/** A key change: copy every record into a table with the new key, dropping those that do not fit. */
function rebuild(diff: Extract<EntityDiff, { kind: 'alter' }>): string[] {
  const newTable = tableDescriptor(diff.new);
  // Within PostgreSQL's 63-byte identifier limit (table names are ASCII), in both dialects alike.
  const temporary: TableDescriptor = {
    ...withoutSearch(newTable),
    table: `_eg_rekey_${newTable.table}`.slice(0, 63),
  };
  const columns: string[] = [];
  const values: string[] = [];
  const valueOfField = new Map<string, string>();
  const { fixedKeyColumn, lkValue, singleRecord } = diff.new;
  if (fixedKeyColumn !== undefined) {
    valueOfField.set(fixedKeyColumn, text(lkValue ?? ''));
    columns.push(q(fixedKeyColumn));
    values.push(text(lkValue ?? ''));
  }
  for (const field of diff.new.fields) {
    const kept = diff.kept.find((item) => item.new === field);
    const value =
      singleRecord && field.isKey
        ? lkValueLiteral('sqlite', field.columnKind, lkValue ?? '')
        : kept !== undefined
          ? keptValue('sqlite', kept, q(kept.old.name))
          : field.default === undefined
            ? 'NULL'
            : literal('sqlite', field.columnKind, field.default);
    valueOfField.set(field.name, value);
    columns.push(q(field.name));
    values.push(value);
  }
  for (const field of diff.new.fields) {
    if (field.columnKind !== 'decimal') continue;
    columns.push(q(decimalShadowColumn(field.name)));
    values.push(decimalKeyOf(valueOfField.get(field.name)!));
  }
  const marks = softDeleteCopy(diff.old, diff.new);
  for (const bookkeeping of [CREATED_COLUMN, UPDATED_COLUMN, VERSION_COLUMN, ...marks.columns]) {
    columns.push(q(bookkeeping));
    values.push(q(bookkeeping));
  }
  const where = [
    ...diff.new.storageKey.map((name) => `(${valueOfField.get(name)!}) IS NOT NULL`),
    ...(marks.where === undefined ? [] : [marks.where]),
  ].join(' AND ');
  const order = diff.old.storageKey.map(q).join(', ');
  return [
    sqliteDdl.createTable(temporary),
    `INSERT OR IGNORE INTO ${q(temporary.table)} (${columns.join(', ')})\n` +
      `  SELECT ${values.join(', ')}\n  FROM ${q(diff.old.tableName)}\n  WHERE ${where}\n  ORDER BY ${order}`,
    `DROP TABLE ${q(diff.old.tableName)}`,
    `ALTER TABLE ${q(temporary.table)} RENAME TO ${q(newTable.table)}`,
    ...(diff.old.name === diff.new.name ? [] : [renameActivity(diff.old, diff.new)]),
    ...historyStatements(diff.old, diff.new),
    ...rebuiltIndexes(sqliteDdl, newTable),
  ];
}

function renameActivity(old: EntityModel, entity: EntityModel): string {
  return `UPDATE ${q(ACTIVITY_TABLE)} SET entity = ${text(entity.name)} WHERE entity = ${text(old.name)}`;
}
