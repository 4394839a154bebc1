import {
  DELETED_AT_COLUMN,
  DELETED_BY_COLUMN,
  HISTORY_TABLE,
  quoteIdentifier,
  quoteLiteral,
  uniqueCheckLine,
  type CompositeIndexDescriptor,
  type DialectDdl,
  type TableDescriptor,
} from '@entity-gen/runtime/ddl';
import type { EntityModel } from '../model/types.js';
import { searchRebuilt, type EntityDiff } from './diff.js';

/**
 * The storage descriptor of an entity, exactly as the generated `definition.ts` declares it
 * (templates/entity/definition.ts.hbs), so migrations target the tables the drivers expect.
 */
export function tableDescriptor(entity: EntityModel): TableDescriptor {
  return {
    entity: entity.name,
    table: entity.tableName,
    columns: [
      ...(entity.fixedKeyColumn === undefined
        ? []
        : [
            {
              name: entity.fixedKeyColumn,
              kind: 'text' as const,
              fieldType: 'STRING',
              required: true,
              indexed: false,
              fixed: entity.lkValue ?? '',
            },
          ]),
      ...entity.fields.map((field) => ({
        name: field.name,
        kind: field.columnKind,
        fieldType: field.type,
        required: field.required,
        indexed: field.indexed,
        ...(field.ciIndexed ? { ciIndexed: true } : {}),
      })),
    ],
    key: entity.storageKey,
    keySeparator: entity.lkSeparator,
    ...(entity.table.indexes === undefined ? {} : { indexes: entity.table.indexes }),
    ...(entity.table.softDelete === true ? { softDelete: true } : {}),
    ...(entity.table.unique === undefined ? {} : { unique: entity.table.unique }),
    ...(entity.table.history === true ? { history: true } : {}),
    ...(entity.table.search === undefined ? {} : { search: entity.table.search }),
  };
}

/**
 * A table's statements wrapped in its search's (search.ts) when the change rebuilds it: the old
 * search dropped first, the new one built (and filled) last.
 */
export function withSearch(
  ddl: DialectDdl,
  diff: Extract<EntityDiff, { kind: 'alter' }>,
  statements: readonly string[],
): string[] {
  if (!searchRebuilt(diff)) return [...statements];
  const before = tableDescriptor(diff.old);
  const after = tableDescriptor(diff.new);
  return [
    ...(before.search === undefined ? [] : ddl.dropSearch(before)),
    ...statements,
    ...(after.search === undefined ? [] : ddl.createSearch(after)),
  ];
}

/** A descriptor without its search: the copy a key change fills before the search is built. */
export function withoutSearch(table: TableDescriptor): TableDescriptor {
  const { search: _search, ...rest } = table;
  return rest;
}

/**
 * The statement that creates a composite or unique index in a migration: a unique index is
 * preceded by its check line, so the driver lists the records that share values before the
 * index fails to build on them (SPEC §16).
 */
export function indexCreation(table: TableDescriptor, index: CompositeIndexDescriptor): string {
  if (!index.unique) return index.sql;
  return `${uniqueCheckLine({ entity: table.entity, fields: index.fields })}\n${index.sql}`;
}

/** Every index statement of a table rebuilt in a migration (its records copied in). */
export function rebuiltIndexes(ddl: DialectDdl, table: TableDescriptor): string[] {
  const single = ddl.createIndexes(table).slice(0, ddl.indexes(table).length);
  const live = ddl.liveIndex(table);
  return [
    ...single,
    ...ddl.compositeIndexes(table).map((index) => indexCreation(table, index)),
    ...(live === undefined ? [] : [live.sql]),
  ];
}

/**
 * The statements that add or drop the columns marking soft-deleted records (SPEC §13) when
 * `softDelete` is switched on or off; switched off, the soft-deleted records are purged first.
 * `t` is the quoted (new) table name.
 */
export function softDeleteStatements(
  old: EntityModel,
  entity: EntityModel,
  t: string,
  timeType: string,
): string[] {
  const before = old.table.softDelete === true;
  const after = entity.table.softDelete === true;
  const at = quoteIdentifier(DELETED_AT_COLUMN);
  const by = quoteIdentifier(DELETED_BY_COLUMN);
  if (!before && after) {
    return [
      `ALTER TABLE ${t} ADD COLUMN ${at} ${timeType}`,
      `ALTER TABLE ${t} ADD COLUMN ${by} TEXT`,
    ];
  }
  if (before && !after) {
    return [
      `DELETE FROM ${t} WHERE ${at} IS NOT NULL`,
      `ALTER TABLE ${t} DROP COLUMN ${at}`,
      `ALTER TABLE ${t} DROP COLUMN ${by}`,
    ];
  }
  return [];
}

/**
 * The statements on the kept versions (`_eg_history`, SPEC §13) of an entity that had `history`:
 * switched off (or the entity dropped, `entity` undefined), its versions are deleted; renamed,
 * they follow the new name. The table exists: the runtime created it while `history` was on.
 */
export function historyStatements(old: EntityModel, entity: EntityModel | undefined): string[] {
  if (old.table.history !== true) return [];
  const h = quoteIdentifier(HISTORY_TABLE);
  if (entity === undefined || entity.table.history !== true)
    return [`DELETE FROM ${h} WHERE "entity" = ${quoteLiteral(old.name)}`];
  if (old.name === entity.name) return [];
  return [
    `UPDATE ${h} SET "entity" = ${quoteLiteral(entity.name)} WHERE "entity" = ${quoteLiteral(old.name)}`,
  ];
}

/**
 * For the copy of a rebuilt table: the mark columns copied when both tables keep deleted records,
 * and the condition that leaves soft-deleted records behind when the new one does not.
 */
export function softDeleteCopy(
  old: EntityModel,
  entity: EntityModel,
): { columns: string[]; where: string | undefined } {
  const before = old.table.softDelete === true;
  const after = entity.table.softDelete === true;
  if (before && after) return { columns: [DELETED_AT_COLUMN, DELETED_BY_COLUMN], where: undefined };
  if (before) return { columns: [], where: `${quoteIdentifier(DELETED_AT_COLUMN)} IS NULL` };
  return { columns: [], where: undefined };
}
