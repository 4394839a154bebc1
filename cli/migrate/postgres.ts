/**
 * Migration SQL for the PostgreSQL driver's tables (NUMERIC, JSONB, TIMESTAMPTZ,
 * TEXT COLLATE "C"; indexes `<table>__<field>__idx` with NULLS FIRST). Names are unqualified:
 * the driver runs migrations with its schema first on the search path. Type changes use
 * ALTER COLUMN … TYPE … USING; only a key change rebuilds the table.
 */
import {
  ACTIVITY_TABLE,
  CREATED_COLUMN,
  UPDATED_COLUMN,
  VERSION_COLUMN,
  postgresDdl,
  type TableDescriptor,
} from '@entity-gen/runtime/ddl';
import type { EntityModel, FieldModel } from '../model/types.js';
import type { EntityDiff, KeptField } from './diff.js';
import { keptValue, literal, lkValueLiteral, nullOf, q, text } from './sql.js';
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

/** The statements of one entity's change, in order. */
export function postgresStatements(diff: EntityDiff): string[] {
  switch (diff.kind) {
    case 'create': {
      const table = tableDescriptor(diff.new);
      return [
        postgresDdl.createTable(table),
        ...postgresDdl.createIndexes(table),
        ...(table.search === undefined ? [] : postgresDdl.newTableSearch(table)),
      ];
    }
    case 'drop':
      return [
        ...(diff.old.table.search === undefined
          ? []
          : postgresDdl.dropSearch(tableDescriptor(diff.old))),
        `DROP TABLE IF EXISTS ${q(diff.old.tableName)}`,
        `DELETE FROM ${q(ACTIVITY_TABLE)} WHERE "entity" = ${text(diff.old.name)}`,
        ...historyStatements(diff.old, undefined),
      ];
    case 'alter':
      return withSearch(postgresDdl, diff, diff.rekey ? rebuild(diff) : alter(diff));
  }
}

function alter(diff: Extract<EntityDiff, { kind: 'alter' }>): string[] {
  const oldTable = tableDescriptor(diff.old);
  const newTable = tableDescriptor(diff.new);
  const t = q(newTable.table);
  const statements: string[] = [];
  const newIndexes = postgresDdl.indexes(newTable);
  const renames: string[] = [];
  // Indexes that stay (ALTER COLUMN TYPE rebuilds them), possibly under a new name.
  const existing = new Set<string>();
  for (const index of postgresDdl.indexes(oldTable)) {
    const field = diff.kept.find((item) => item.old.name === index.field);
    const target = newIndexes.find(
      (other) => field !== undefined && other.field === field.new.name && other.ci === index.ci,
    );
    if (target === undefined) {
      statements.push(`DROP INDEX IF EXISTS ${q(index.name)}`);
      continue;
    }
    existing.add(target.name);
    if (target.name !== index.name) {
      renames.push(`ALTER INDEX ${q(index.name)} RENAME TO ${q(target.name)}`);
    }
  }
  // A composite index stays when its statement is the same (ALTER COLUMN TYPE rebuilds it).
  const newComposites = postgresDdl.compositeIndexes(newTable);
  for (const index of postgresDdl.compositeIndexes(oldTable)) {
    if (newComposites.some((other) => other.sql === index.sql)) existing.add(index.name);
    else statements.push(`DROP INDEX IF EXISTS ${q(index.name)}`);
  }
  // The live rows' index (SPEC §13) follows a renamed table; a database from before it has none
  // (the driver creates it at start).
  const oldLive = postgresDdl.liveIndex(oldTable);
  const newLive = postgresDdl.liveIndex(newTable);
  if (oldLive !== undefined && newLive !== undefined && oldLive.name !== newLive.name) {
    renames.push(`ALTER INDEX IF EXISTS ${q(oldLive.name)} RENAME TO ${q(newLive.name)}`);
  }
  statements.push(...renames);
  if (oldTable.table !== newTable.table) {
    statements.push(`ALTER TABLE ${q(oldTable.table)} RENAME TO ${t}`);
  }
  if (diff.old.name !== diff.new.name) statements.push(renameActivity(diff.old, diff.new));
  for (const field of diff.dropped) {
    statements.push(`ALTER TABLE ${t} DROP COLUMN ${q(field.name)}`);
  }
  for (const field of diff.kept) {
    if (field.old.name !== field.new.name) {
      statements.push(
        `ALTER TABLE ${t} RENAME COLUMN ${q(field.old.name)} TO ${q(field.new.name)}`,
      );
    }
  }
  for (const field of diff.kept) statements.push(...columnStatements(t, field));
  for (const field of diff.added) statements.push(...addColumn(t, field));
  statements.push(...softDeleteStatements(diff.old, diff.new, t, 'BIGINT'));
  statements.push(...historyStatements(diff.old, diff.new));
  const creates = postgresDdl.createIndexes(newTable);
  newIndexes.forEach((index, position) => {
    if (!existing.has(index.name)) statements.push(creates[position]!);
  });
  for (const index of newComposites) {
    if (!existing.has(index.name)) statements.push(indexCreation(newTable, index));
  }
  // Switched on: the live rows' index once the marks exist (switched off, dropping them drops it).
  if (oldLive === undefined && newLive !== undefined) statements.push(newLive.sql);
  return statements;
}

function columnStatements(t: string, field: KeptField): string[] {
  const { old: before, new: after } = field;
  const column = q(after.name);
  const statements: string[] = [];
  if (before.required && !after.required) {
    statements.push(`ALTER TABLE ${t} ALTER COLUMN ${column} DROP NOT NULL`);
  }
  const tighten = after.required && !before.required;
  const type = postgresDdl.columnType(after.columnKind);
  const value = keptValue('postgres', field, column);
  if (postgresDdl.columnType(before.columnKind) !== type) {
    statements.push(`ALTER TABLE ${t} ALTER COLUMN ${column} TYPE ${type} USING ${value}`);
  } else if (field.conversion !== undefined && field.conversion.change.op !== 'identity') {
    statements.push(`UPDATE ${t} SET ${column} = ${value}`);
  } else if (tighten && after.default !== undefined) {
    const fill = literal('postgres', after.columnKind, after.default);
    statements.push(`UPDATE ${t} SET ${column} = ${fill} WHERE ${column} IS NULL`);
  }
  if (tighten) statements.push(`ALTER TABLE ${t} ALTER COLUMN ${column} SET NOT NULL`);
  return statements;
}

function addColumn(t: string, field: FieldModel): string[] {
  const column = q(field.name);
  const type = postgresDdl.columnType(field.columnKind);
  const notNull = field.required ? ' NOT NULL' : '';
  if (field.default === undefined)
    return [`ALTER TABLE ${t} ADD COLUMN ${column} ${type}${notNull}`];
  // The default fills existing rows (without rewriting the table) and is then dropped again, so
  // the column ends up exactly as the driver creates it.
  return [
    `ALTER TABLE ${t} ADD COLUMN ${column} ${type}${notNull} DEFAULT ${literal('postgres', field.columnKind, field.default)}`,
    `ALTER TABLE ${t} ALTER COLUMN ${column} DROP DEFAULT`,
  ];
}

/** PostgreSQL's identifier limit; table names are ASCII, so bytes and characters agree. */
const MAX_IDENTIFIER_BYTES = 63;

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
        ? lkValueLiteral('postgres', field.columnKind, lkValue ?? '')
        : kept !== undefined
          ? keptValue('postgres', kept, q(kept.old.name))
          : field.default === undefined
            ? nullOf('postgres', postgresDdl.columnType(field.columnKind))
            : literal('postgres', field.columnKind, field.default);
    valueOfField.set(field.name, value);
    columns.push(q(field.name));
    values.push(value);
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
  const statements = [
    postgresDdl.createTable(temporary),
    `INSERT INTO ${q(temporary.table)} (${columns.join(', ')})\n` +
      `  SELECT ${values.join(', ')}\n  FROM ${q(diff.old.tableName)}\n  WHERE ${where}\n` +
      `  ORDER BY ${order}\n  ON CONFLICT DO NOTHING`,
    `DROP TABLE ${q(diff.old.tableName)}`,
    `ALTER TABLE ${q(temporary.table)} RENAME TO ${q(newTable.table)}`,
    renamePrimaryKey(newTable.table),
  ];
  if (diff.old.name !== diff.new.name) statements.push(renameActivity(diff.old, diff.new));
  statements.push(...historyStatements(diff.old, diff.new));
  statements.push(...rebuiltIndexes(postgresDdl, newTable));
  return statements;
}

/**
 * Gives a rebuilt table's primary key the name PostgreSQL gives a new table's (`<table>_pkey`):
 * the copy's key is named after the temporary table, and a later rebuild would otherwise find
 * that name taken and number it.
 */
function renamePrimaryKey(table: string): string {
  // PostgreSQL shortens the table part so that the name fits its 63-byte identifiers.
  const wanted = `${table.slice(0, MAX_IDENTIFIER_BYTES - '_pkey'.length)}_pkey`;
  return `DO $$
DECLARE
  current_name TEXT;
BEGIN
  SELECT conname INTO current_name FROM pg_constraint
   WHERE conrelid = ${text(q(table))}::regclass AND contype = 'p';
  IF current_name <> ${text(wanted)} THEN
    EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', ${text(table)}, current_name, ${text(wanted)});
  END IF;
END
$$`;
}

function renameActivity(old: EntityModel, entity: EntityModel): string {
  return `UPDATE ${q(ACTIVITY_TABLE)} SET "entity" = ${text(entity.name)} WHERE "entity" = ${text(old.name)}`;
}
