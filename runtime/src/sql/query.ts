/**
 * The list and count SQL both drivers run, built once from a `ListQuery`: filters, ordering with
 * the key tie-break, offset or keyset paging; the dialect fills the column and value syntax.
 */
import type {
  ColumnDescriptor,
  CountQuery,
  FilterCondition,
  FilterExpression,
  FilterGroup,
  KeyValue,
  ListQuery,
  OrderTerm,
  TableDescriptor,
} from '../driver.js';
import { DELETED_AT_COLUMN, deletedCondition } from '../soft-delete.js';
import { SqlParams, type OperandMode, type SearchSql, type SqlDialect } from './dialect.js';

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

/** The name of the count column of `buildListSql`'s counted form. */
export const LIST_COUNT_COLUMN = '_eg_count';

/**
 * Builds the SELECT for a list query; `select` is the select list (dialect-specific decoding).
 * With `withCount`, one more column follows the select list: the number of records matching the
 * query's filters (an uncorrelated scalar subquery, so it is read in the statement's snapshot),
 * named `LIST_COUNT_COLUMN`; both FROMs are then schema-qualified by the dialect.
 */
export function buildListSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: ListQuery,
  select: string,
  withCount = false,
): BuiltSql {
  const params = new SqlParams(dialect);
  const tableSql = dialect.quoteIdentifier(table.table);
  // Built first: with `?` placeholders, parameters are bound in the order they appear.
  const countColumn = withCount
    ? `, (${countSql(dialect, table, query, params)}) AS ${dialect.quoteIdentifier(LIST_COUNT_COLUMN)}`
    : '';
  // The counted form names its table as the subquery does (schema-qualified where the driver
  // uses a schema); the plain form leaves that to the driver.
  let from = withCount ? (dialect.qualifiedTable?.(table.table) ?? tableSql) : tableSql;
  const conditions: string[] = [];
  const search = searchSql(dialect, table, query, params);
  if (search?.join !== undefined) from += ` ${search.join}`;
  if (search?.condition !== undefined) conditions.push(search.condition);
  const filter = queryFilterSql(dialect, table, query, params);
  if (filter !== undefined) conditions.push(filter);
  const terms = resolveSortTerms(dialect, table, query.orderBy);
  if (query.after !== undefined) {
    conditions.push(...buildKeysetSql(dialect, terms, alignAfter(table, query, terms), params));
  }
  let sql = `SELECT ${select}${countColumn} FROM ${from}`;
  if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
  const order = terms.map((t) => dialect.orderTerm(t.operand, t.descending));
  // A search without orderBy: the best matches first, then the key columns.
  if (search !== undefined && query.orderBy.length === 0) order.unshift(search.rank());
  sql += ` ORDER BY ${order.join(', ')}`;
  const limit =
    query.limit === undefined
      ? undefined
      : dialect.literalLimit === true
        ? String(checkCount('limit', query.limit))
        : params.add(checkCount('limit', query.limit));
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
  const tableSql = dialect.quoteIdentifier(table.table);
  const search = searchSql(dialect, table, query, params);
  const filter = queryFilterSql(dialect, table, query, params);
  const conditions = [search?.condition, filter].filter((part) => part !== undefined);
  let sql = `SELECT count(*) FROM ${tableSql}${search?.join === undefined ? '' : ` ${search.join}`}`;
  if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
  return { sql, params: params.values };
}

/** The dialect's full-text search of the query's words (`q=`), or `undefined` without. */
function searchSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: CountQuery,
  params: SqlParams,
): SearchSql | undefined {
  if (query.search === undefined) return undefined;
  if (table.search === undefined) throw new Error(`Table ${table.table} has no search`);
  return dialect.search(table, dialect.quoteIdentifier(table.table), query.search, params);
}

/** `SELECT count(*)` of the query's filters as a subquery (its table schema-qualified). */
function countSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: CountQuery,
  params: SqlParams,
): string {
  let from = dialect.qualifiedTable?.(table.table) ?? dialect.quoteIdentifier(table.table);
  const search = searchSql(dialect, table, query, params);
  if (search?.join !== undefined) from += ` ${search.join}`;
  const filter = queryFilterSql(dialect, table, query, params);
  const conditions = [search?.condition, filter].filter((part) => part !== undefined);
  return `SELECT count(*) FROM ${from}${conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`}`;
}

/**
 * The WHERE condition of a query: the live rows of a `softDelete` table unless it asks for
 * deleted ones (SPEC §13), its filter groups and its expression; `undefined` without any.
 */
function queryFilterSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: CountQuery,
  params: SqlParams,
): string | undefined {
  const parts: string[] = [];
  const live = liveCondition(dialect, table, query);
  if (live !== undefined) parts.push(live);
  const groups = buildFilterSql(dialect, table, query.filters, params);
  if (groups !== undefined) parts.push(groups);
  if (query.expression !== undefined)
    parts.push(buildExpressionSql(dialect, table, query.expression, params));
  return parts.length === 0 ? undefined : parts.join(' AND ');
}

/**
 * A filter expression as SQL. Its logic is two-valued (see `FilterExpression`): SQL's NULL of a
 * comparison with an absent value counts as false, so NOT is written `IS NOT TRUE` (true for
 * NULL); AND and OR already treat NULL as false would at the top of a WHERE.
 */
export function buildExpressionSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  expression: FilterExpression,
  params: SqlParams,
): string {
  if ('condition' in expression)
    return `(${buildConditionSql(dialect, table, expression.condition, params)})`;
  if ('not' in expression)
    return `((${buildExpressionSql(dialect, table, expression.not, params)}) IS NOT TRUE)`;
  const operands = 'and' in expression ? expression.and : expression.or;
  if (operands.length === 0) return 'and' in expression ? '(1 = 1)' : '(1 = 0)';
  const parts = operands.map((operand) => buildExpressionSql(dialect, table, operand, params));
  return `(${parts.join('and' in expression ? ' AND ' : ' OR ')})`;
}

/** Which rows of a `softDelete` table the query sees (SPEC §13): live ones unless it asks. */
function liveCondition(
  dialect: SqlDialect,
  table: TableDescriptor,
  query: CountQuery,
): string | undefined {
  const column = `${dialect.quoteIdentifier(table.table)}.${dialect.quoteIdentifier(DELETED_AT_COLUMN)}`;
  return deletedCondition(table, column, query.deleted, dialect.live);
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
      const list = equalsListSql(dialect, table, group.anyOf, params);
      if (list !== undefined) return list;
      const parts = group.anyOf.map((c) => buildConditionSql(dialect, table, c, params));
      return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
    })
    .join(' AND ');
}

const NEGATED = new Set(['NOT_EQUALS', 'NOT_CONTAINS']);

/**
 * `column IN (…)` for a group of EQUALS conditions on one plain column (a repeated filter, or the
 * keys an expansion looks up): the same rows as the ORs of `column = ?`, one parameter list the
 * database matches at once. `undefined` for any other group.
 */
function equalsListSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  anyOf: readonly FilterCondition[],
  params: SqlParams,
): string | undefined {
  if (anyOf.length < 2) return undefined;
  const first = anyOf[0]!;
  if (first.path.length !== 1) return undefined;
  const name = first.path[0]!;
  for (const condition of anyOf) {
    if (
      condition.operator !== 'EQUALS' ||
      condition.through !== undefined ||
      condition.arrayMembership === true ||
      condition.path.length !== 1 ||
      condition.path[0] !== name
    )
      return undefined;
  }
  const column = findColumn(table, name);
  if (column === undefined || column.kind === 'json') return undefined;
  const operand = dialect.columnOperand(dialect.quoteIdentifier(table.table), column, 'compare');
  const values = anyOf.map((c) => params.add(dialect.encodeOperand(column.kind, c.value)));
  return `${operand} IN (${values.join(', ')})`;
}

/** One filter condition as a boolean SQL expression. */
export function buildConditionSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  condition: FilterCondition,
  params: SqlParams,
): string {
  if (condition.through !== undefined) return throughSql(dialect, table, condition, params);
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
  if (operator === 'IS_NULL' || operator === 'IS_NOT_NULL') {
    // The stored text of the value: a JSON null inside an OBJECT reads as absent too.
    const operand =
      column.kind === 'json' && path.length > 0
        ? dialect.jsonOperand(columnSql, path, 'text', 'text', params)
        : columnSql;
    return `${operand} ${operator === 'IS_NULL' ? 'IS NULL' : 'IS NOT NULL'}`;
  }
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

/**
 * A condition on the record a reference names: `EXISTS` of that record, joined by its key to the
 * reference's column, meeting the condition (served by the target's primary key and, for the
 * condition, its own index where the field has one).
 */
function throughSql(
  dialect: SqlDialect,
  table: TableDescriptor,
  condition: FilterCondition,
  params: SqlParams,
): string {
  const { through, ...inner } = condition;
  const target = through!.target;
  if (target.key.length !== 1) {
    throw new Error(`Filter through ${through!.field}: ${target.table} has a composite key`);
  }
  const alias = '_eg_ref';
  const aliased: TableDescriptor = { ...target, table: alias };
  const q = (name: string): string => dialect.quoteIdentifier(name);
  const from = dialect.qualifiedTable?.(target.table) ?? q(target.table);
  const join = `${q(alias)}.${q(target.key[0]!)} = ${q(table.table)}.${q(through!.field)}`;
  // Absent (no reference, or no such record) matches only the negated operators, as an absent
  // field does: `category.name[!]=tools` is NOT EXISTS a category named tools.
  const negated = NEGATED.has(inner.operator);
  const positive: FilterCondition = negated
    ? { ...inner, operator: inner.operator === 'NOT_EQUALS' ? 'EQUALS' : 'CONTAINS' }
    : inner;
  const test = buildConditionSql(dialect, aliased, positive, params);
  // A soft-deleted target is absent (SPEC §13).
  const live = deletedCondition(
    target,
    `${q(alias)}.${q(DELETED_AT_COLUMN)}`,
    undefined,
    dialect.live,
  );
  const where = live === undefined ? `${join} AND ${test}` : `${join} AND ${live} AND ${test}`;
  return `${negated ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${from} AS ${q(alias)} WHERE ${where})`;
}

type PositiveOperator = Exclude<
  FilterCondition['operator'],
  'NOT_EQUALS' | 'NOT_CONTAINS' | 'IS_NULL' | 'IS_NOT_NULL'
>;

function isTextOperator(operator: FilterCondition['operator']): boolean {
  return (
    operator === 'CONTAINS' ||
    operator === 'NOT_CONTAINS' ||
    operator === 'STARTS_WITH' ||
    operator === 'ENDS_WITH' ||
    operator === 'IEQUALS' ||
    operator === 'ICONTAINS' ||
    operator === 'ISTARTS_WITH' ||
    operator === 'IENDS_WITH'
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
    // Case-insensitive: the folded text against the folded needle.
    case 'IEQUALS':
      return `${dialect.fold(operand)} = ${dialect.fold(params.add(String(value)))}`;
    case 'ICONTAINS':
    case 'ISTARTS_WITH':
    case 'IENDS_WITH': {
      const needle = String(value);
      if (needle === '') return `${operand} IS NOT NULL`;
      const folded = dialect.fold(operand);
      if (operator === 'ICONTAINS') return dialect.contains(folded, needle, params, true);
      if (operator === 'ISTARTS_WITH') return dialect.startsWith(folded, needle, params, true);
      return dialect.endsWith(folded, needle, params, true);
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
