/**
 * The composite indexes a schema declares (entity-level `indexes:`), resolved once for both SQL
 * drivers: the declared columns, then the key columns not already among them, in the direction of
 * the last declared column. That is exactly the order a listing sorts by when its `orderBy` is the
 * declared columns after those its equality filters fix (the key breaks ties in the direction of
 * the last term), so the database reads such a page from the index in either direction, with no
 * sort step, and a keyset cursor seeks into it.
 */
import { createHash } from 'node:crypto';
import type { ColumnDescriptor, CountQuery, ListQuery, TableDescriptor } from './driver.js';

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

/**
 * Name of a field's case-insensitive index (`index: ci`), the same on both drivers:
 * `<table>__<field>__ci_idx`, or `<table>_<12 hex digits>_ci` when longer than PostgreSQL's 63
 * bytes (the table name cut to 40 bytes; the digits hash the table and the field).
 */
export function ciIndexName(table: string, field: string): string {
  const name = `${table}__${field}__ci_idx`;
  if (Buffer.byteLength(name) <= MAX_INDEX_NAME_BYTES) return name;
  const prefix = Buffer.from(table)
    .subarray(0, 40)
    .toString()
    .replace(/\uFFFD+$/, '');
  return `${prefix}_${hash(`${table}\0${field}\0ci`)}_ci`;
}

const compositeIndexCache = new WeakMap<TableDescriptor, readonly CompositeIndex[]>();

/** The composite indexes of a table, in declared order, with unique deterministic names. */
export function compositeIndexes(table: TableDescriptor): readonly CompositeIndex[] {
  let indexes = compositeIndexCache.get(table);
  if (indexes === undefined) {
    indexes = resolveCompositeIndexes(table);
    compositeIndexCache.set(table, indexes);
  }
  return indexes;
}

function resolveCompositeIndexes(table: TableDescriptor): CompositeIndex[] {
  const declared = table.indexes ?? [];
  if (declared.length === 0) return [];
  // Names of the single-field indexes, which a composite index must not take.
  const taken = new Set([
    ...table.columns.filter((c) => c.indexed).map((c) => fieldIndexName(table.table, c.name)),
    ...table.columns.filter((c) => c.ciIndexed).map((c) => ciIndexName(table.table, c.name)),
  ]);
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

/** A unique index as the drivers create it (SPEC §16). */
export interface UniqueIndex {
  /** `<table>__<field>__…__uq`, or a hashed name when that is too long. */
  readonly name: string;
  /** Its columns, in declared order. */
  readonly columns: readonly ColumnDescriptor[];
}

const uniqueIndexCache = new WeakMap<TableDescriptor, readonly UniqueIndex[]>();

/** The unique indexes of a table (`TableDescriptor.unique`), in declared order. */
export function uniqueIndexes(table: TableDescriptor): readonly UniqueIndex[] {
  const cached = uniqueIndexCache.get(table);
  if (cached !== undefined) return cached;
  const taken = new Set<string>();
  const indexes = (table.unique ?? []).map((fields) => {
    if (fields.length === 0) throw new Error(`Table ${table.table}: a unique rule has no columns`);
    const plain = `${table.table}__${fields.join('__')}__uq`;
    let name = plain;
    if (Buffer.byteLength(plain) > MAX_INDEX_NAME_BYTES) {
      const prefix = Buffer.from(table.table)
        .subarray(0, 40)
        .toString()
        .replace(/\uFFFD+$/, '');
      name = `${prefix}_${hash(`${table.table}\0unique\0${fields.join('\0')}`)}_uq`;
    }
    if (taken.has(name)) {
      throw new Error(`Table ${table.table}: unique ${JSON.stringify(fields)} is declared twice`);
    }
    taken.add(name);
    return { name, columns: fields.map((field) => columnOf(table, field)) };
  });
  uniqueIndexCache.set(table, indexes);
  return indexes;
}

/** The unique index of this name (PostgreSQL reports the name of the index a write broke). */
export function uniqueIndexNamed(table: TableDescriptor, name: string): UniqueIndex | undefined {
  return uniqueIndexes(table).find((index) => index.name === name);
}

/**
 * The unique index over exactly these SQL columns, in order (SQLite reports the columns of the
 * index a write broke; a DECIMAL column by its shadow column, named by `sqlColumn`).
 */
export function uniqueIndexOnColumns(
  table: TableDescriptor,
  columns: readonly string[],
  sqlColumn: (column: ColumnDescriptor) => string = (column) => column.name,
): UniqueIndex | undefined {
  return uniqueIndexes(table).find(
    (index) =>
      index.columns.length === columns.length &&
      index.columns.every((column, i) => sqlColumn(column) === columns[i]),
  );
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

/**
 * The indexes whose entries end with the key on an engine that keeps a table in its key's order and
 * appends the key to every index entry (SQLite's `WITHOUT ROWID` tables): the primary key itself,
 * and each single-field index (`index: true`) as its field, then the key, all ascending.
 */
function keyOrderedIndexes(table: TableDescriptor): { column: string; descending: boolean }[][] {
  const ascending = (column: string): { column: string; descending: boolean } => ({
    column,
    descending: false,
  });
  const key = table.key.map(ascending);
  return [
    key,
    ...table.columns
      .filter((c) => c.indexed && c.kind !== 'json' && table.key[0] !== c.name)
      .map((c) => [ascending(c.name), ...key.filter((k) => k.column !== c.name)]),
  ];
}

/**
 * Whether an index serves this list and bounds what it reads (see docs/api.md, "Composite
 * indexes"): every filter is one equality on a top-level field, those fields are the index's first
 * columns, the full order (`orderBy`, then the key) is the rest of the index in its direction or
 * all reversed, a cursor seeks (every sort field required, so its values are present), and the
 * page reads at most `maxRows` index entries (offset + limit). Such a page costs about what its
 * rows cost, whatever the table's size.
 *
 * The indexes are the composite ones; with `keyOrdered`, also the primary key and the single-field
 * indexes of an engine whose index entries end with the key (`keyOrderedIndexes`).
 */
export function indexBoundsList(
  table: TableDescriptor,
  query: ListQuery,
  maxRows: number,
  options: { readonly keyOrdered?: boolean } = {},
): boolean {
  if (query.limit === undefined || (query.offset ?? 0) + query.limit > maxRows) return false;
  // A search, a filter expression or only the deleted records may skip any number of entries.
  if (query.search !== undefined || query.expression !== undefined || query.deleted === 'only')
    return false;
  if (keyLookup(table, query)) return true;
  const fixed = new Set<string>();
  for (const group of query.filters) {
    const condition = group.anyOf.length === 1 ? group.anyOf[0]! : undefined;
    if (
      condition === undefined ||
      condition.operator !== 'EQUALS' ||
      condition.path.length !== 1 ||
      condition.arrayMembership === true ||
      condition.through !== undefined
    )
      return false;
    fixed.add(condition.path[0]!);
  }
  // The full order as the query builder writes it, without the columns the filters fix.
  const keyDescending = query.orderBy.at(-1)?.descending ?? false;
  const order: { column: string; descending: boolean }[] = [];
  const seen = new Set<string>();
  for (const term of [
    ...query.orderBy,
    ...table.key.map((column) => ({ column, descending: keyDescending })),
  ]) {
    if (seen.has(term.column)) continue;
    seen.add(term.column);
    if (!fixed.has(term.column)) order.push(term);
  }
  if (query.after !== undefined) {
    for (const term of query.orderBy) {
      const column = table.columns.find((c) => c.name === term.column);
      if (column === undefined || !(column.required || table.key.includes(column.name)))
        return false;
    }
  }
  const candidates = compositeIndexes(table).map(({ columns }) =>
    columns.map(({ column, descending }) => ({ column: column.name, descending })),
  );
  if (options.keyOrdered === true) candidates.push(...keyOrderedIndexes(table));
  return candidates.some((columns) => {
    if (columns.length !== fixed.size + order.length) return false;
    for (let i = 0; i < fixed.size; i++) if (!fixed.has(columns[i]!.column)) return false;
    const rest = columns.slice(fixed.size);
    if (rest.length === 0) return true;
    const reversed = rest[0]!.descending !== order[0]!.descending;
    return rest.every(
      (column, i) =>
        column.column === order[i]!.column &&
        (column.descending !== order[i]!.descending) === reversed,
    );
  });
}

/**
 * Whether an index bounds what a count reads: every filter is one equality on a top-level field,
 * and those fields are the leading columns of the key, of a single-field index or of a composite
 * index. Counting then walks only the index entries that match, whatever the table's size.
 */
export function indexBoundsCount(table: TableDescriptor, query: CountQuery): boolean {
  if (query.filters.length === 0 || query.search !== undefined) return false;
  const fixed = new Set<string>();
  for (const group of query.filters) {
    const condition = group.anyOf.length === 1 ? group.anyOf[0]! : undefined;
    if (
      condition === undefined ||
      condition.operator !== 'EQUALS' ||
      condition.path.length !== 1 ||
      condition.arrayMembership === true ||
      condition.through !== undefined
    )
      return false;
    fixed.add(condition.path[0]!);
  }
  const leads = (columns: readonly string[]): boolean =>
    columns.length >= fixed.size && columns.slice(0, fixed.size).every((c) => fixed.has(c));
  if (leads(table.key)) return true;
  if (fixed.size === 1 && table.columns.some((c) => c.indexed === true && fixed.has(c.name)))
    return true;
  return compositeIndexes(table).some(({ columns }) => leads(columns.map((c) => c.column.name)));
}

/**
 * A list of records by their keys (`key=a OR key=b …`, what an expansion reads, SPEC §11): the
 * primary key serves it, and it reads at most one row per key.
 */
function keyLookup(table: TableDescriptor, query: ListQuery): boolean {
  if (table.key.length !== 1 || query.filters.length !== 1 || query.after !== undefined)
    return false;
  const key = table.key[0];
  return query.filters[0]!.anyOf.every(
    (condition) =>
      condition.operator === 'EQUALS' &&
      condition.path.length === 1 &&
      condition.path[0] === key &&
      condition.arrayMembership !== true &&
      condition.through === undefined,
  );
}
