/**
 * Values of the PostgreSQL driver: field values as the bound text parameters the statements cast
 * (`toText`), rows back into stored records (`toStored`), and keys as compared in JavaScript.
 */
import type {
  ColumnDescriptor,
  ColumnKind,
  KeyValues,
  StoredFields,
  StoredRecord,
  TableDescriptor,
} from '../driver.js';

/** A result row in `rowMode: 'array'`. */
export type Row = unknown[];

/** What the value conversions need to know of a table. */
export interface TableCodec {
  readonly descriptor: TableDescriptor;
  readonly columns: readonly ColumnDescriptor[];
  /** Position in `columns` of each key column, in key order. */
  readonly keyIndexes: readonly number[];
}

export function checkTime(now: number): void {
  if (!Number.isSafeInteger(now))
    throw new TypeError(`Write time must be integer milliseconds, got ${now}`);
}

export function keyParams(state: TableCodec, key: KeyValues): unknown[] {
  if (key.length !== state.keyIndexes.length) {
    throw new Error(
      `Table ${state.descriptor.table}: expected ${state.keyIndexes.length} key values, got ${key.length}`,
    );
  }
  return state.keyIndexes.map((index, i) =>
    toParam(state.descriptor.table, state.columns[index]!, key[i]),
  );
}

/** A key value as compared in JS: numbers for BIGINT, booleans, everything else as text. */
export function normalizeKey(kind: ColumnKind, value: unknown): unknown {
  if (kind === 'integer') return Number(value);
  if (kind === 'boolean') return value === true || value === 'true';
  return String(value);
}

export function keyString(state: TableCodec, record: StoredFields): string {
  return JSON.stringify(
    state.keyIndexes.map((i) => {
      const column = state.columns[i]!;
      return normalizeKey(column.kind, columnValue(column, record));
    }),
  );
}

/** What a record holds in a column: its field, or the column's fixed value. */
export function columnValue(column: ColumnDescriptor, record: StoredFields): unknown {
  return column.fixed ?? record[column.name];
}

/** A field value as a bound parameter (pg sends it as text; the statement gives its type). */
export function toParam(table: string, column: ColumnDescriptor, value: unknown): unknown {
  return toText(table, column, value);
}

/** A field value as the text PostgreSQL parses for the column's type, or NULL. */
export function toText(table: string, column: ColumnDescriptor, value: unknown): string | null {
  if (column.fixed !== undefined) return column.fixed;
  if (value === undefined || value === null) return null;
  switch (column.kind) {
    case 'json':
      return JSON.stringify(value);
    case 'boolean':
      if (typeof value !== 'boolean') {
        throw new TypeError(`${table}.${column.name}: expected a boolean, got ${typeof value}`);
      }
      return value ? 'true' : 'false';
    case 'integer':
    case 'double':
      if (typeof value === 'number' && !Number.isFinite(value)) {
        throw new TypeError(`${table}.${column.name}: expected a finite number, got ${value}`);
      }
      return String(value);
    default:
      return typeof value === 'string' ? value : String(value);
  }
}

export function toStored(state: TableCodec, row: Row): StoredRecord {
  const { columns } = state;
  const record: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const value = row[i];
    if (value === null || value === undefined || columns[i]!.fixed !== undefined) continue;
    const name = columns[i]!.name;
    if (name === '__proto__') {
      Object.defineProperty(record, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      record[name] = value;
    }
  }
  const n = columns.length;
  return {
    record,
    version: Number(row[n]),
    createdAt: Number(row[n + 1]),
    updatedAt: Number(row[n + 2]),
  };
}
