import type {
  ColumnDescriptor,
  CountQuery,
  FilterCondition,
  FilterGroup,
  KeyValue,
  ListQuery,
  OrderTerm,
  TableDescriptor,
} from '../driver.js';
import { SqlParams, type OperandMode, type SqlDialect } from './dialect.js';

/**
 * Dialect-neutral translation of a `ListQuery` into SQL. Every value is bound as a parameter;
 * identifiers come from the table descriptor and are quoted.
 *
 * Semantics (shared by every SQL driver, checked by the driver contract suite):
 * - Conditions of a group are joined by OR, groups by AND; a group without conditions matches
 *   nothing.
 * - A field that is absent (NULL) matches NOT_EQUALS and NOT_CONTAINS and nothing else.
 * - CONTAINS / STARTS_WITH / ENDS_WITH are literal and case-sensitive; the empty needle matches
 *   every present value.
 * - `arrayMembership`: EQUALS and CONTAINS mean "some element equals the value", NOT_EQUALS and
 *   NOT_CONTAINS "no element equals it" (true for an absent or empty array); the other operators
 *   mean "some element satisfies the operator".
 * - Order: the `orderBy` terms, then the key columns in the direction of the last term
 *   (ascending without terms), skipping columns already ordered. NULLs sort first ascending and
 *   last descending.
 * - `after` holds the sort values of the last row seen, either for every term of `orderBy`
 *   followed by every key column, or for the de-duplicated term list; rows strictly after it
 *   (in the order above) are returned.
 */

/** A resolved sort term. */
export interface SortTerm {
  readonly column: ColumnDescriptor;
  readonly descending: boolean;
  /** The column may hold NULL (optional field, not part of the key). */
  readonly nullable: boolean;
  /** The operand as the dialect compares and orders it. */
  readonly operand: string;
}

/** A statement ready to prepare: SQL text plus its parameters in placeholder order. */
export interface BuiltSql {
  readonly sql: string;
  readonly params: unknown[];
}

/** Builds the SELECT for a list query; `select` is the select list (dialect-specific decoding). */
export function buildListSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: ListQuery,
  select: string,
): BuiltSql {
  const params = new SqlParams(dialect);
  const tableSql = dialect.quoteIdentifier(table.table);
  const conditions: string[] = [];
  const filter = buildFilterSql(dialect, table, query.filters, params);
  if (filter !== undefined) conditions.push(filter);
  const terms = resolveSortTerms(dialect, table, query.orderBy);
  if (query.after !== undefined) {
    conditions.push(...buildKeysetSql(dialect, terms, alignAfter(table, query, terms), params));
  }
  let sql = `SELECT ${select} FROM ${tableSql}`;
  if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
  sql += ` ORDER BY ${terms.map((t) => dialect.orderTerm(t.operand, t.descending)).join(', ')}`;
  const limit =
    query.limit === undefined ? undefined : params.add(checkCount('limit', query.limit));
  const offset =
    query.offset === undefined || query.offset === 0
      ? undefined
      : params.add(checkCount('offset', query.offset));
  const tail = dialect.limitOffset(limit, offset);
  if (tail !== '') sql += ` ${tail}`;
  return { sql, params: params.values };
}

/** Builds `SELECT count(*)` for the query's filters. */
export function buildCountSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: CountQuery,
): BuiltSql {
  const params = new SqlParams(dialect);
  const filter = buildFilterSql(dialect, table, query.filters, params);
  let sql = `SELECT count(*) FROM ${dialect.quoteIdentifier(table.table)}`;
  if (filter !== undefined) sql += ` WHERE ${filter}`;
  return { sql, params: params.values };
}

/** The WHERE condition of the filters, or `undefined` when there are none. */
export function buildFilterSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  filters: readonly FilterGroup[],
  params: SqlParams,
): string | undefined {
  if (filters.length === 0) return undefined;
  return filters
    .map((group) => {
      if (group.anyOf.length === 0) return '(1 = 0)';
      const parts = group.anyOf.map((c) => buildConditionSql(dialect, table, c, params));
      return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
    })
    .join(' AND ');
}

const NEGATED = new Set(['NOT_EQUALS', 'NOT_CONTAINS']);

/** One filter condition as a boolean SQL expression. */
export function buildConditionSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  condition: FilterCondition,
  params: SqlParams,
): string {
  const [name, ...path] = condition.path;
  const column = name === undefined ? undefined : findColumn(table, name);
  if (column === undefined) {
    throw new Error(
      `Filter on unknown column ${JSON.stringify(condition.path.join('.'))} of table ${table.table}`,
    );
  }
  const tableSql = dialect.quoteIdentifier(table.table);
  const columnSql = `${tableSql}.${dialect.quoteIdentifier(column.name)}`;
  const { operator, kind, value } = condition;
  const mode: OperandMode = isTextOperator(operator) ? 'text' : 'compare';

  if (condition.arrayMembership === true) {
    if (column.kind !== 'json') {
      throw new Error(`Array membership filter on non-JSON column ${column.name}`);
    }
    // Membership: EQUALS/CONTAINS → some element equals; NOT_* → no element equals.
    const elementOperator: PositiveOperator =
      operator === 'CONTAINS' || operator === 'NOT_CONTAINS' || operator === 'NOT_EQUALS'
        ? 'EQUALS'
        : operator;
    const elementMode: OperandMode = isTextOperator(elementOperator) ? 'text' : 'compare';
    const exists = dialect.someArrayElement(columnSql, path, kind, elementMode, params, (element) =>
      compare(dialect, element, elementOperator, kind, value, params),
    );
    return NEGATED.has(operator) ? `(NOT ${exists})` : exists;
  }

  if (column.kind !== 'json' && path.length > 0) {
    throw new Error(`Path filter ${condition.path.join('.')} on non-JSON column ${column.name}`);
  }
  // An operand may bind parameters (a JSON path), so it is rebuilt for every use: with `?`
  // placeholders, parameters must be added in the order they appear in the SQL text.
  const operand = (): string =>
    column.kind === 'json'
      ? dialect.jsonOperand(columnSql, path, kind, mode, params)
      : dialect.columnOperand(tableSql, column, mode);
  const valueKind = column.kind === 'json' ? kind : column.kind;
  if (NEGATED.has(operator)) {
    const nullTest = `${operand()} IS NULL`;
    const positive = compare(
      dialect,
      operand(),
      operator === 'NOT_EQUALS' ? 'EQUALS' : 'CONTAINS',
      valueKind,
      value,
      params,
    );
    return `(${nullTest} OR NOT (${positive}))`;
  }
  return compare(dialect, operand(), operator as PositiveOperator, valueKind, value, params);
}

type PositiveOperator = Exclude<FilterCondition['operator'], 'NOT_EQUALS' | 'NOT_CONTAINS'>;

function isTextOperator(operator: FilterCondition['operator']): boolean {
  return (
    operator === 'CONTAINS' ||
    operator === 'NOT_CONTAINS' ||
    operator === 'STARTS_WITH' ||
    operator === 'ENDS_WITH'
  );
}

function compare(
  dialect: SqlDialect,
  operand: string,
  operator: PositiveOperator,
  kind: ColumnDescriptor['kind'],
  value: KeyValue,
  params: SqlParams,
): string {
  switch (operator) {
    case 'EQUALS':
      return `${operand} = ${params.add(dialect.encodeOperand(kind, value))}`;
    case 'GT':
      return `${operand} > ${params.add(dialect.encodeOperand(kind, value))}`;
    case 'GTE':
      return `${operand} >= ${params.add(dialect.encodeOperand(kind, value))}`;
    case 'LT':
      return `${operand} < ${params.add(dialect.encodeOperand(kind, value))}`;
    case 'LTE':
      return `${operand} <= ${params.add(dialect.encodeOperand(kind, value))}`;
    case 'CONTAINS':
    case 'STARTS_WITH':
    case 'ENDS_WITH': {
      const needle = String(value);
      if (needle === '') return `${operand} IS NOT NULL`;
      if (operator === 'CONTAINS') return dialect.contains(operand, needle, params);
      if (operator === 'STARTS_WITH') return dialect.startsWith(operand, needle, params);
      return dialect.endsWith(operand, needle, params);
    }
    default: {
      const never: never = operator;
      throw new Error(`Unknown filter operator ${String(never)}`);
    }
  }
}

/**
 * The full sort: `orderBy`, then the key columns in the direction of the last term, each column
 * once (a later repetition of a column cannot change the order).
 */
export function resolveSortTerms(
  dialect: SqlDialect,
  table: TableDescriptor,
  orderBy: readonly OrderTerm[],
): SortTerm[] {
  const tableSql = dialect.quoteIdentifier(table.table);
  const keyDescending = orderBy.at(-1)?.descending ?? false;
  const all: OrderTerm[] = [
    ...orderBy,
    ...table.key.map((column) => ({ column, descending: keyDescending })),
  ];
  const seen = new Set<string>();
  const terms: SortTerm[] = [];
  for (const term of all) {
    if (seen.has(term.column)) continue;
    seen.add(term.column);
    const column = findColumn(table, term.column);
    if (column === undefined) {
      throw new Error(`Order by unknown column ${term.column} of table ${table.table}`);
    }
    if (column.kind === 'json') {
      throw new Error(`Cannot order by JSON column ${term.column} of table ${table.table}`);
    }
    terms.push({
      column,
      descending: term.descending,
      nullable: !column.required && !table.key.includes(column.name),
      operand: dialect.columnOperand(tableSql, column, 'compare'),
    });
  }
  return terms;
}

/** Maps `query.after` onto the resolved terms (see the module comment for the accepted lengths). */
function alignAfter(
  table: TableDescriptor,
  query: ListQuery,
  terms: readonly SortTerm[],
): (KeyValue | null)[] {
  const after = query.after ?? [];
  const full = [...query.orderBy.map((t) => t.column), ...table.key];
  if (after.length === terms.length && full.length !== terms.length) return [...after];
  if (after.length !== full.length) {
    throw new Error(
      `Keyset cursor has ${after.length} values; expected ${full.length} (order terms then key columns)`,
    );
  }
  const aligned: (KeyValue | null)[] = [];
  const seen = new Set<string>();
  full.forEach((column, index) => {
    if (seen.has(column)) return;
    seen.add(column);
    aligned.push(after[index] ?? null);
  });
  return aligned;
}

/**
 * Conditions selecting the rows strictly after `values` in the order of `terms`. Returns one or
 * two conjuncts: an index-friendly bound on the first term (when one exists) and the exact test.
 */
export function buildKeysetSql(
  dialect: SqlDialect,
  terms: readonly SortTerm[],
  values: readonly (KeyValue | null)[],
  params: SqlParams,
): string[] {
  const bound = (index: number): string => {
    const term = terms[index]!;
    return params.add(dialect.encodeOperand(term.column.kind, values[index]!));
  };
  const first = terms[0];
  if (first === undefined) return [];
  const direction = first.descending;
  const anyNull = values.some((v) => v === null || v === undefined);

  // Same direction, no NULL in the cursor, and (ascending, or no nullable column): a row-value
  // comparison is exact, because NULL columns sort before every value ascending and so are
  // rightly excluded by the NULL result of the comparison.
  if (
    dialect.rowValues &&
    terms.length > 1 &&
    !anyNull &&
    terms.every((t) => t.descending === direction) &&
    (!direction || terms.every((t) => !t.nullable))
  ) {
    const left = terms.map((t) => t.operand).join(', ');
    const right = terms.map((_, i) => bound(i)).join(', ');
    return [`(${left}) ${direction ? '<' : '>'} (${right})`];
  }

  // A redundant bound on the first term lets the database start an index range at the cursor.
  // Built first: with `?` placeholders, parameters are bound in the order they appear.
  const firstValue = values[0] ?? null;
  let prefix: string | undefined;
  if (terms.length > 1) {
    if (firstValue === null) {
      if (first.descending) prefix = `${first.operand} IS NULL`;
    } else if (!first.descending) {
      prefix = `${first.operand} >= ${bound(0)}`;
    } else if (!first.nullable) {
      prefix = `${first.operand} <= ${bound(0)}`;
    }
  }

  // (t0 after) OR (t0 = v0 AND t1 after) OR …; every occurrence binds its own parameter.
  const equal = (j: number): string =>
    (values[j] ?? null) === null
      ? `${terms[j]!.operand} IS NULL`
      : `${terms[j]!.operand} = ${bound(j)}`;
  const disjuncts: string[] = [];
  for (let i = 0; i < terms.length; i++) {
    if (!canBeAfter(terms[i]!, values[i] ?? null)) continue;
    const parts: string[] = [];
    for (let j = 0; j < i; j++) parts.push(equal(j));
    parts.push(strictlyAfter(terms[i]!, values[i] ?? null, () => bound(i)));
    disjuncts.push(parts.join(' AND '));
  }
  const exact =
    disjuncts.length === 0 ? '(1 = 0)' : `(${disjuncts.map((d) => `(${d})`).join(' OR ')})`;
  return prefix === undefined ? [exact] : [prefix, exact];
}

/** False when no row can follow `value` on this term: NULL is the last value descending. */
function canBeAfter(term: SortTerm, value: KeyValue | null): boolean {
  return !(value === null && term.descending);
}

/** The condition "row is strictly after `value` on this term" (see `canBeAfter`). */
function strictlyAfter(term: SortTerm, value: KeyValue | null, bind: () => string): string {
  // NULLs come first ascending: every present value follows them.
  if (value === null) return `${term.operand} IS NOT NULL`;
  if (!term.descending) return `${term.operand} > ${bind()}`;
  // NULLs come last descending: they follow every present value.
  return term.nullable
    ? `(${term.operand} < ${bind()} OR ${term.operand} IS NULL)`
    : `${term.operand} < ${bind()}`;
}

function findColumn(table: TableDescriptor, name: string): ColumnDescriptor | undefined {
  return table.columns.find((c) => c.name === name);
}

function checkCount(what: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`Invalid ${what} ${value}: expected a non-negative integer`);
  }
  return value;
}
