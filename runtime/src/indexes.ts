/**
 * The composite indexes a schema declares (entity-level `indexes:`), resolved once for both SQL
 * drivers: the declared columns, then the key columns not already among them, in the direction of
 * the last declared column. That is exactly the order a listing sorts by when its `orderBy` is the
 * declared columns after those its equality filters fix (the key breaks ties in the direction of
 * the last term), so the database reads such a page from the index in either direction, with no
 * sort step, and a keyset cursor seeks into it.
 */
import { createHash } from 'node:crypto';
import type { ColumnDescriptor, TableDescriptor } from './driver.js';

/** PostgreSQL truncates longer identifiers; both drivers use the same index names. */
const MAX_INDEX_NAME_BYTES = 63;

/** One column of a resolved composite index. */
export interface CompositeIndexColumn {
  readonly column: ColumnDescriptor;
  readonly descending: boolean;
  /** Appended key column (not declared). */
  readonly implicit: boolean;
}

/** A composite index as the drivers create it. */
export interface CompositeIndex {
  /** `<table>__<field>[_desc]__…__idx`, or a hashed name when that is too long or taken. */
  readonly name: string;
  /** The declared fields as written in the schema (`-price` for descending). */
  readonly fields: readonly string[];
  /** Declared columns, then the implicit key columns. */
  readonly columns: readonly CompositeIndexColumn[];
}

/** Name of a single-field index (`index: true`): `<table>__<field>__idx`. */
export function fieldIndexName(table: string, field: string): string {
  return `${table}__${field}__idx`;
}

/** The composite indexes of a table, in declared order, with unique deterministic names. */
export function compositeIndexes(table: TableDescriptor): CompositeIndex[] {
  const declared = table.indexes ?? [];
  if (declared.length === 0) return [];
  // Names of the single-field indexes, which a composite index must not take.
  const taken = new Set(
    table.columns.filter((c) => c.indexed).map((c) => fieldIndexName(table.table, c.name)),
  );
  return declared.map((spec) => {
    const columns: CompositeIndexColumn[] = spec.map(({ column, descending }) => ({
      column: columnOf(table, column),
      descending,
      implicit: false,
    }));
    if (columns.length === 0) throw new Error(`Table ${table.table}: an index has no columns`);
    const last = columns.at(-1)!.descending;
    for (const key of table.key) {
      if (spec.some((item) => item.column === key)) continue;
      columns.push({ column: columnOf(table, key), descending: last, implicit: true });
    }
    const fields = spec.map(({ column, descending }) => (descending ? `-${column}` : column));
    const plain = `${table.table}__${spec
      .map(({ column, descending }) => (descending ? `${column}_desc` : column))
      .join('__')}__idx`;
    let name = plain;
    if (Buffer.byteLength(plain) > MAX_INDEX_NAME_BYTES || taken.has(plain)) {
      const prefix = Buffer.from(table.table)
        .subarray(0, 40)
        .toString()
        .replace(/\uFFFD+$/, '');
      name = `${prefix}_${hash(`${table.table}\0${fields.join('\0')}`)}_idx`;
    }
    if (taken.has(name)) {
      throw new Error(`Table ${table.table}: index ${JSON.stringify(fields)} is declared twice`);
    }
    taken.add(name);
    return { name, fields, columns };
  });
}

function columnOf(table: TableDescriptor, name: string): ColumnDescriptor {
  const column = table.columns.find((c) => c.name === name);
  if (column === undefined) {
    throw new Error(`Table ${table.table}: index column ${name} is not a field`);
  }
  if (column.kind === 'json') {
    throw new Error(`Table ${table.table}: index column ${name} holds JSON and cannot be indexed`);
  }
  return column;
}

function hash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 12);
}
