/**
 * GET /data/{entity} (list) and GET /entity/{entity}/recordCounts (count): the query string is
 * validated against the schema here and handed to the driver as a typed `ListQuery`; the driver
 * never sees a name that is not a schema field nor a value that was not converted (SPEC §4.4).
 *
 * Decisions where the spec leaves room:
 *
 * Parameters
 * - `orderBy`, `start`, `limit` and `cursor` are reserved; every other parameter is a filter.
 *   Parameter names, field names and dotted paths are case-sensitive (`Limit=5` is a filter on an
 *   unknown field → 400).
 * - A field named like a reserved parameter (the schema allows a field `limit`) is shadowed in the
 *   short form: `limit=5` is the page size. It is filtered with an explicit operator instead,
 *   `limit[EQUALS]=5`, and sorted by as usual, `orderBy=limit`.
 * - `orderBy`, `start`, `limit` and `cursor` may each be given once; a repetition is a 400.
 *
 * Filters
 * - `field=v` means `field[EQUALS]=v`. Operators are matched case-insensitively; `!` and `NOT`
 *   are aliases of `NOT_EQUALS`. What each type accepts (anything else → 400 naming the
 *   parameter and the operators that do apply):
 *     STRING, ENUM, SELECT, text ENTITY_REF   EQUALS NOT_EQUALS GT GTE LT LTE CONTAINS
 *                                             NOT_CONTAINS STARTS_WITH ENDS_WITH
 *     INTEGER, DOUBLE, DECIMAL, DATE,
 *     DATE_TIME, ENTITY_REF to an INTEGER key EQUALS NOT_EQUALS GT GTE LT LTE
 *     BOOL                                    EQUALS NOT_EQUALS
 *     ARRAY of any type above                 CONTAINS NOT_CONTAINS (membership)
 *   OBJECT fields are filtered through dotted paths to their scalar (or array) fields, nested
 *   objects included (`address.geo.country=IT`). OBJECT as a whole, DICTIONARY, ANY, B64_IMAGE,
 *   GEOHASH_LOCATION, arrays of objects or arrays cannot be filtered (400).
 * - Values are converted like the field's values in a request body, so they compare with the
 *   stored canonical form: numbers numerically, DECIMAL exactly (`10.5` > `9.75`), DATE_TIME with
 *   an offset converted to UTC, ENUM matched case-insensitively to the schema spelling, BOOL only
 *   `true`/`false`, SELECT exactly. A value that does not convert → 400 naming the parameter.
 *   CONTAINS, NOT_CONTAINS, STARTS_WITH and ENDS_WITH take the text as written, literally (no
 *   wildcard: `%`, `_`, `\` and quotes are plain characters) and case-sensitively; the empty text
 *   matches every present value. GT & co. on text types compare by Unicode code point; on ENUM
 *   that is the text of the value, not its position in `enums`.
 * - Conditions on the same field path with the same operator (after aliases and case, so
 *   `status=A&status[equals]=B` counts as repeated) form one group: positive operators OR their
 *   values (`status=A&status=B`: A or B). For NOT_EQUALS and NOT_CONTAINS the values are OR-ed
 *   first and the negation applies to the whole (`status[NOT]=A&status[NOT]=B`: neither A nor B);
 *   a literal "not A or not B" would match almost everything. Groups are joined by AND, so
 *   `price[GTE]=10&price[LT]=20` is a range.
 * - An absent (optional, unset) field matches NOT_EQUALS and NOT_CONTAINS and no other operator
 *   (the driver's rule): `status[NOT]=DRAFT` includes records without a status. An absent or empty
 *   array matches `tags[NOT_CONTAINS]=x`.
 * - A value containing U+0000 is a 400: PostgreSQL text and JSON cannot hold that character, so
 *   the answer would differ between drivers.
 * - At most {@link MAX_FILTER_VALUES} filter values per request (400 beyond): each becomes part of
 *   one SQL expression, and databases bound its size.
 *
 * Sorting
 * - `orderBy=a,-b,+c`: ascending by default, `-` descending, `+` ascending (in a URL `+` means a
 *   space, which is trimmed, so `orderBy=+c` also works). Only top-level fields of the filterable
 *   scalar types can be sorted, each once. The key columns follow as a tie-break (in the
 *   direction of the last term), so the order is total and pages are stable. Absent values sort
 *   first ascending and last descending.
 * - Without `orderBy`, the REST config's `defaultOrder` applies, then the key order.
 *
 * Paging and `meta`
 * - `start` is an integer ≥ 0 and `limit` an integer ≥ 1, written in decimal digits (at most 15).
 *   There is no fixed maximum for `limit`: with `getListStrategy: ALL` a client may list every
 *   record anyway; the REST config's `maxWindow` bounds `start + limit` (→ 400 with a hint to
 *   use cursor paging).
 * - A limit applies when the request gives one, when a cursor carries one, or from the REST
 *   config's `defaultLimit` (`getListStrategy: START_LIMIT`).
 * - `meta` of a list: `start` when the request pages by offset (it gave `start`, or a limit
 *   applies without a cursor); `limit` when a limit applies; `next`, an opaque cursor for the
 *   following page, when a limit applies and at least one more record matches. Without a limit
 *   and without `start`, `meta` is `{}`.
 *
 * Cursors
 * - `cursor=<meta.next>` continues after the last record of the page that issued it, with a
 *   keyset condition instead of OFFSET (cost independent of depth). It must come with the same
 *   filters and order (any parameter order, values in any accepted spelling); otherwise → 400. It
 *   cannot be combined with `start` (400). `limit` may change between pages; when the request has
 *   none, the cursor's own limit applies.
 * - A cursor holds the entity name and a hash of filters and order, the page size and the sort
 *   values of the last record (order terms, then key fields), as base64url JSON signed with an
 *   HMAC under the service's cursor key (`CURSOR_SECRET`, or a key generated and kept in the
 *   storage), so it survives restarts and works across instances, and a cursor the service did
 *   not issue is a 400. Its contents are still checked: the page size is capped, the values are
 *   converted by the field types (400 otherwise).
 * - Guarantee: walking every page, each record that exists for the whole walk and whose sort
 *   fields do not change is returned exactly once, whatever is inserted or deleted meanwhile.
 *   Records inserted during the walk appear if they sort after the current position.
 *
 * Counts
 * - recordCounts takes the same query string as the list and answers the same 400s for it (so a
 *   client bug shows up on both), but counts every record matching the filters: `orderBy`,
 *   `start`, `limit` and `cursor` are checked and then ignored, as are the REST config's paging
 *   rules (`maxWindow` does not require a limit on a count).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import {
  enumConverter,
  selectConverter,
  toBoolean,
  toDate,
  toDateTime,
  toDecimal,
  toDouble,
  toInteger,
  toText,
} from './convert.js';
import { ownerFilter, ownerScopeOf } from './auth/owner.js';
import type { Converter, EntityDefinition, FieldInfo } from './definition.js';
import type {
  ColumnKind,
  FilterCondition,
  FilterGroup,
  FilterOperator,
  KeyValue,
  ListQuery,
  OrderTerm,
  StoredRecord,
} from './driver.js';
import { successBody } from './envelope.js';
import { BadRequestError, MethodForbiddenError, quoteInput } from './errors.js';
import type { Issue } from './issues.js';
import type { DataContext } from './data-context.js';
import type { RestConfig } from './rest-config.js';
import { filterOperatorsOf, MEMBERSHIP_OPERATORS } from './schema.js';

/** Query parameters with a meaning of their own; every other parameter is a filter. */
const RESERVED: ReadonlySet<string> = new Set(['orderBy', 'start', 'limit', 'cursor']);

/** Most filter values (conditions) one request may carry. */
export const MAX_FILTER_VALUES = 200;

/** Operators and their aliases as written in `field[OP]=value`, matched case-insensitively. */
const OPERATORS: Readonly<Record<string, FilterOperator>> = {
  EQUALS: 'EQUALS',
  NOT_EQUALS: 'NOT_EQUALS',
  '!': 'NOT_EQUALS',
  NOT: 'NOT_EQUALS',
  CONTAINS: 'CONTAINS',
  NOT_CONTAINS: 'NOT_CONTAINS',
  STARTS_WITH: 'STARTS_WITH',
  ENDS_WITH: 'ENDS_WITH',
  GT: 'GT',
  GTE: 'GTE',
  LT: 'LT',
  LTE: 'LTE',
};

const NEGATED: readonly FilterOperator[] = ['NOT_EQUALS', 'NOT_CONTAINS'];
const TEXT_MATCH: readonly FilterOperator[] = [
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
];

const KIND_BY_TYPE: Readonly<Record<string, ColumnKind>> = {
  STRING: 'text',
  ENUM: 'text',
  SELECT: 'text',
  ENTITY_REF: 'text',
  INTEGER: 'integer',
  DOUBLE: 'double',
  DECIMAL: 'decimal',
  DATE: 'date',
  DATE_TIME: 'datetime',
  BOOL: 'boolean',
};

/** The largest page a list answers by default (`MAX_PAGE_SIZE`). */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

/** The REST configuration of an entity when none was given: everything allowed, lists unpaged. */
export const DEFAULT_REST_CONFIG: RestConfig = {
  allowedMethods: ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'],
  getListStrategy: 'ALL',
};

/** GET /data/{entity}: filtered, sorted, paged (offset or cursor) list of records. */
export async function listRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  config: RestConfig = DEFAULT_REST_CONFIG,
): Promise<void> {
  if (!config.allowedMethods.includes('GET_LIST'))
    throw new MethodForbiddenError(definition.name, 'GET_LIST');
  const cursorKey = await data.cursorKey?.();
  const request = parseListRequest(
    definition,
    config,
    ctx.querystring,
    data.maxPageSize,
    cursorKey,
  );
  const owner = ownerFilter(definition, ownerScopeOf(ctx));
  const pageSize = request.limit ?? request.cap;
  const query: ListQuery = {
    filters:
      owner === undefined || owner === 'nothing' ? request.filters : [...request.filters, owner],
    orderBy: request.orderBy,
    // One row more than asked tells whether another page follows.
    limit: pageSize + 1,
    ...(request.after === undefined ? { offset: request.start } : { after: request.after }),
  };
  // A caller that can own no record (owner rule) gets an empty list without a query.
  const driver = data.driver;
  if (owner !== 'nothing' && driver.listTexts !== undefined) {
    // The records arrive as JSON text (a SQLite reader wrote them): the body is spliced together,
    // byte for byte what the records' envelope would be; only the cursor's record is built.
    const { texts, kept } = await driver.listTexts(definition.table, query, pageSize - 1);
    const hasMore = texts.length > pageSize;
    const meta = pageMeta(definition, request, pageSize, hasMore, kept, cursorKey);
    const records = hasMore ? texts.slice(0, pageSize) : texts;
    ctx.type = 'json';
    ctx.body = `{"status":"success","data":[${records.join(',')}],"meta":${JSON.stringify(meta)}}`;
    return;
  }
  const rows = owner === 'nothing' ? [] : await driver.list(definition.table, query);
  const hasMore = rows.length > pageSize;
  const page = hasMore ? rows.slice(0, pageSize) : rows;
  const meta = pageMeta(definition, request, pageSize, hasMore, page[page.length - 1], cursorKey);
  ctx.body = successBody(
    page.map((row) => row.record),
    meta,
  );
}

/** The `meta` of a page: `start`, `limit` and the `next` cursor after `last` when more follow. */
function pageMeta(
  definition: EntityDefinition<object>,
  request: ListRequest,
  pageSize: number,
  hasMore: boolean,
  last: StoredRecord | undefined,
  cursorKey: string | undefined,
): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (request.after === undefined && (request.limit !== undefined || request.startGiven)) {
    meta['start'] = request.start;
  }
  // A list without a limit that fits one page answers as before; a longer one stops at the cap.
  if (request.limit !== undefined || hasMore) {
    meta['limit'] = pageSize;
    if (hasMore && last !== undefined)
      meta['next'] = encodeCursor(definition, request, last, cursorKey);
  }
  return meta;
}

/** GET /entity/{entity}/recordCounts: `{count}` of the records matching the filters. */
export async function countRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  config: RestConfig = DEFAULT_REST_CONFIG,
): Promise<void> {
  if (!config.allowedMethods.includes('GET_LIST'))
    throw new MethodForbiddenError(definition.name, 'GET_LIST');
  // The whole query string is checked as for the list (same 400s); order and paging are ignored.
  const { filters } = parseQuery(definition, config, ctx.querystring, await data.cursorKey?.());
  const owner = ownerFilter(definition, ownerScopeOf(ctx));
  const count =
    owner === 'nothing'
      ? 0
      : await data.driver.count(definition.table, {
          filters: owner === undefined ? filters : [...filters, owner],
        });
  ctx.body = successBody({ count });
}

/** A list request after validation. */
export interface ListRequest {
  readonly filters: readonly FilterGroup[];
  readonly orderBy: readonly OrderTerm[];
  /** Rows to skip (0 with a cursor). */
  readonly start: number;
  /** True when the request gave `start` explicitly. */
  readonly startGiven: boolean;
  /** Page size, when a limit applies (request, cursor or REST config). */
  readonly limit: number | undefined;
  /** The largest page the service answers; a list without a limit stops there, with meta.next. */
  readonly cap: number;
  /** Keyset position from the cursor: sort values of the last record seen. */
  readonly after: readonly (KeyValue | null)[] | undefined;
  /** Identifies entity, filters and order, so a cursor is only used with the query that made it. */
  readonly signature: string;
}

/** Validates the query string of a list request against the schema and the REST config. */
export function parseListRequest(
  definition: EntityDefinition<object>,
  config: RestConfig,
  querystring: string,
  maxPageSize: number = DEFAULT_MAX_PAGE_SIZE,
  cursorKey?: string,
): ListRequest {
  const { filters, orderBy, signature, start, requestedLimit, cursor } = parseQuery(
    definition,
    config,
    querystring,
    cursorKey,
  );
  // No list is unbounded: the service-wide page size cap, lowered by the REST config's maxWindow.
  const cap = Math.min(maxPageSize, config.maxWindow ?? maxPageSize);
  if (requestedLimit !== undefined && requestedLimit > cap) {
    throw new BadRequestError(
      `Parameter limit is ${requestedLimit}, more than the maximum page size of ${cap} for Entity ${definition.name}; page with cursor (meta.next)`,
    );
  }
  const configured =
    requestedLimit ??
    (cursor === undefined ? undefined : Math.min(cursor.limit, cap)) ??
    (config.getListStrategy === 'START_LIMIT' ? config.defaultLimit : undefined);
  const limit = configured === undefined ? undefined : Math.min(configured, cap);
  if (config.maxWindow !== undefined) {
    if (limit === undefined) {
      throw new BadRequestError(
        `Parameter limit is required for Entity ${definition.name} (maximum window ${config.maxWindow})`,
      );
    }
    if ((start ?? 0) + limit > config.maxWindow) {
      throw new BadRequestError(
        `Parameters start + limit add up to ${(start ?? 0) + limit}, more than the maximum window of ${config.maxWindow} for Entity ${definition.name}; page deeper with cursor (meta.next)`,
      );
    }
  }
  return {
    filters,
    orderBy,
    start: start ?? 0,
    startGiven: start !== undefined,
    limit,
    cap,
    after: cursor?.after,
    signature,
  };
}

/** Every parameter of a list or count request, checked, before the REST config's paging rules. */
interface ParsedQuery {
  readonly filters: FilterGroup[];
  readonly orderBy: OrderTerm[];
  readonly signature: string;
  readonly start: number | undefined;
  readonly requestedLimit: number | undefined;
  readonly cursor: Cursor | undefined;
}

function parseQuery(
  definition: EntityDefinition<object>,
  config: RestConfig,
  querystring: string,
  cursorKey: string | undefined,
): ParsedQuery {
  const params = new URLSearchParams(querystring);
  const filters = parseFilters(definition, params);
  const orderBy = parseOrderBy(definition, config, params);
  const signature = querySignature(definition, filters, orderBy);
  const start = parseCount(params, 'start', 0);
  const requestedLimit = parseCount(params, 'limit', 1);
  const cursorText = single(params, 'cursor');
  if (cursorText !== undefined && start !== undefined) {
    throw new BadRequestError(
      'Parameters cursor and start cannot be used together: a cursor already says where the page starts',
    );
  }
  const cursor =
    cursorText === undefined
      ? undefined
      : decodeCursor(definition, orderBy, signature, cursorText, cursorKey);
  return { filters, orderBy, signature, start, requestedLimit, cursor };
}

// Filters ------------------------------------------------------------------------------------

/** A parsed filter parameter, before grouping. */
interface ParsedCondition {
  readonly condition: FilterCondition;
  /** Conditions with equal group keys are repeated parameters: one OR group. */
  readonly groupKey: string;
}

function parseFilters(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
): FilterGroup[] {
  const groups = new Map<string, FilterCondition[]>();
  let values = 0;
  for (const [name, value] of params) {
    if (RESERVED.has(name)) continue;
    if (++values > MAX_FILTER_VALUES) {
      throw new BadRequestError(
        `Too many filter parameters: at most ${MAX_FILTER_VALUES} filter values per request (parameter ${quoteInput(name)})`,
      );
    }
    const { condition, groupKey } = parseCondition(definition, name, value);
    const group = groups.get(groupKey);
    if (group === undefined) groups.set(groupKey, [condition]);
    else group.push(condition);
  }
  const result: FilterGroup[] = [];
  for (const conditions of groups.values()) {
    const operator = conditions[0]!.operator;
    if (NEGATED.includes(operator)) {
      // NOT (a OR b) = NOT a AND NOT b: one group per value.
      for (const condition of conditions) result.push({ anyOf: [condition] });
    } else {
      result.push({ anyOf: conditions });
    }
  }
  return result;
}

const FILTER_PARAMETER = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[([^\]]*)\])?$/;

function parseCondition(
  definition: EntityDefinition<object>,
  name: string,
  raw: string,
): ParsedCondition {
  // The parameter name as reasons quote it: a client may send 8 KB of it.
  const parameter = quoteInput(name);
  const match = FILTER_PARAMETER.exec(name);
  if (match === null) {
    throw new BadRequestError(
      `Query parameter ${JSON.stringify(parameter)} is not a filter: use field=value, field[OPERATOR]=value or a dotted path into an OBJECT field`,
    );
  }
  const path = match[1]!.split('.');
  const operatorText = match[2];
  const operatorKey = operatorText?.toUpperCase();
  const operator =
    operatorKey === undefined
      ? 'EQUALS'
      : Object.hasOwn(OPERATORS, operatorKey)
        ? OPERATORS[operatorKey]
        : undefined;
  if (operator === undefined) {
    throw new BadRequestError(
      `Unknown operator ${JSON.stringify(quoteInput(operatorText ?? ''))} in query parameter ${parameter}; use one of ${Object.keys(OPERATORS).join(', ')}`,
    );
  }
  const field = resolvePath(definition, path, parameter);
  const dotted = path.join('.');
  const groupKey = JSON.stringify([path, operator]);
  if (field.type === 'ARRAY') {
    const element = field.element;
    if (element === undefined || filterOperatorsOf(element) === undefined) {
      throw new BadRequestError(
        `Field ${dotted} is an ARRAY of ${element?.type ?? 'unknown'} values, which cannot be filtered (parameter ${parameter})`,
      );
    }
    if (!MEMBERSHIP_OPERATORS.includes(operator)) {
      throw new BadRequestError(
        `Operator ${operator} does not apply to the ARRAY field ${dotted} (parameter ${parameter}); use CONTAINS or NOT_CONTAINS to test membership`,
      );
    }
    const condition: FilterCondition = {
      path,
      operator,
      kind: kindOf(element),
      value: convertValue(element, 'EQUALS', raw, parameter),
      arrayMembership: true,
    };
    return { condition, groupKey };
  }
  const allowed = filterOperatorsOf(field);
  if (allowed === undefined) {
    throw new BadRequestError(
      `Field ${dotted} of type ${field.type} cannot be filtered (parameter ${parameter})${field.type === 'OBJECT' ? '; filter one of its fields with a dotted path' : ''}`,
    );
  }
  if (!allowed.includes(operator)) {
    throw new BadRequestError(
      `Operator ${operator} does not apply to field ${dotted} of type ${field.type} (parameter ${parameter}); use one of ${allowed.join(', ')}`,
    );
  }
  const condition: FilterCondition = {
    path,
    operator,
    kind: kindOf(field),
    value: convertValue(field, operator, raw, parameter),
  };
  return { condition, groupKey };
}

function resolvePath(
  definition: EntityDefinition<object>,
  path: readonly string[],
  parameter: string,
): FieldInfo {
  let fields: Readonly<Record<string, FieldInfo>> | undefined = definition.fields;
  let field: FieldInfo | undefined;
  for (let index = 0; index < path.length; index++) {
    const name = path[index]!;
    if (index > 0 && field?.type !== 'OBJECT') {
      throw new BadRequestError(
        `Field ${path.slice(0, index).join('.')} is not an OBJECT, so ${quoteInput(path.join('.'))} does not exist (parameter ${parameter})`,
      );
    }
    field = fields !== undefined && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field === undefined) {
      const where =
        index === 0 ? `Entity ${definition.name}` : `field ${path.slice(0, index).join('.')}`;
      throw new BadRequestError(
        `Unknown field ${quoteInput(path.slice(0, index + 1).join('.'))} in ${where} (parameter ${parameter})`,
      );
    }
    fields = field.fields;
  }
  if (field === undefined) throw new BadRequestError(`Empty field name in parameter ${parameter}`);
  return field;
}

function kindOf(field: FieldInfo): ColumnKind {
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return 'integer';
  return KIND_BY_TYPE[field.type] ?? 'json';
}

/** Converts a filter value as the field's type would convert it in a request body. */
function convertValue(
  field: FieldInfo,
  operator: FilterOperator,
  raw: string,
  parameter: string,
): KeyValue {
  if (raw.includes('\u0000')) {
    throw new BadRequestError(
      `Value of query parameter ${parameter} contains the character U+0000, which stored values cannot hold`,
    );
  }
  // Substring tests look for the text as written.
  if (TEXT_MATCH.includes(operator)) return raw;
  const value = convertScalar(field, raw);
  if (value === undefined) {
    throw new BadRequestError(
      `Value ${JSON.stringify(quoteInput(raw))} of query parameter ${parameter} is not a valid ${typeLabel(field)}`,
    );
  }
  return value;
}

function typeLabel(field: FieldInfo): string {
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return 'ENTITY_REF (an INTEGER id)';
  if (field.values !== undefined) return `${field.type} (one of ${field.values.join(', ')})`;
  return field.type;
}

/** The canonical value of a scalar of `field`'s type, or `undefined` when it does not convert. */
function convertScalar(field: FieldInfo, raw: unknown): KeyValue | undefined {
  const issues: Issue[] = [];
  return converterFor(field)(raw, [], 'value', issues);
}

function converterFor(field: FieldInfo): Converter<KeyValue> {
  switch (field.type) {
    case 'INTEGER':
      return toInteger;
    case 'DOUBLE':
      return toDouble;
    case 'DECIMAL':
      return toDecimal;
    case 'BOOL':
      return toBoolean;
    case 'DATE':
      return toDate;
    case 'DATE_TIME':
      return toDateTime;
    case 'ENUM':
      return enumConverter(field.values ?? []);
    case 'SELECT':
      return selectConverter(field.values ?? []);
    case 'ENTITY_REF':
      return field.integerRef === true ? toInteger : toText;
    default:
      return toText;
  }
}

// Sorting and paging -------------------------------------------------------------------------

function parseOrderBy(
  definition: EntityDefinition<object>,
  config: RestConfig,
  params: URLSearchParams,
): OrderTerm[] {
  const given = single(params, 'orderBy');
  const spec = given === undefined ? (config.defaultOrder ?? []).join(',') : given;
  if (spec.trim() === '') {
    if (given !== undefined)
      throw new BadRequestError('Parameter orderBy is empty; name one or more fields');
    return [];
  }
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const part of spec.split(',')) {
    const text = part.trim();
    const descending = text.startsWith('-');
    const name = descending || text.startsWith('+') ? text.slice(1).trim() : text;
    const field = Object.hasOwn(definition.fields, name) ? definition.fields[name] : undefined;
    if (field === undefined) {
      throw new BadRequestError(
        `Parameter orderBy names ${JSON.stringify(quoteInput(name))}, which is not a field of Entity ${definition.name}`,
      );
    }
    if (filterOperatorsOf({ type: field.type }) === undefined) {
      throw new BadRequestError(
        `Parameter orderBy: field ${name} of type ${field.type} cannot be sorted`,
      );
    }
    if (
      given !== undefined &&
      config.allowedOrderingFields !== undefined &&
      !config.allowedOrderingFields.includes(name)
    ) {
      throw new BadRequestError(
        `Parameter orderBy: Entity ${definition.name} cannot be sorted by ${name}; allowed: ${config.allowedOrderingFields.join(', ')}`,
      );
    }
    if (seen.has(name)) throw new BadRequestError(`Parameter orderBy names field ${name} twice`);
    seen.add(name);
    terms.push({ column: name, descending });
  }
  return terms;
}

/** A non-negative integer parameter, at least `minimum`. */
function parseCount(params: URLSearchParams, name: string, minimum: number): number | undefined {
  const text = single(params, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text) || Number(text) < minimum) {
    throw new BadRequestError(
      `Parameter ${name} must be an integer of at least ${minimum}, not ${JSON.stringify(quoteInput(text))}`,
    );
  }
  return Number(text);
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new BadRequestError(`Parameter ${name} may be given only once`);
  return values[0];
}

// Cursors ------------------------------------------------------------------------------------

interface CursorPayload {
  /** Format version. */
  readonly v: 1;
  /** Signature of the query the cursor belongs to. */
  readonly q: string;
  /** Page size of the page that issued the cursor. */
  readonly l: number;
  /** Sort values of the last row: order terms, then key columns not already ordered. */
  readonly a: readonly (KeyValue | null)[];
}

/** A decoded, validated cursor. */
interface Cursor {
  readonly limit: number;
  readonly after: (KeyValue | null)[];
}

/**
 * A short hash of entity, filters and order. Filter groups and the conditions of a group are
 * sorted, so neither the order of the parameters nor the spelling of values changes it.
 */
function querySignature(
  definition: EntityDefinition<object>,
  filters: readonly FilterGroup[],
  orderBy: readonly OrderTerm[],
): string {
  const groups = filters
    .map((group) => group.anyOf.map((condition) => JSON.stringify(condition)).sort())
    .sort((a, b) => compareText(JSON.stringify(a), JSON.stringify(b)));
  return createHash('sha256')
    .update(JSON.stringify([definition.name, groups, orderBy]))
    .digest('base64url')
    .slice(0, 16);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The key of callers that give none (direct calls in tests); services always pass theirs. */
const UNKEYED = 'entity-gen-cursor';

function checksum(text: string, key: string = UNKEYED): string {
  return createHmac('sha256', key).update(text).digest('base64url').slice(0, 22);
}

/** Compares two signatures in constant time. */
function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Columns the cursor holds values for: the order terms, then key columns not already ordered. */
function cursorColumns(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
): string[] {
  const columns = orderBy.map((term) => term.column);
  for (const key of definition.table.key) if (!columns.includes(key)) columns.push(key);
  return columns;
}

/** The value of a storage-only key column (`ColumnDescriptor.fixed`), which records do not hold. */
function fixedValue(definition: EntityDefinition<object>, column: string): string | undefined {
  return definition.table.columns.find((candidate) => candidate.name === column)?.fixed;
}

function encodeCursor(
  definition: EntityDefinition<object>,
  request: ListRequest,
  last: StoredRecord,
  key: string | undefined,
): string {
  const record = last.record;
  const values = cursorColumns(definition, request.orderBy).map((column) => {
    const value = fixedValue(definition, column) ?? record[column];
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? value
      : null;
  });
  const payload: CursorPayload = {
    v: 1,
    q: request.signature,
    l: request.limit ?? request.cap,
    a: values,
  };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${checksum(body, key)}`;
}

function decodeCursor(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
  signature: string,
  cursor: string,
  key: string | undefined,
): Cursor {
  const invalid = (why: string): BadRequestError =>
    new BadRequestError(
      `Parameter cursor is invalid: ${why}; pass meta.next of the previous page unchanged`,
    );
  const [body, sum, ...rest] = cursor.split('.');
  if (
    body === undefined ||
    body === '' ||
    sum === undefined ||
    rest.length > 0 ||
    !sameText(checksum(body, key), sum)
  ) {
    throw invalid('it was not issued by this service or was altered');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('it does not decode');
  }
  if (typeof payload !== 'object' || payload === null || (payload as { v?: unknown }).v !== 1) {
    throw invalid('unknown cursor format');
  }
  const { q, l, a } = payload as { q?: unknown; l?: unknown; a?: unknown };
  if (q !== signature) {
    throw new BadRequestError(
      'Parameter cursor belongs to a query with other filters or another order; repeat the filters and orderBy of the first page with it',
    );
  }
  if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 1)
    throw invalid('it holds no valid page size');
  const columns = cursorColumns(definition, orderBy);
  if (!Array.isArray(a) || a.length !== columns.length)
    throw invalid('it does not match the sort order');
  const after = columns.map((column, index) => {
    const value: unknown = a[index];
    const fixed = fixedValue(definition, column);
    if (fixed !== undefined) {
      if (value !== fixed) throw invalid(`it holds another value for ${column}`);
      return fixed;
    }
    const field = Object.hasOwn(definition.fields, column) ? definition.fields[column] : undefined;
    const descriptor = definition.table.columns.find((candidate) => candidate.name === column);
    if (field === undefined || descriptor === undefined) throw invalid('it names an unknown field');
    if (value === null) {
      if (descriptor.required || definition.table.key.includes(column))
        throw invalid(`it holds no value for ${column}`);
      return null;
    }
    const converted = convertScalar(field, value);
    if (
      converted === undefined ||
      (typeof converted === 'string' && converted.includes('\u0000'))
    ) {
      throw invalid(`it holds a value of the wrong type for ${column}`);
    }
    return converted;
  });
  return { limit: l, after };
}
