/**
 * The PostgreSQL pieces of the shared list/count SQL builder (sql/query.ts): how a column, a JSON
 * path and a bound value are written in a condition or an ORDER BY.
 */
import type { ColumnDescriptor, ColumnKind, KeyValue, TableDescriptor } from '../driver.js';
import {
  quoteIdentifier,
  type OperandMode,
  type SqlDialect,
  type SqlParams,
} from '../sql/dialect.js';
import { postgresLanguage, postgresQueryText, SEARCH_COLUMN } from '../search.js';
import { foldSql, qualify } from './schema.js';

/** The needle of a text test: bound as text, folded in SQL when the operand is. */
function bindNeedle(needle: string, params: SqlParams, folded: boolean): string {
  const bound = `${params.add(needle)}::TEXT`;
  return folded ? foldSql(bound) : bound;
}

/**
 * A JSON value inside JSONB as an operand of `kind`, mirroring what SQLite's `json_extract`
 * yields: for comparisons, only a JSON value of the matching JSON type gives a value (anything
 * else is NULL, i.e. "no match", instead of a cast error); DECIMAL accepts a JSON number or a
 * numeric string and compares exactly as NUMERIC; text compares bytewise (`COLLATE "C"`). In
 * `'text'` mode the operand is the value's text (`#>> '{}'`), for CONTAINS & co.
 */
export function jsonScalar(json: string, kind: ColumnKind, mode: OperandMode): string {
  const text = `(${json} #>> '{}')`;
  if (mode === 'text') return `${text} COLLATE "C"`;
  const type = `jsonb_typeof(${json})`;
  switch (kind) {
    case 'integer':
    case 'double':
      return `(CASE WHEN ${type} = 'number' THEN ${text}::NUMERIC END)`;
    case 'decimal':
      return (
        `(CASE WHEN ${type} = 'number' THEN ${text}::NUMERIC` +
        ` WHEN ${type} = 'string' AND ${text} ~ '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,4})?$'` +
        ` THEN ${text}::NUMERIC END)`
      );
    case 'boolean':
      return `(CASE WHEN ${type} = 'boolean' THEN ${text}::BOOLEAN END)`;
    case 'text':
    case 'date':
    case 'datetime':
      // DATE and DATE_TIME are stored in JSON as canonical strings, whose byte order is chronological.
      return `(CASE WHEN ${type} = 'string' THEN ${text} END) COLLATE "C"`;
    case 'json':
      return `(${json})`;
  }
}

/**
 * PostgreSQL specifics for the shared list/count builder (`../sql/query.ts`): `$n` placeholders,
 * text bytewise via `COLLATE "C"`, DECIMAL natively as NUMERIC, JSON leaves through `#>` with a
 * bound `text[]` path, `strpos`/`left`/`right` literal text tests, explicit NULL order (first
 * ascending, last descending) except on the NOT NULL key columns, whose plain order lets the
 * primary key index serve ORDER BY.
 *
 * One dialect is made per table, because `orderTerm` needs to know which operands are key columns.
 */
export function postgresDialect(table: TableDescriptor, schema?: string): SqlDialect {
  const notNullOperands = new Set<string>();
  const keys = new Set(table.key);

  const columnOperand = (tableSql: string, column: ColumnDescriptor, mode: OperandMode): string => {
    const columnSql = `${tableSql}.${quoteIdentifier(column.name)}`;
    let operand: string;
    if (column.kind === 'text') operand = `${columnSql}`;
    else if (mode === 'text') operand = `(${columnSql})::TEXT`;
    else operand = columnSql;
    if (keys.has(column.name)) notNullOperands.add(operand);
    return operand;
  };

  const jsonAt = (columnSql: string, path: readonly string[], params: SqlParams): string =>
    path.length === 0 ? columnSql : `(${columnSql} #> ${params.add([...path])}::TEXT[])`;

  return {
    placeholder: (n: number) => `$${n}`,
    rowValues: true,
    quoteIdentifier,
    qualifiedTable: (name) => qualify(schema, name),
    columnOperand,

    jsonOperand(columnSql, path, kind, mode, params) {
      // Bound once, referenced by number wherever the CASE needs it.
      return jsonScalar(jsonAt(columnSql, path, params), kind, mode);
    },

    someArrayElement(columnSql, path, kind, mode, params, predicate) {
      const array = jsonAt(columnSql, path, params);
      const element = jsonScalar('"_eg_element"."value"', kind, mode);
      return (
        `EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array'` +
        ` THEN ${array} END) AS "_eg_element"("value") WHERE ${predicate(element)})`
      );
    },

    encodeOperand(kind: ColumnKind, value: KeyValue): unknown {
      switch (kind) {
        case 'boolean':
          return value === true || value === 'true' || value === 1;
        case 'decimal':
        case 'integer':
        case 'double':
          return typeof value === 'boolean' ? Number(value) : String(value);
        default:
          return typeof value === 'string' ? value : String(value);
      }
    },

    contains(operand, needle, params, folded = false) {
      return `strpos(${operand}, ${bindNeedle(needle, params, folded)}) > 0`;
    },

    // Folding maps each character to one character, so the needle's length is its folded length.
    startsWith(operand, needle, params, folded = false) {
      if (folded) {
        // LIKE with the folded needle as a literal prefix (`!` escapes it): the planner turns a
        // constant prefix into a range over an `index: ci` index (bytewise, as `fold` collates).
        const pattern = `replace(replace(replace(${bindNeedle(needle, params, true)}, '!', '!!'), '%', '!%'), '_', '!_')`;
        return `${operand} LIKE (${pattern} || '%') ESCAPE '!'`;
      }
      return `left(${operand}, ${params.add(codePoints(needle))}::INTEGER) = ${bindNeedle(needle, params, folded)}`;
    },

    endsWith(operand, needle, params, folded = false) {
      return `right(${operand}, ${params.add(codePoints(needle))}::INTEGER) = ${bindNeedle(needle, params, folded)}`;
    },

    fold: foldSql,

    orderTerm(operand: string, descending: boolean): string {
      if (notNullOperands.has(operand)) return descending ? `${operand} DESC` : `${operand} ASC`;
      return descending ? `${operand} DESC NULLS LAST` : `${operand} ASC NULLS FIRST`;
    },

    limitOffset(limit: string | undefined, offset: string | undefined): string {
      const parts: string[] = [];
      if (limit !== undefined) parts.push(`LIMIT ${limit}`);
      if (offset !== undefined) parts.push(`OFFSET ${offset}`);
      return parts.join(' ');
    },

    search(table, tableSql, words, params) {
      // The tsvector column and its GIN index (search.ts); the query is bound, never spliced.
      const column = `${tableSql}.${quoteIdentifier(SEARCH_COLUMN)}`;
      const language = postgresLanguage(table.search!);
      const query = (): string =>
        `to_tsquery(${language}, ${params.add(postgresQueryText(words))})`;
      return {
        condition: `${column} @@ ${query()}`,
        rank: () => `ts_rank(${column}, ${query()}) DESC`,
      };
    },
  };
}

/** Length in Unicode code points, as PostgreSQL's `left`/`right`/`length` count in UTF-8 databases. */
function codePoints(text: string): number {
  return Array.from(text).length;
}
