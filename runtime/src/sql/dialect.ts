/**
 * The interface each SQL dialect fills for the shared list/count builder, and the bound-parameter
 * list it writes into.
 */
import type { ColumnDescriptor, ColumnKind, KeyValue, TableDescriptor } from '../driver.js';

/**
 * The dialect-specific pieces of the list/count SQL built by `./query.ts`. Everything else (how
 * filters combine, NOT semantics, empty needles, ordering with the key tie-break, keyset paging)
 * is shared, so every SQL driver answers a `ListQuery` the same way.
 *
 * Conventions every implementation must keep (the driver contract suite checks them):
 * - Operands returned in `'compare'` mode compare and sort like the kind's values: numbers and
 *   DECIMAL numerically (DECIMAL exactly), DATE/DATE_TIME chronologically, text by Unicode code
 *   point (binary, case-sensitive: PostgreSQL needs `COLLATE "C"`), booleans false < true.
 * - Operands returned in `'text'` mode are the stored text of the value (for CONTAINS & co.).
 * - `orderTerm` must put NULLs first ascending and last descending (SQLite's native order;
 *   PostgreSQL must say `NULLS FIRST` / `NULLS LAST` explicitly).
 * - Parameters are added to `SqlParams` in the order their placeholders appear in the SQL text
 *   (SQLite's `?` is positional), and a returned string that binds parameters is used exactly
 *   once; the builder calls a method again when it needs an operand twice.
 */
export interface SqlDialect {
  /** Placeholder for the `n`-th (1-based) bound parameter: `?` for SQLite, `$n` for PostgreSQL. */
  placeholder(n: number): string;

  /**
   * True when row-value comparisons `(a, b) > (x, y)` are supported; the builder then uses them
   * for keyset paging when every order term has the same direction, which lets an index range
   * scan start exactly at the cursor.
   */
  readonly rowValues: boolean;

  /**
   * True when a list's LIMIT is written into the statement as a number rather than bound. SQLite's
   * planner reads a bound LIMIT's value, so binding one marks the statement for planning again:
   * every page would parse and plan its statement anew (a quarter of the benchmark page's CPU).
   * OFFSET stays bound (its value is not read by the planner, and it takes many more values).
   */
  readonly literalLimit?: boolean;

  /** Double-quoted identifier. */
  quoteIdentifier(name: string): string;

  /**
   * The condition "not soft-deleted" on a `_eg_deleted_ms` column (SPEC §13); `coalescedLive`
   * (soft-delete.ts) when absent.
   */
  live?(qualifiedColumn: string): string;

  /**
   * The table `name` as a subquery's FROM names it (schema-qualified where the driver uses a
   * schema); the quoted name when absent.
   */
  qualifiedTable?(name: string): string;

  /**
   * The expression filtering and ordering use for a top-level column. `tableSql` is the quoted
   * table name, used to qualify the column. A dialect may compare a shadow column instead (the
   * SQLite driver compares DECIMAL through a sortable encoding).
   */
  columnOperand(tableSql: string, column: ColumnDescriptor, mode: OperandMode): string;

  /**
   * The scalar at `path` inside the JSON column `columnSql` (an empty path means the whole
   * value), as an operand of `kind`. Path segments are bound or quoted, never spliced raw.
   */
  jsonOperand(
    columnSql: string,
    path: readonly string[],
    kind: ColumnKind,
    mode: OperandMode,
    params: SqlParams,
  ): string;

  /**
   * A boolean expression true when some element of the JSON array at `path` inside `columnSql`
   * satisfies `predicate`, which receives the element as an operand of `kind`. False (not NULL)
   * when the column is NULL or the array is empty.
   */
  someArrayElement(
    columnSql: string,
    path: readonly string[],
    kind: ColumnKind,
    mode: OperandMode,
    params: SqlParams,
    predicate: (element: string) => string,
  ): string;

  /** The parameter value compared against an operand of `kind` in `'compare'` mode. */
  encodeOperand(kind: ColumnKind, value: KeyValue): unknown;

  /**
   * Literal substring tests of `operand` against the non-empty text `needle`: case-sensitive, or
   * with `folded` on the case-folded needle (the caller folds the operand with `fold`).
   */
  contains(operand: string, needle: string, params: SqlParams, folded?: boolean): string;
  startsWith(operand: string, needle: string, params: SqlParams, folded?: boolean): string;
  endsWith(operand: string, needle: string, params: SqlParams, folded?: boolean): string;

  /**
   * The text expression `sql` case-folded for the case-insensitive operators (IEQUALS & co.):
   * each character mapped to its simple uppercase, then to its simple lowercase (so `ß`, `ſ`,
   * `K` (Kelvin) and final `ς` meet their usual partners), the same mapping on both sides.
   */
  fold(sql: string): string;

  /** One ORDER BY term, with NULLs first ascending and last descending. */
  orderTerm(operand: string, descending: boolean): string;

  /** The LIMIT/OFFSET tail; each argument is a placeholder or undefined. */
  limitOffset(limit: string | undefined, offset: string | undefined): string;

  /**
   * Full-text search of `words` in `table` (which has `search`; see `search.ts`): what keeps the
   * matching rows, and their relevance order. `tableSql` is the quoted table name.
   */
  search(
    table: TableDescriptor,
    tableSql: string,
    words: readonly string[],
    params: SqlParams,
  ): SearchSql;
}

/** The SQL of a full-text search (`SqlDialect.search`). */
export interface SearchSql {
  /** A join the FROM clause adds (binding its parameters when built). */
  readonly join?: string;
  /** A condition the WHERE clause adds (binding its parameters when built). */
  readonly condition?: string;
  /** The ORDER BY term putting the best matches first; built when used (it may bind). */
  rank(): string;
}

/** `'compare'` for EQUALS, GT, … and ordering; `'text'` for CONTAINS, STARTS_WITH, ENDS_WITH. */
export type OperandMode = 'compare' | 'text';

/** Collects bound parameters and hands out the dialect's placeholders. */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(private readonly dialect: Pick<SqlDialect, 'placeholder'>) {}

  /** Binds `value` and returns its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return this.dialect.placeholder(this.values.length);
  }
}

/** `"name"` with embedded `"` doubled; the quoting of both SQLite and PostgreSQL. */
export function quoteIdentifier(name: string): string {
  if (name.length === 0 || name.includes('\u0000')) {
    throw new Error(`Invalid SQL identifier ${JSON.stringify(name)}`);
  }
  return `"${name.replaceAll('"', '""')}"`;
}
