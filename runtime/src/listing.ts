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
import type { Context } from 'koa';
import { ownerFilter, ownerScopeOf } from './auth/owner.js';
import { authorize } from './auth/access.js';
import type { EntityDefinition } from './definition.js';
import type { FilterGroup, ListQuery, RecordTexts, StoredRecord } from './driver.js';
import { successBody } from './envelope.js';
import { MethodForbiddenError } from './errors.js';
import type { DataContext } from './data-context.js';
import { authorizeExpand, expandRecords, parseExpand } from './expand.js';
import type { RequestState } from './http/errors.js';
import { queryMayHold } from './http/paths.js';
import { encodeCursor, encodeOffsetCursor } from './listing/cursors.js';
import { parseFields, project, type Selection } from './listing/fields.js';
import type { ReferenceTargets } from './listing/filters.js';
import { parseListRequest, parseQuery, type ListRequest } from './listing/query.js';
import type { RestConfig } from './rest-config.js';

export { MAX_FILTER_VALUES } from './listing/filters.js';
export { DEFAULT_MAX_PAGE_SIZE, parseListRequest, type ListRequest } from './listing/query.js';

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
    referenceTargets(definition, data),
  );
  const plan = queryMayHold(ctx.querystring, 'expand')
    ? parseExpand(definition, new URLSearchParams(ctx.querystring), data)
    : undefined;
  if (plan !== undefined) authorizeExpand(plan, (ctx.state as RequestState).principal);
  const selection =
    ctx.querystring !== ''
      ? parseFields(definition, new URLSearchParams(ctx.querystring), plan)
      : undefined;
  if (request.deleted !== undefined) authorizeDeleted(ctx, data, definition, config);
  const owner = ownerFilter(definition, ownerScopeOf(ctx));
  const pageSize = request.limit ?? request.cap;
  const query = listQueryOf(request, owner === 'nothing' ? undefined : owner);
  // A caller that can own no record (owner rule) gets an empty list without a query.
  const driver = data.driver;
  // A selection of whole top-level fields is written into the texts by the driver itself.
  const topLevel = selection === undefined ? undefined : topLevelFields(selection);
  if (
    owner !== 'nothing' &&
    driver.listTexts !== undefined &&
    plan === undefined &&
    (selection === undefined || topLevel !== undefined)
  ) {
    // The records arrive as JSON text (a SQLite reader wrote them): the body is spliced together,
    // byte for byte what the records' envelope would be; only the cursor's record is built.
    let texts = await driver.listTexts(
      definition.table,
      query,
      pageSize - 1,
      topLevel,
      request.count,
    );
    if (request.count && texts.count === undefined)
      texts = { ...texts, count: await driver.count(definition.table, query) };
    ctx.type = 'json';
    ctx.body = textPageBody(definition, request, texts, cursorKey);
    return;
  }
  let rows: readonly StoredRecord[];
  let count: number | undefined;
  if (owner === 'nothing') {
    rows = [];
    count = request.count ? 0 : undefined;
  } else if (request.count) {
    // The page and its total in one snapshot where the driver can (listCounted).
    if (driver.listCounted !== undefined) {
      ({ rows, count } = await driver.listCounted(definition.table, query));
    } else {
      rows = await driver.list(definition.table, query);
      count = await driver.count(definition.table, query);
    }
  } else {
    rows = await driver.list(definition.table, query);
  }
  const hasMore = rows.length > pageSize;
  const page = hasMore ? rows.slice(0, pageSize) : rows;
  const meta = pageMeta(definition, request, pageSize, hasMore, page[page.length - 1], cursorKey);
  if (count !== undefined) meta['count'] = count;
  let records: unknown[] = page.map((row) => row.record);
  if (plan !== undefined) {
    // The page's own copies, expanded with one query per path for the whole page.
    const copies = page.map((row): Record<string, unknown> => ({ ...row.record }));
    await expandRecords(data, definition, copies, plan, (ctx.state as RequestState).principal);
    records = copies;
  }
  if (selection !== undefined) records = records.map((record) => project(record, selection));
  ctx.body = successBody(records, meta);
}

/**
 * The driver's query of a list request, with the owner rule's filter when there is one: one row
 * more than the page, which tells whether another page follows.
 */
export function listQueryOf(request: ListRequest, owner: FilterGroup | undefined): ListQuery {
  return {
    ...(request.deleted === undefined ? {} : { deleted: request.deleted }),
    filters: owner === undefined ? request.filters : [...request.filters, owner],
    ...(request.expression === undefined ? {} : { expression: request.expression }),
    ...(request.search === undefined ? {} : { search: request.search }),
    orderBy: request.orderBy,
    limit: (request.limit ?? request.cap) + 1,
    ...(request.after === undefined ? { offset: request.start } : { after: request.after }),
  };
}

/**
 * The body of a page whose records the driver wrote as JSON texts (`listTexts` of
 * `listQueryOf(request, …)`, keeping the page's last record, and counting them for
 * `count=true`): byte for byte what `successBody` of the records and the page's `meta` would be.
 */
export function textPageBody(
  definition: EntityDefinition<object>,
  request: ListRequest,
  { texts, joined, kept, count }: RecordTexts,
  cursorKey: string | undefined,
): string {
  const pageSize = request.limit ?? request.cap;
  const hasMore = (joined?.records ?? texts.length) > pageSize;
  const meta = pageMeta(definition, request, pageSize, hasMore, kept, cursorKey);
  if (request.count && count !== undefined) meta['count'] = count;
  // Joined by the driver, the text holds the page's records only (up to `keep`, the page's last).
  const records = joined?.text ?? (hasMore ? texts.slice(0, pageSize) : texts).join(',');
  return `{"status":"success","data":[${records}],"meta":${JSON.stringify(meta)}}`;
}

/** The names of a selection of whole top-level fields only, else `undefined`. */
export function topLevelFields(selection: Selection): string[] | undefined {
  const names: string[] = [];
  for (const [name, part] of selection) {
    if (part !== true) return undefined;
    names.push(name);
  }
  return names;
}

/** The `meta` of a page: `start`, `limit` and the `next` cursor after `last` when more follow. */
function pageMeta(
  definition: EntityDefinition<object>,
  request: ListRequest,
  pageSize: number,
  hasMore: boolean,
  last: Pick<StoredRecord, 'record'> | undefined,
  cursorKey: string | undefined,
): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (request.after === undefined && (request.limit !== undefined || request.startGiven)) {
    meta['start'] = request.start;
  }
  // A list without a limit that fits one page answers as before; a longer one stops at the cap.
  if (request.limit !== undefined || hasMore) {
    meta['limit'] = pageSize;
    if (hasMore && request.relevance)
      meta['next'] = encodeOffsetCursor(
        request.signature,
        pageSize,
        request.start + pageSize,
        cursorKey,
      );
    else if (hasMore && last !== undefined)
      meta['next'] = encodeCursor(
        definition,
        request.orderBy,
        request.signature,
        pageSize,
        last,
        cursorKey,
      );
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
  const { filters, expression, deleted, search } = parseQuery(
    definition,
    config,
    ctx.querystring,
    await data.cursorKey?.(),
    referenceTargets(definition, data),
  );
  if (deleted !== undefined) authorizeDeleted(ctx, data, definition, config);
  const owner = ownerFilter(definition, ownerScopeOf(ctx));
  const count =
    owner === 'nothing'
      ? 0
      : await data.driver.count(definition.table, {
          filters: owner === undefined ? filters : [...filters, owner],
          ...(expression === undefined ? {} : { expression }),
          ...(deleted === undefined ? {} : { deleted }),
          ...(search === undefined ? {} : { search }),
        });
  ctx.body = successBody({ count });
}

/**
 * Seeing soft-deleted records (`deleted=include|only`, SPEC §13) is for callers who may DELETE:
 * the method switched on by the REST configuration and, with access rules, allowed to them.
 */
function authorizeDeleted(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<object>,
  config: RestConfig,
): void {
  if (!config.allowedMethods.includes('DELETE'))
    throw new MethodForbiddenError(definition.name, 'DELETE');
  const access = data.entities?.get(definition.name.toUpperCase())?.access;
  authorize(access, 'DELETE', definition.name, (ctx.state as RequestState).principal);
}

/**
 * The entities the reference fields of `definition` name, for filters through a reference
 * (`category.name=tools`, SPEC §11).
 */
export function referenceTargets(
  definition: EntityDefinition<object>,
  data: DataContext,
): ReferenceTargets | undefined {
  const entities = data.entities;
  if (entities === undefined) return undefined;
  return (field) => {
    const schema = definition.document.entity.fields.find((candidate) => candidate.name === field);
    const target = schema?.type === 'ENTITY_REF' ? schema.entityRef?.entity : undefined;
    return target === undefined ? undefined : entities.get(target.toUpperCase())?.definition;
  };
}
