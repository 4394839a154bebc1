/**
 * The query string of a list or count request as a whole: filters (filters.ts), `orderBy`,
 * `start`, `limit` and `cursor` (cursors.ts), each checked once, then the REST configuration's
 * paging rules (`maxWindow`, `defaultLimit`) and the service's page size cap.
 */
import type { EntityDefinition } from '../definition.js';
import type {
  DeletedFilter,
  FilterExpression,
  FilterGroup,
  KeyValue,
  OrderTerm,
} from '../driver.js';
import { BadRequestError, quoteInput } from '../errors.js';
import type { RestConfig } from '../rest-config.js';
import { filterOperatorsOf } from '../schema.js';
import { searchWords } from '../search.js';
import { decodeCursor, querySignature, type Cursor } from './cursors.js';
import { compileExpression } from './expression.js';
import {
  DELETED_PARAMETER,
  isSearchParameter,
  parseFilters,
  SEARCH_PARAMETER,
  type ReferenceTargets,
} from './filters.js';

/** The largest page a list answers by default (`MAX_PAGE_SIZE`). */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

/** A list request after validation. */
export interface ListRequest {
  readonly filters: readonly FilterGroup[];
  /** `filter=`: the expression, ANDed with `filters`. */
  readonly expression: FilterExpression | undefined;
  /** `count=true`: the page's `meta.count` is asked for. */
  readonly count: boolean;
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
  /** `deleted=include|only` of a `softDelete` entity (SPEC §13). */
  readonly deleted: DeletedFilter | undefined;
  /** `q=`: the words of a full-text search (search.ts). */
  readonly search: readonly string[] | undefined;
  /**
   * The page is in relevance order (`q` without `orderBy`): its cursor holds the offset of the
   * next page, since no column carries the order.
   */
  readonly relevance: boolean;
}

/** Validates the query string of a list request against the schema and the REST config. */
export function parseListRequest(
  definition: EntityDefinition<object>,
  config: RestConfig,
  querystring: string,
  maxPageSize: number = DEFAULT_MAX_PAGE_SIZE,
  cursorKey?: string,
  targets?: ReferenceTargets,
): ListRequest {
  const {
    filters,
    expression,
    count,
    orderBy,
    signature,
    start,
    requestedLimit,
    cursor,
    deleted,
    search,
    relevance,
  } = parseQuery(definition, config, querystring, cursorKey, targets);
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
    expression,
    count,
    orderBy,
    start: start ?? cursor?.offset ?? 0,
    startGiven: start !== undefined,
    limit,
    cap,
    after: cursor?.after,
    signature,
    deleted,
    search,
    relevance,
  };
}

/** Every parameter of a list or count request, checked, before the REST config's paging rules. */
export interface ParsedQuery {
  readonly filters: FilterGroup[];
  readonly expression: FilterExpression | undefined;
  readonly count: boolean;
  readonly orderBy: OrderTerm[];
  readonly signature: string;
  readonly start: number | undefined;
  readonly requestedLimit: number | undefined;
  readonly cursor: Cursor | undefined;
  /** `deleted=include|only` of a `softDelete` entity (SPEC §13). */
  readonly deleted: DeletedFilter | undefined;
  /** `q=`: the words of a full-text search. */
  readonly search: readonly string[] | undefined;
  /** `q` without `orderBy`: the list is in relevance order, paged by offset. */
  readonly relevance: boolean;
}

export function parseQuery(
  definition: EntityDefinition<object>,
  config: RestConfig,
  querystring: string,
  cursorKey: string | undefined,
  targets?: ReferenceTargets,
): ParsedQuery {
  const params = new URLSearchParams(querystring);
  const filters = parseFilters(definition, params, targets);
  const filterText = single(params, 'filter');
  const expression =
    filterText === undefined ? undefined : compileExpression(definition, filterText, targets);
  const count = parseFlag(params, 'count');
  const search = parseSearch(definition, params);
  // A search orders by relevance unless orderBy is given: the REST config's defaultOrder yields.
  const orderBy = parseOrderBy(definition, config, params, search !== undefined);
  const relevance = search !== undefined && orderBy.length === 0;
  const deleted = parseDeleted(definition, params);
  // A cursor of the deleted records does not page the live ones, and the other way round; one
  // of a search pages only that search.
  const signature =
    querySignature(definition, filters, orderBy, expression) +
    (deleted === undefined ? '' : `|${deleted}`) +
    (search === undefined ? '' : `|q:${JSON.stringify(search)}`);
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
      : decodeCursor(definition, orderBy, signature, cursorText, cursorKey, relevance);
  return {
    filters,
    expression,
    count,
    orderBy,
    signature,
    start,
    requestedLimit,
    cursor,
    deleted,
    search,
    relevance,
  };
}

/** `q=`: the words of a full-text search, on an entity with `search` only (search.ts). */
function parseSearch(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
): readonly string[] | undefined {
  if (!isSearchParameter(definition)) return undefined;
  const text = single(params, SEARCH_PARAMETER);
  if (text === undefined) return undefined;
  if (definition.table.search === undefined) {
    throw new BadRequestError(
      `Parameter q searches the text of records, but Entity ${definition.name} declares no search fields`,
    );
  }
  return searchWords(text);
}

/** `deleted=include|only` (a `softDelete` entity only; elsewhere `deleted` is a filter). */
function parseDeleted(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
): DeletedFilter | undefined {
  if (definition.table.softDelete !== true) return undefined;
  const text = single(params, DELETED_PARAMETER);
  if (text === undefined || text === 'exclude') return undefined;
  if (text === 'include' || text === 'only') return text;
  throw new BadRequestError(
    `Parameter deleted must be include, only or exclude, not ${JSON.stringify(quoteInput(text))}`,
  );
}

function parseOrderBy(
  definition: EntityDefinition<object>,
  config: RestConfig,
  params: URLSearchParams,
  searching: boolean,
): OrderTerm[] {
  const given = single(params, 'orderBy');
  const spec =
    given === undefined ? (searching ? '' : (config.defaultOrder ?? []).join(',')) : given;
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

/** `true` or `false` (absent: false). */
function parseFlag(params: URLSearchParams, name: string): boolean {
  const text = single(params, name);
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  throw new BadRequestError(
    `Parameter ${name} must be true or false, not ${JSON.stringify(quoteInput(text))}`,
  );
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new BadRequestError(`Parameter ${name} may be given only once`);
  return values[0];
}
