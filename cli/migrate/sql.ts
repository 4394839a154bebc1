/**
 * SQL fragments shared by both dialects' migration renderers: identifiers, value literals and
 * the expression of each conversion (see conversions.ts). Values come from the schema (defaults,
 * enum values), never from users' records, and are written as escaped literals.
 */
import {
  DECIMAL_KEY_FUNCTION,
  DECIMAL_TEXT_FUNCTION,
  decimalSortKey,
  quoteIdentifier,
  postgresDdl,
  type ColumnKind,
} from '@entity-gen/runtime/ddl';
import type { JsonValue } from '../schema/types.js';
import type { CastKind, Conversion } from './conversions.js';
import type { KeptField } from './diff.js';

export type Dialect = 'sqlite' | 'postgres';

export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** A double-quoted identifier. */
export const q = quoteIdentifier;

/** A string literal. */
export function text(value: string): string {
  if (value.includes('\u0000')) throw new Error('SQL literal contains NUL');
  return `'${value.replaceAll("'", "''")}'`;
}

/** The literal of a canonical field value stored in a column of `kind`. */
export function literal(dialect: Dialect, kind: ColumnKind, value: JsonValue): string {
  const plain = typeof value === 'string' ? value : JSON.stringify(value);
  if (dialect === 'sqlite') {
    switch (kind) {
      case 'integer':
      case 'double':
        return typeof value === 'number' ? String(value) : text(plain);
      case 'boolean':
        return value === true ? '1' : '0';
      case 'json':
        return text(JSON.stringify(value));
      default:
        return text(plain);
    }
  }
  switch (kind) {
    case 'integer':
      return typeof value === 'number' ? String(value) : `CAST(${text(plain)} AS BIGINT)`;
    case 'double':
      return `CAST(${typeof value === 'number' ? String(value) : text(plain)} AS DOUBLE PRECISION)`;
    case 'decimal':
      return `CAST(${text(plain)} AS NUMERIC)`;
    case 'boolean':
      return value === true ? 'TRUE' : 'FALSE';
    case 'date':
      return `CAST(${text(plain)} AS DATE)`;
    case 'datetime':
      return `CAST(${text(plain)} AS TIMESTAMPTZ)`;
    case 'json':
      return `CAST(${text(JSON.stringify(value))} AS JSONB)`;
    default:
      return text(plain);
  }
}

/**
 * The literal of the value a single-record entity's key column always holds, `lkValue`, as the
 * canonical value of the column's kind.
 */
export function lkValueLiteral(dialect: Dialect, kind: ColumnKind, lkValue: string): string {
  const value: JsonValue =
    kind === 'integer' ? Number(lkValue) : kind === 'boolean' ? lkValue === 'true' : lkValue;
  return literal(dialect, kind, value);
}

/** NULL, typed where PostgreSQL needs it to type a CASE or USING expression. */
export function nullOf(dialect: Dialect, postgresType: string): string {
  return dialect === 'sqlite'
    ? 'NULL'
    : `CAST(NULL AS ${postgresType.replace(/ COLLATE .*$/, '')})`;
}

/** The sortable key literal of a DECIMAL default (SQLite's shadow column). */
export function decimalKeyLiteral(value: JsonValue): string {
  const key =
    typeof value === 'string' || typeof value === 'number' ? decimalSortKey(value) : undefined;
  if (key === undefined) throw new Error(`${JSON.stringify(value)} is not a decimal`);
  return text(key);
}

/** `eg_decimal_key(<expr>)`: the SQLite function computing a DECIMAL shadow key. */
export function decimalKeyOf(expr: string): string {
  return `${DECIMAL_KEY_FUNCTION}(${expr})`;
}

/** What a stored value that does not convert becomes: NULL, or the field's default. */
export interface ResetValue {
  readonly sql: string;
  readonly isNull: boolean;
}

/**
 * The new value of a column from its old value `col` under `conversion`; `reset` is the value
 * for stored values that do not convert. Returns `col` itself for the identity; NULL stays NULL.
 */
export function convertedValue(
  dialect: Dialect,
  conversion: Conversion,
  fromKind: ColumnKind,
  col: string,
  reset: ResetValue,
): string {
  const change = conversion.change;
  switch (change.op) {
    case 'identity':
      return col;
    case 'cast':
      return castExpr(dialect, change.cast, fromKind, col);
    case 'reset':
      return reset.isNull ? reset.sql : `CASE WHEN ${col} IS NULL THEN NULL ELSE ${reset.sql} END`;
    case 'removeKeys':
      return dialect === 'sqlite'
        ? `json_remove(${col}, ${change.keys.map((key) => text(`$."${key}"`)).join(', ')})`
        : `${col}${change.keys.map((key) => ` - ${text(key)}`).join('')}`;
    case 'valueSet': {
      if (change.complete) {
        const whens = change.respell.map(([from, to]) => `WHEN ${text(from)} THEN ${text(to)}`);
        return `CASE ${col} ${whens.join(' ')} ELSE ${col} END`;
      }
      const branches = [`WHEN ${col} IS NULL THEN NULL`];
      if (change.values.length > 0) {
        branches.push(`WHEN ${col} IN (${change.values.map(text).join(', ')}) THEN ${col}`);
      }
      if (change.ignoreCase) {
        const seen = new Set<string>();
        for (const value of change.values) {
          const folded = value.toLowerCase();
          if (seen.has(folded)) continue;
          seen.add(folded);
          branches.push(`WHEN lower(${col}) = ${text(folded)} THEN ${text(value)}`);
        }
      }
      return `CASE ${branches.join(' ')} ELSE ${reset.sql} END`;
    }
  }
}

function castExpr(dialect: Dialect, cast: CastKind, fromKind: ColumnKind, c: string): string {
  const utc = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
  if (dialect === 'sqlite') {
    switch (cast) {
      case 'integerToDouble':
      case 'decimalToDouble':
        return `CAST(${c} AS REAL)`;
      case 'integerToDecimal':
      case 'integerToText':
        return `CAST(${c} AS TEXT)`;
      case 'doubleToDecimal':
      case 'doubleToText':
        return `${DECIMAL_TEXT_FUNCTION}(${c})`;
      case 'decimalToText':
      case 'dateToText':
      case 'datetimeToText':
      case 'jsonToText':
        return c;
      case 'booleanToText':
        return `CASE ${c} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END`;
      case 'dateToDatetime':
        return `${c} || 'T00:00:00.000Z'`;
      case 'datetimeToDate':
        return `substr(${c}, 1, 10)`;
      case 'doubleToInteger':
      case 'decimalToInteger':
        return `CAST(${c} AS INTEGER)`;
      case 'scalarToJson':
        return fromKind === 'boolean'
          ? `CASE ${c} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END`
          : `CASE WHEN ${c} IS NULL THEN NULL ELSE json_quote(${c}) END`;
    }
  }
  switch (cast) {
    case 'integerToDouble':
    case 'decimalToDouble':
      return `CAST(${c} AS DOUBLE PRECISION)`;
    case 'integerToDecimal':
      return `CAST(${c} AS NUMERIC)`;
    case 'doubleToDecimal':
      // float8's text is the shortest round-trip form; NUMERIC then drops any exponent.
      return `CAST(CAST(${c} AS TEXT) AS NUMERIC)`;
    case 'doubleToText':
      return `CAST(CAST(CAST(${c} AS TEXT) AS NUMERIC) AS TEXT)`;
    case 'integerToText':
    case 'decimalToText':
    case 'booleanToText':
    case 'jsonToText':
      return `CAST(${c} AS TEXT)`;
    case 'dateToText':
      return `to_char(${c}, 'YYYY-MM-DD')`;
    case 'datetimeToText':
      return `to_char(${c} AT TIME ZONE 'UTC', ${utc})`;
    case 'dateToDatetime':
      return `CAST(${c} AS TIMESTAMP) AT TIME ZONE 'UTC'`;
    case 'datetimeToDate':
      return `CAST(${c} AT TIME ZONE 'UTC' AS DATE)`;
    case 'doubleToInteger':
    case 'decimalToInteger':
      return `CAST(trunc(${c}) AS BIGINT)`;
    case 'scalarToJson':
      switch (fromKind) {
        case 'decimal':
          return `to_jsonb(CAST(${c} AS TEXT))`;
        case 'date':
          return `to_jsonb(to_char(${c}, 'YYYY-MM-DD'))`;
        case 'datetime':
          return `to_jsonb(to_char(${c} AT TIME ZONE 'UTC', ${utc}))`;
        default:
          return `to_jsonb(${c})`;
      }
  }
}

/**
 * The new value of a kept column, over `col` (its name where the expression runs): converted
 * when its type changes, stored values that do not convert reset to the default (or NULL), and
 * NULLs filled with the default when the field becomes required.
 */
export function keptValue(dialect: Dialect, field: KeptField, col: string): string {
  const after = field.new;
  const fill =
    after.default === undefined ? undefined : literal(dialect, after.columnKind, after.default);
  const reset: ResetValue =
    fill === undefined
      ? { sql: nullOf(dialect, postgresDdl.columnType(after.columnKind)), isNull: true }
      : { sql: fill, isNull: false };
  const value =
    field.conversion === undefined
      ? col
      : convertedValue(dialect, field.conversion, field.old.columnKind, col, reset);
  const tighten = after.required && !field.old.required;
  return tighten && fill !== undefined ? `COALESCE(${value}, ${fill})` : value;
}
