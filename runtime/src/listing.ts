import { createHash } from 'node:crypto';
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
import { BadRequestError, MethodForbiddenError } from './errors.js';
import type { Issue } from './issues.js';
import type { DataContext } from './operations.js';
import type { RestConfig } from './service.js';

/** Query parameters with a meaning of their own; every other parameter is a filter. */
const RESERVED = new Set(['orderBy', 'start', 'limit', 'cursor']);

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

const EQUALITY: readonly FilterOperator[] = ['EQUALS', 'NOT_EQUALS'];
const ORDERING: readonly FilterOperator[] = ['EQUALS', 'NOT_EQUALS', 'GT', 'GTE', 'LT', 'LTE'];
const TEXT: readonly FilterOperator[] = [
  ...ORDERING,
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
];
const MEMBERSHIP: readonly FilterOperator[] = ['CONTAINS', 'NOT_CONTAINS'];

/** Operators each filterable type accepts; types missing here cannot be filtered or sorted. */
const OPERATORS_BY_TYPE: Readonly<Record<string, readonly FilterOperator[]>> = {
  STRING: TEXT,
  ENUM: TEXT,
  SELECT: TEXT,
  ENTITY_REF: TEXT,
  INTEGER: ORDERING,
  DOUBLE: ORDERING,
  DECIMAL: ORDERING,
  DATE: ORDERING,
  DATE_TIME: ORDERING,
  BOOL: EQUALITY,
};

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
  const request = parseListRequest(definition, config, ctx.querystring);
  const query: ListQuery = {
    filters: request.filters,
    orderBy: request.orderBy,
    ...(request.limit === undefined ? {} : { limit: request.limit + 1 }),
    ...(request.after === undefined ? { offset: request.start } : { after: request.after }),
  };
  const rows = await data.driver.list(definition.table, query);
  const hasMore = request.limit !== undefined && rows.length > request.limit;
  const page = hasMore ? rows.slice(0, request.limit) : rows;
  const meta: Record<string, unknown> = {};
  if (request.limit !== undefined) {
    if (request.after === undefined) meta['start'] = request.start;
    meta['limit'] = request.limit;
    const last = page[page.length - 1];
    if (hasMore && last !== undefined) meta['next'] = encodeCursor(definition, request, last);
  }
  ctx.body = successBody(
    page.map((row) => row.record),
    meta,
  );
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
  const params = new URLSearchParams(ctx.querystring);
  const filters = parseFilters(definition, params);
  const count = await data.driver.count(definition.table, { filters, orderBy: [] });
  ctx.body = successBody({ count });
}

/** A list request after validation. */
export interface ListRequest {
  readonly filters: readonly FilterGroup[];
  readonly orderBy: readonly OrderTerm[];
  readonly start: number;
  readonly limit: number | undefined;
  readonly after: readonly (KeyValue | null)[] | undefined;
  /** Identifies filters and order, so a cursor is only used with the query that made it. */
  readonly signature: string;
}

/** Validates the query string of a list request against the schema and the REST config. */
export function parseListRequest(
  definition: EntityDefinition<object>,
  config: RestConfig,
  querystring: string,
): ListRequest {
  const params = new URLSearchParams(querystring);
  const filters = parseFilters(definition, params);
  const orderBy = parseOrderBy(definition, config, params);
  const signature = querySignature(filters, orderBy);
  const start = parseCount(params, 'start', 0);
  const requestedLimit = parseCount(params, 'limit', 1);
  const cursor = single(params, 'cursor');
  if (cursor !== undefined && params.has('start')) {
    throw new BadRequestError('Parameters cursor and start cannot be used together');
  }
  const limit =
    requestedLimit ?? (config.getListStrategy === 'START_LIMIT' ? config.defaultLimit : undefined);
  if (
    config.maxWindow !== undefined &&
    limit !== undefined &&
    (start ?? 0) + limit > config.maxWindow
  ) {
    throw new BadRequestError(
      `start + limit is ${(start ?? 0) + limit}, more than the maximum window of ${config.maxWindow} for Entity ${definition.name}; use cursor paging`,
    );
  }
  if (config.maxWindow !== undefined && limit === undefined) {
    throw new BadRequestError(
      `Parameter limit is required for Entity ${definition.name} (maximum window ${config.maxWindow})`,
    );
  }
  const after =
    cursor === undefined ? undefined : decodeCursor(definition, orderBy, signature, cursor);
  if (after !== undefined && limit === undefined) {
    throw new BadRequestError('Parameter cursor needs a limit');
  }
  return { filters, orderBy, start: start ?? 0, limit, after, signature };
}

function parseFilters(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
): FilterGroup[] {
  const groups = new Map<string, FilterCondition[]>();
  for (const [name, value] of params) {
    if (RESERVED.has(name)) continue;
    const condition = parseCondition(definition, name, value);
    const group = groups.get(name);
    if (group === undefined) groups.set(name, [condition]);
    else group.push(condition);
  }
  return [...groups.values()].map((anyOf) => ({ anyOf }));
}

const FILTER_PARAMETER = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[([^\]]*)\])?$/;

function parseCondition(
  definition: EntityDefinition<object>,
  parameter: string,
  raw: string,
): FilterCondition {
  const match = FILTER_PARAMETER.exec(parameter);
  if (match === null) {
    throw new BadRequestError(
      `Query parameter ${parameter} is not a filter: use field=value or field[OPERATOR]=value`,
    );
  }
  const path = match[1]!.split('.');
  const operatorText = match[2];
  const operator = operatorText === undefined ? 'EQUALS' : OPERATORS[operatorText.toUpperCase()];
  if (operator === undefined) {
    throw new BadRequestError(
      `Unknown operator ${operatorText ?? ''} in query parameter ${parameter}; use one of ${Object.keys(OPERATORS).join(', ')}`,
    );
  }
  const field = resolvePath(definition, path, parameter);
  if (field.type === 'ARRAY') {
    const element = field.element;
    if (path.length > 1 || element === undefined || OPERATORS_BY_TYPE[element.type] === undefined) {
      throw new BadRequestError(
        `Field ${path.join('.')} cannot be filtered (parameter ${parameter})`,
      );
    }
    if (!MEMBERSHIP.includes(operator)) {
      throw new BadRequestError(
        `Operator ${operator} does not apply to the ARRAY field ${path.join('.')}; use CONTAINS or NOT_CONTAINS to test membership (parameter ${parameter})`,
      );
    }
    return {
      path,
      operator,
      kind: kindOf(element),
      value: convertValue(element, 'EQUALS', raw, parameter),
      arrayMembership: true,
    };
  }
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (allowed === undefined) {
    throw new BadRequestError(
      `Field ${path.join('.')} of type ${field.type} cannot be filtered (parameter ${parameter})`,
    );
  }
  if (!allowed.includes(operator)) {
    throw new BadRequestError(
      `Operator ${operator} does not apply to field ${path.join('.')} of type ${field.type} (parameter ${parameter}); use one of ${allowed.join(', ')}`,
    );
  }
  return {
    path,
    operator,
    kind: kindOf(field),
    value: convertValue(field, operator, raw, parameter),
  };
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
    field = fields !== undefined && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field === undefined) {
      const where =
        index === 0 ? `Entity ${definition.name}` : `field ${path.slice(0, index).join('.')}`;
      throw new BadRequestError(
        `Unknown field ${path.slice(0, index + 1).join('.')} in ${where} (parameter ${parameter})`,
      );
    }
    fields = field.fields;
    if (index < path.length - 1 && field.type !== 'OBJECT') {
      throw new BadRequestError(
        `Field ${path.slice(0, index + 1).join('.')} is not an OBJECT, so ${path.join('.')} does not exist (parameter ${parameter})`,
      );
    }
  }
  if (field === undefined) throw new BadRequestError(`Empty field name in parameter ${parameter}`);
  return field;
}

function kindOf(field: FieldInfo): ColumnKind {
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return 'integer';
  return KIND_BY_TYPE[field.type] ?? 'json';
}

const TEXT_MATCH: readonly FilterOperator[] = [
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
];

/** Converts a filter value as the field's type would convert it in a request body. */
function convertValue(
  field: FieldInfo,
  operator: FilterOperator,
  raw: string,
  parameter: string,
): KeyValue {
  // Substring tests look for the text as written.
  if (TEXT_MATCH.includes(operator)) return raw;
  const converter = converterFor(field);
  const issues: Issue[] = [];
  const value = converter(raw, [], parameter, issues);
  if (value === undefined) {
    throw new BadRequestError(
      `Value ${JSON.stringify(raw)} of query parameter ${parameter} is not a valid ${field.type}${field.values === undefined ? '' : ` (one of ${field.values.join(', ')})`}`,
    );
  }
  return value;
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
    const name = descending || text.startsWith('+') ? text.slice(1) : text;
    const field = Object.hasOwn(definition.fields, name) ? definition.fields[name] : undefined;
    if (field === undefined) {
      throw new BadRequestError(
        `Parameter orderBy names ${JSON.stringify(name)}, which is not a field of Entity ${definition.name}`,
      );
    }
    if (OPERATORS_BY_TYPE[field.type] === undefined) {
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
      `Parameter ${name} must be an integer of at least ${minimum}, not ${JSON.stringify(text)}`,
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
  /** Sort values of the last row: order terms, then key columns. */
  readonly a: readonly (KeyValue | null)[];
}

function querySignature(filters: readonly FilterGroup[], orderBy: readonly OrderTerm[]): string {
  return createHash('sha256')
    .update(JSON.stringify([filters, orderBy]))
    .digest('base64url')
    .slice(0, 16);
}

function checksum(text: string): string {
  return createHash('sha256').update(`entity-gen-cursor:${text}`).digest('base64url').slice(0, 12);
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

function encodeCursor(
  definition: EntityDefinition<object>,
  request: ListRequest,
  last: StoredRecord,
): string {
  const record = last.record;
  const values = cursorColumns(definition, request.orderBy).map((column) => {
    const value = record[column];
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? value
      : null;
  });
  const payload: CursorPayload = { v: 1, q: request.signature, a: values };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${checksum(body)}`;
}

function decodeCursor(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
  signature: string,
  cursor: string,
): (KeyValue | null)[] {
  const invalid = (why: string): BadRequestError =>
    new BadRequestError(`Parameter cursor is invalid: ${why}`);
  const [body, sum, ...rest] = cursor.split('.');
  if (body === undefined || sum === undefined || rest.length > 0 || checksum(body) !== sum) {
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
  const { q, a } = payload as { q?: unknown; a?: unknown };
  if (q !== signature) throw invalid('it belongs to a query with other filters or another order');
  const columns = cursorColumns(definition, orderBy);
  if (!Array.isArray(a) || a.length !== columns.length)
    throw invalid('it does not match the sort order');
  return a.map((value: unknown) => {
    if (
      value === null ||
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean'
    ) {
      return value;
    }
    throw invalid('it holds a value of the wrong type');
  });
}
