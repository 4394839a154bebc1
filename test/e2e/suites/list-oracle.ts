/**
 * An in-memory evaluator of list queries, written from the documented semantics (docs/api.md,
 * "Listing: filters, sorting, paging"), that the list fuzzer (`fuzz.ts`) compares the service's
 * answers with. It knows only the fields of the shop fixture's PRODUCT that the fuzzer filters and
 * sorts by, and only well-formed queries: every value converts to its field's type.
 *
 * - Values are converted by the field type and compared per type: DECIMAL exactly (as decimals,
 *   not binary doubles), INTEGER and DOUBLE numerically, DATE_TIME in UTC, ENUM
 *   case-insensitively, text by Unicode code point.
 * - CONTAINS, STARTS_WITH, ENDS_WITH take the value literally and case-sensitively.
 * - An absent field matches only NOT_EQUALS and NOT_CONTAINS; ARRAY CONTAINS is membership.
 * - The same field with the same operator is one group: positive operators OR their values,
 *   NOT_EQUALS and NOT_CONTAINS exclude every value; groups combine with AND.
 * - Sorting: absent values first ascending and last descending; the key breaks ties in the
 *   direction of the last term; without orderBy, the key order.
 */

/** How a field's values are compared. */
export type Kind =
  | 'text'
  | 'decimal'
  | 'integer'
  | 'double'
  | 'bool'
  | 'date'
  | 'datetime'
  | 'enum'
  | 'select'
  | 'textArray'
  | 'integerArray';

export interface FieldSpec {
  /** The parameter name: a top-level field or a dotted path into an OBJECT. */
  readonly path: string;
  readonly kind: Kind;
  /** The values of an ENUM, in the schema's spelling. */
  readonly enums?: readonly string[];
}

export type Operator =
  | 'EQUALS'
  | 'NOT_EQUALS'
  | 'GT'
  | 'GTE'
  | 'LT'
  | 'LTE'
  | 'CONTAINS'
  | 'NOT_CONTAINS'
  | 'STARTS_WITH'
  | 'ENDS_WITH';

/** One filter parameter: `path[spelling]=value`, whose spelling means `operator`. */
export interface Filter {
  readonly field: FieldSpec;
  readonly operator: Operator;
  /** How the operator is written in the query string: '' (plain `field=value`), '[gte]', '[!]', … */
  readonly spelling: string;
  readonly value: string;
}

export interface SortTerm {
  readonly field: FieldSpec;
  readonly descending: boolean;
}

export interface ListQuery {
  readonly filters: readonly Filter[];
  readonly orderBy: readonly SortTerm[];
  readonly start?: number;
  readonly limit?: number;
}

/** A record as the service answers it (canonical values). */
export type StoredRecord = Readonly<Record<string, unknown>>;

/** The query string of `query` (filters in order, then orderBy, start, limit). */
export function queryString(query: ListQuery): URLSearchParams {
  const params = new URLSearchParams();
  for (const filter of query.filters)
    params.append(`${filter.field.path}${filter.spelling}`, filter.value);
  if (query.orderBy.length > 0) params.set('orderBy', orderByParam(query.orderBy));
  if (query.start !== undefined) params.set('start', String(query.start));
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  return params;
}

export function orderByParam(orderBy: readonly SortTerm[]): string {
  return orderBy.map((term) => `${term.descending ? '-' : ''}${term.field.path}`).join(',');
}

/** The value at a dotted path of a record, or undefined when any step is absent. */
function valueAt(record: StoredRecord, path: string): unknown {
  let value: unknown = record;
  for (const step of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value === null ? undefined : value;
}

/** Text compared by Unicode code point (UTF-8 byte order is code point order). */
function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Exact comparison of two decimal numerals (`-12.50`, `3`, `0.001`). */
function compareDecimal(a: string, b: string): number {
  const parse = (text: string): { digits: bigint; scale: number } => {
    const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
    if (match === null) throw new Error(`not a decimal: ${text}`);
    const fraction = match[3] ?? '';
    const digits = BigInt(`${match[2] === '' ? '0' : match[2]}${fraction}`);
    return { digits: match[1] === '-' ? -digits : digits, scale: fraction.length };
  };
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const left = x.digits * 10n ** BigInt(scale - x.scale);
  const right = y.digits * 10n ** BigInt(scale - y.scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The filter value converted as the field's type converts it (the fuzzer sends valid values). */
function convert(kind: Kind, value: string, enums: readonly string[] = []): unknown {
  switch (kind) {
    case 'integer':
    case 'integerArray':
    case 'double':
      return Number(value);
    case 'bool':
      return value === 'true';
    case 'datetime':
      return new Date(value).toISOString();
    case 'enum': {
      const spelled = enums.find((name) => name.toLowerCase() === value.toLowerCase());
      if (spelled === undefined) throw new Error(`not a value of the enum: ${value}`);
      return spelled;
    }
    default:
      return value;
  }
}

/** Compares two present values of one kind (scalars; for arrays, their elements). */
function compare(kind: Kind, a: unknown, b: unknown): number {
  switch (kind) {
    case 'decimal':
      return compareDecimal(String(a), String(b));
    case 'integer':
    case 'integerArray':
    case 'double':
      return Math.sign((a as number) - (b as number));
    case 'bool':
      return Number(a) - Number(b);
    default:
      return compareText(String(a), String(b));
  }
}

const NEGATIVE: ReadonlySet<Operator> = new Set(['NOT_EQUALS', 'NOT_CONTAINS']);

/** Whether `record` satisfies one filter value. */
function matches(record: StoredRecord, filter: Filter): boolean {
  const { kind, path, enums } = filter.field;
  const stored = valueAt(record, path);
  if (stored === undefined) return NEGATIVE.has(filter.operator);
  const value = convert(kind, filter.value, enums);
  if (kind === 'textArray' || kind === 'integerArray') {
    const member = (stored as unknown[]).some((element) => compare(kind, element, value) === 0);
    if (filter.operator === 'CONTAINS') return member;
    if (filter.operator === 'NOT_CONTAINS') return !member;
    throw new Error(`operator ${filter.operator} on an array`);
  }
  const text = String(stored);
  const wanted = String(value);
  switch (filter.operator) {
    case 'EQUALS':
      return compare(kind, stored, value) === 0;
    case 'NOT_EQUALS':
      return compare(kind, stored, value) !== 0;
    case 'GT':
      return compare(kind, stored, value) > 0;
    case 'GTE':
      return compare(kind, stored, value) >= 0;
    case 'LT':
      return compare(kind, stored, value) < 0;
    case 'LTE':
      return compare(kind, stored, value) <= 0;
    case 'CONTAINS':
      return text.includes(wanted);
    case 'NOT_CONTAINS':
      return !text.includes(wanted);
    case 'STARTS_WITH':
      return text.startsWith(wanted);
    case 'ENDS_WITH':
      return text.endsWith(wanted);
  }
}

/** Sorts a copy of `records` by `orderBy`, the key field `key` breaking ties. */
function sorted(
  records: readonly StoredRecord[],
  orderBy: readonly SortTerm[],
  key: FieldSpec,
): StoredRecord[] {
  const last = orderBy.at(-1);
  const terms: SortTerm[] = [...orderBy, { field: key, descending: last?.descending ?? false }];
  return [...records].sort((a, b) => {
    for (const { field, descending } of terms) {
      const x = valueAt(a, field.path);
      const y = valueAt(b, field.path);
      // Absent first ascending, last descending: absent is the smallest value.
      const order =
        x === undefined || y === undefined
          ? Number(y === undefined) - Number(x === undefined)
          : compare(field.kind, x, y);
      if (order !== 0) return descending ? -order : order;
    }
    return 0;
  });
}

/** What the service should answer to `query` over `records`: every match in order, and the page. */
export function evaluate(
  records: readonly StoredRecord[],
  query: ListQuery,
  key: FieldSpec,
): { all: StoredRecord[]; page: StoredRecord[] } {
  const groups = new Map<string, Filter[]>();
  for (const filter of query.filters) {
    const name = `${filter.field.path} ${filter.operator}`;
    groups.set(name, [...(groups.get(name) ?? []), filter]);
  }
  const matching = records.filter((record) =>
    [...groups.values()].every((group) =>
      NEGATIVE.has(group[0]!.operator)
        ? group.every((filter) => matches(record, filter))
        : group.some((filter) => matches(record, filter)),
    ),
  );
  const all = sorted(matching, query.orderBy, key);
  const start = query.start ?? 0;
  const page = all.slice(start, query.limit === undefined ? undefined : start + query.limit);
  return { all, page };
}
