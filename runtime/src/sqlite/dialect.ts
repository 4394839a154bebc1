/**
 * The SQLite pieces of the shared list/count SQL builder (sql/query.ts): JSON paths, DECIMAL
 * shadow columns and the functions that compute them.
 */
import { foldCase } from '../fold.js';
import type { ColumnDescriptor, ColumnKind, KeyValue } from '../driver.js';
import {
  quoteIdentifier,
  type OperandMode,
  type SqlDialect,
  type SqlParams,
} from '../sql/dialect.js';
import { requireDecimalSortKey } from './decimal-key.js';
import { sqliteSearchJoin } from '../search.js';

/** SQL function (registered on every connection) returning the sortable key of a decimal. */
export const DECIMAL_KEY_FUNCTION = 'eg_decimal_key';

/** The SQL function that case-folds text (`foldCase`), registered on every connection. */
export const FOLD_FUNCTION = 'eg_fold';

/** The needle of a text test, bound already folded (the same function folds the operand). */
function bindNeedle(needle: string, params: SqlParams, folded: boolean): string {
  return params.add(folded ? foldCase(needle) : needle);
}

/**
 * The least text greater than every text starting with `prefix` in SQLite's BINARY order (UTF-8
 * bytes, i.e. code points): the prefix with its last character replaced by the next code point
 * (past the surrogates). Undefined when no such text exists (an empty prefix, or U+10FFFF last).
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const chars = [...prefix];
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last === 0x10ffff) return undefined;
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  return chars.join('') + String.fromCodePoint(next);
}

/**
 * SQL function (registered on every connection, used by migrations) returning the canonical
 * DECIMAL text of a number or numeric text: the shortest round-trip digits of a REAL, written
 * without exponent (`1e21` → `1000000000000000000000`, `2.0` → `2`); NULL for anything else.
 */
export const DECIMAL_TEXT_FUNCTION = 'eg_decimal_text';

/** Name of the hidden column holding the sortable key of a DECIMAL field. */
export function decimalShadowColumn(field: string): string {
  return `_eg_dec_${field}`;
}

/**
 * A JSON path for SQLite's JSON functions with every segment quoted: `$."address"."city"`.
 * SQLite's path syntax has no escape inside a quoted label, so segments holding `"` (which no
 * schema field name can) are rejected. Bound as a parameter, never spliced into SQL.
 */
export function sqliteJsonPath(path: readonly string[]): string {
  let text = '$';
  for (const segment of path) {
    if (segment.includes('"') || segment.includes('\u0000')) {
      throw new Error(`Unsupported JSON path segment ${JSON.stringify(segment)}`);
    }
    text += `."${segment}"`;
  }
  return text;
}

/**
 * "Not soft-deleted" in SQLite: `IS NULL` is one instruction per row, where PostgreSQL's
 * `coalesce(…) < 0` (soft-delete.ts) costs SQLite several; a page by offset tests every row it
 * skips, and SQLite's plans do not depend on statistics it does not have.
 */
export function sqliteLive(qualifiedColumn: string): string {
  return `${qualifiedColumn} IS NULL`;
}

/**
 * SQLite specifics: `?` placeholders, DECIMAL compared through its shadow column (or
 * `eg_decimal_key()` inside JSON), booleans as 0/1, `json_extract` / `json_each` with bound
 * paths, `substr`/`instr` text tests, native NULL order (first ascending, last descending).
 */
export const sqliteDialect: SqlDialect = {
  placeholder: () => '?',
  rowValues: true,
  // The driver keeps its statements by SQL text: one per page size, planned once.
  literalLimit: true,
  quoteIdentifier,
  live: sqliteLive,

  columnOperand(tableSql: string, column: ColumnDescriptor, mode: OperandMode): string {
    if (column.kind === 'decimal' && mode === 'compare') {
      return `${tableSql}.${quoteIdentifier(decimalShadowColumn(column.name))}`;
    }
    return `${tableSql}.${quoteIdentifier(column.name)}`;
  },

  jsonOperand(
    columnSql: string,
    path: readonly string[],
    kind: ColumnKind,
    mode: OperandMode,
    params: SqlParams,
  ): string {
    const extract = `json_extract(${columnSql}, ${params.add(sqliteJsonPath(path))})`;
    return kind === 'decimal' && mode === 'compare'
      ? `${DECIMAL_KEY_FUNCTION}(${extract})`
      : extract;
  },

  someArrayElement(
    columnSql: string,
    path: readonly string[],
    kind: ColumnKind,
    mode: OperandMode,
    params: SqlParams,
    predicate: (element: string) => string,
  ): string {
    const source =
      path.length === 0
        ? `json_each(${columnSql})`
        : `json_each(${columnSql}, ${params.add(sqliteJsonPath(path))})`;
    const value = '"_eg_element"."value"';
    const element =
      kind === 'decimal' && mode === 'compare' ? `${DECIMAL_KEY_FUNCTION}(${value})` : value;
    return `EXISTS (SELECT 1 FROM ${source} AS "_eg_element" WHERE ${predicate(element)})`;
  },

  encodeOperand(kind: ColumnKind, value: KeyValue): unknown {
    switch (kind) {
      case 'boolean':
        return value === true || value === 'true' || value === 1 ? 1 : 0;
      case 'decimal':
        return requireDecimalSortKey(value, 'DECIMAL filter value');
      default:
        return typeof value === 'boolean' ? (value ? 1 : 0) : value;
    }
  },

  contains(operand: string, needle: string, params: SqlParams, folded = false): string {
    return `instr(${operand}, ${bindNeedle(needle, params, folded)}) > 0`;
  },

  startsWith(operand: string, needle: string, params: SqlParams, folded = false): string {
    // Folded: the text between the prefix and its successor first (placeholders bind in the
    // order written) — the same rows, but a range an `index: ci` index on eg_fold(column)
    // serves; the exact test stays.
    let range = '';
    if (folded) {
      const prefix = foldCase(needle);
      const above = prefixSuccessor(prefix);
      range = `${operand} >= ${params.add(prefix)} AND `;
      if (above !== undefined) range += `${operand} < ${params.add(above)} AND `;
    }
    const first = bindNeedle(needle, params, folded);
    return `${range}substr(${operand}, 1, length(${first})) = ${bindNeedle(needle, params, folded)}`;
  },

  endsWith(operand: string, needle: string, params: SqlParams, folded = false): string {
    const first = bindNeedle(needle, params, folded);
    return `substr(${operand}, -length(${first})) = ${bindNeedle(needle, params, folded)}`;
  },

  fold(sql: string): string {
    return `${FOLD_FUNCTION}(${sql})`;
  },

  orderTerm(operand: string, descending: boolean): string {
    return descending ? `${operand} DESC` : operand;
  },

  limitOffset(limit: string | undefined, offset: string | undefined): string {
    if (limit === undefined && offset === undefined) return '';
    return `LIMIT ${limit ?? '-1'}${offset === undefined ? '' : ` OFFSET ${offset}`}`;
  },

  search(table, tableSql, words, params) {
    // The FTS5 table, joined through its keys table (search.ts); bm25 is lower for better.
    const { join, rank } = sqliteSearchJoin(table, tableSql, (value) => params.add(value), words);
    return { join, rank: () => `${rank} ASC` };
  },
};
