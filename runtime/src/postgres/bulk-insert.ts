/**
 * Bulk insert of the PostgreSQL driver: a list of records becomes one text array per column for
 * the insert's `unnest`, in key order; after a duplicate key (SQLSTATE 23505), the position of
 * the first record whose key exists or repeats an earlier one is found for `DuplicateKeyError`.
 */
import type { StoredFields } from '../driver.js';
import {
  keyString,
  normalizeKey,
  toText,
  columnValue,
  type Row,
  type TableCodec,
} from './values.js';

/**
 * The insert's parameters, one array per column. A fixed insert order (by key) keeps concurrent
 * batches with overlapping keys from deadlocking each other; positions are still reported in
 * request order.
 */
export function insertArrays(
  state: TableCodec,
  records: readonly StoredFields[],
): (string | null)[][] {
  const { columns } = state;
  const order = records.map((_, i) => i);
  if (records.length > 1) {
    const keys = records.map((r) => keyString(state, r));
    order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
  }
  const arrays: (string | null)[][] = columns.map(() => new Array<string | null>(records.length));
  for (let n = 0; n < order.length; n++) {
    const record = records[order[n]!]!;
    for (let c = 0; c < columns.length; c++) {
      arrays[c]![n] = toText(state.descriptor.table, columns[c]!, record[columns[c]!.name]);
    }
  }
  return arrays;
}

/** The parameters of the lookup of existing keys (`TableState.existing`): one array per key column. */
export function keyArrays(
  state: TableCodec,
  records: readonly StoredFields[],
): (string | null)[][] {
  const keyColumns = state.keyIndexes.map((i) => state.columns[i]!);
  return keyColumns.map((c) => records.map((r) => toText(state.descriptor.table, c, r[c.name])));
}

/**
 * Position of the first record whose key is among `existingRows` (the lookup's result) or
 * repeats an earlier one (SQLite reports the same).
 */
export function firstDuplicate(
  state: TableCodec,
  records: readonly StoredFields[],
  existingRows: readonly Row[],
): number | undefined {
  const keyColumns = state.keyIndexes.map((i) => state.columns[i]!);
  const existing = new Set(
    existingRows.map((row) =>
      JSON.stringify(row.map((v, i) => normalizeKey(keyColumns[i]!.kind, v))),
    ),
  );
  const seen = new Set<string>();
  for (let i = 0; i < records.length; i++) {
    const key = JSON.stringify(
      keyColumns.map((c) => normalizeKey(c.kind, columnValue(c, records[i]!))),
    );
    if (seen.has(key) || existing.has(key)) return i;
    seen.add(key);
  }
  return undefined;
}
