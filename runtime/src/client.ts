/**
 * The typed client of a generated service (SPEC §7), for browsers and Node alike: only `fetch`
 * and other web-standard globals, nothing of the server. A generated service's `src/client.ts`
 * gives each entity an accessor with its record, input, patch, filter and order types; this module
 * is what they share. Subpath `@entity-gen/runtime/client`.
 */

/** A value, or several (a repeated query parameter: any of them, OR). */
export type OneOrMany<T> = T | readonly T[];

/** Filters of a BOOL field: equals, or EQUALS / NOT_EQUALS. */
export type EqualityFilter<T> =
  | OneOrMany<T>
  | { readonly EQUALS?: OneOrMany<T>; readonly NOT_EQUALS?: OneOrMany<T> };

/** Filters of a number, DECIMAL, DATE or DATE_TIME field. */
export type OrderedFilter<T> =
  | OneOrMany<T>
  | {
      readonly EQUALS?: OneOrMany<T>;
      readonly NOT_EQUALS?: OneOrMany<T>;
      readonly GT?: OneOrMany<T>;
      readonly GTE?: OneOrMany<T>;
      readonly LT?: OneOrMany<T>;
      readonly LTE?: OneOrMany<T>;
    };

/** Filters of a text field (STRING, ENUM, SELECT, a text ENTITY_REF); substring tests are literal. */
export type TextFilter<T extends string = string> =
  | OneOrMany<T>
  | {
      readonly EQUALS?: OneOrMany<T>;
      readonly NOT_EQUALS?: OneOrMany<T>;
      readonly GT?: OneOrMany<T>;
      readonly GTE?: OneOrMany<T>;
      readonly LT?: OneOrMany<T>;
      readonly LTE?: OneOrMany<T>;
      readonly CONTAINS?: OneOrMany<string>;
      readonly NOT_CONTAINS?: OneOrMany<string>;
      readonly STARTS_WITH?: OneOrMany<string>;
      readonly ENDS_WITH?: OneOrMany<string>;
      /** Case-insensitive (Unicode case folding) forms. */
      readonly IEQUALS?: OneOrMany<string>;
      readonly ICONTAINS?: OneOrMany<string>;
      readonly ISTARTS_WITH?: OneOrMany<string>;
      readonly IENDS_WITH?: OneOrMany<string>;
    };

/** Filters of an ARRAY of scalars: whether it has an element equal to the value. */
export interface MembershipFilter<T> {
  readonly CONTAINS?: OneOrMany<T>;
  readonly NOT_CONTAINS?: OneOrMany<T>;
}

/**
 * A list request: filters (`where`, and a `filter` expression ANDed with them), sort keys
 * (`-field` descending), paging, and `count: true` for `meta.count`.
 */
export interface ListQuery<TWhere, TOrder extends string> {
  readonly where?: TWhere;
  /** A filter expression (`name ~* "ham" or code >= "H"`), ANDed with `where`. */
  readonly filter?: string;
  /**
   * Full-text search of an entity with `search` (`hammer ste`): the records holding every word,
   * the last as a prefix, best matches first unless `orderBy` is given; ANDed with the filters.
   */
  readonly q?: string;
  /** Adds `meta.count`, the number of records matching the filters. */
  readonly count?: boolean;
  readonly orderBy?: readonly TOrder[];
  readonly limit?: number;
  readonly start?: number;
  /** `meta.next` of the previous page. */
  readonly cursor?: string;
  /**
   * Soft-deleted records too (`include`) or only them (`only`): entities with `softDelete`, for
   * callers who may delete (SPEC §13).
   */
  readonly deleted?: 'include' | 'only';
}

/** `meta` of a list: `start` (offset paging), `limit` (when a limit applies), `next` (a cursor). */
export interface ListMeta {
  readonly start?: number;
  readonly limit?: number;
  readonly next?: string;
  /** With `count: true`: the number of records matching the filters. */
  readonly count?: number;
}

/**
 * A path `fields` may name: a field of the record, or a dotted path into one (an OBJECT field,
 * or a reference that `expand` embeds).
 */
export type FieldPath<TRecord> = (keyof TRecord & string) | `${keyof TRecord & string}.${string}`;

/** The top-level field a path starts with. */
type PathHead<S extends string> = S extends `${infer Head}.${string}` ? Head : S;

/**
 * What `fields` leaves of a record: the named fields, with their optionality; a field named
 * only through dotted paths keeps part of its value (so its properties are optional).
 */
export type Selected<TRecord, S extends string> = [S] extends [never]
  ? TRecord
  : Pick<TRecord, PathHead<S> & keyof TRecord> extends infer Picked
    ? {
        [P in keyof Picked]: P extends S ? Picked[P] : PartialValue<Picked[P]>;
      }
    : never;

type PartialValue<T> = T extends readonly (infer E)[]
  ? Partial<E>[]
  : T extends object
    ? Partial<T>
    : T;

/** The fields a read returns: `{ fields: ['code', 'name'] }` narrows the record's type. */
export interface FieldsOption<S extends string> {
  readonly fields?: readonly S[];
}

/** One validation problem of a request, as the service reports it. */
export interface ApiIssue {
  readonly path: readonly (string | number)[];
  readonly code: string;
  readonly message: string;
}

/**
 * An error answer of the service: its HTTP status, reason and validation issues; for a batch,
 * the index of the operation that failed.
 */
export class EntityApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly issues: readonly ApiIssue[] = [],
    readonly operation?: number,
  ) {
    super(`${status}: ${reason}`);
    this.name = 'EntityApiError';
  }
}

/** Headers, in any form `new Headers()` takes (an object, a list of pairs, a `Headers`). */
export type HeaderValues = ConstructorParameters<typeof Headers>[0];

/** Headers for every request: fixed, or made per request (a fresh token, say). */
export type HeadersSource = HeaderValues | (() => HeaderValues | Promise<HeaderValues>);

/** Where the service is and how to call it. */
export interface ClientOptions {
  /** The service's root URL, e.g. `https://api.example.com` or `http://localhost:8080`. */
  readonly baseUrl: string;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Sent with every request, e.g. `{ Authorization: 'Bearer …' }`. */
  readonly headers?: HeadersSource;
}

/** Sends requests to one service and unwraps its envelope. */
export interface Transport {
  /**
   * Sends `body` as `{"data": body}` — or as it is, with `bare` (the body of `POST /batch`) —
   * and resolves to the success envelope's `data` and `meta`.
   */
  request(
    method: string,
    path: string,
    query?: URLSearchParams,
    body?: unknown,
    options?: { readonly bare?: boolean },
  ): Promise<Envelope>;
}

/** A success answer of the service. */
export interface Envelope {
  readonly data: unknown;
  readonly meta?: unknown;
}

/**
 * The transport of a client; throws `EntityApiError` for an error answer.
 *
 * Read-your-writes behind read replicas (SPEC §15): the latest `X-Read-After` token of the
 * service's answers is sent with every later request of this client (unless its headers set one),
 * so a read after the client's own write sees that write.
 */
export function createTransport(options: ClientOptions): Transport {
  const base = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? globalThis.fetch.bind(globalThis);
  let readAfter: string | undefined;
  return {
    async request(method, path, query, body, how) {
      const given = options.headers;
      const headers = new Headers(typeof given === 'function' ? await given() : given);
      headers.set('Accept', 'application/json');
      if (readAfter !== undefined && !headers.has('X-Read-After'))
        headers.set('X-Read-After', readAfter);
      if (body !== undefined) headers.set('Content-Type', 'application/json');
      const search = query === undefined || query.toString() === '' ? '' : `?${query.toString()}`;
      const response = await send(`${base}${path}${search}`, {
        method,
        headers,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(how?.bare === true ? body : { data: body }) }),
      });
      const token = response.headers.get('X-Read-After');
      if (token !== null) readAfter = laterToken(readAfter, token);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (isObject(parsed) && parsed['status'] === 'success' && response.ok)
        return { data: parsed['data'], meta: parsed['meta'] };
      const error = isObject(parsed) && isObject(parsed['error']) ? parsed['error'] : {};
      throw new EntityApiError(
        response.status,
        typeof error['reason'] === 'string'
          ? error['reason']
          : `${response.status} ${response.statusText}`,
        Array.isArray(error['issues']) ? (error['issues'] as ApiIssue[]) : [],
        typeof error['operation'] === 'number' ? error['operation'] : undefined,
      );
    },
  };
}

/**
 * A record with the references `K` embedded, as `expand=` answers it (SPEC §11): each named
 * reference field holds the record it names (or `null`), an ARRAY of references a list of them.
 */
export type Expanded<TRecord, TExpansions, K extends keyof TExpansions> = [K] extends [never]
  ? TRecord
  : Omit<TRecord, K & keyof TRecord> & { [P in K]?: TExpansions[P] };

/** The references a read embeds: `{ expand: ['category'] }`. */
export interface ExpandOption<K extends string> {
  readonly expand?: readonly K[];
}

/** `asOf` of a read by key: the record as it was then (entities with `history`, SPEC §13). */
export interface AsOfOption {
  /** An ISO 8601 time with a zone, or a `Date`; `EntityApiError` 404 if the record did not exist then. */
  readonly asOf?: string | Date;
}

/** One kept version of a record (SPEC §13). */
export interface HistoryVersion<TRecord> {
  /** 1, 2, … per record, in commit order. */
  readonly version: number;
  /** What the change did; a rename is an `updated` version under the new id. */
  readonly op: 'created' | 'updated' | 'deleted' | 'restored' | 'purged';
  readonly timeUnix: number;
  readonly timeISO: string;
  /** The subject of the caller; `null` without access rules or for an anonymous one. */
  readonly by: string | null;
  /** The record after the change; as it was, for `deleted` and `purged`. */
  readonly record: TRecord;
}

/** What a client offers besides for an entity with `history` (SPEC §13). */
export interface HistoryAccessor<TRecord> {
  /**
   * The kept versions of a record, newest first: a page of at most `limit` (default 100) and its
   * `meta`; pass `meta.next` as `cursor` for the older ones.
   */
  history(
    id: string | number,
    query?: { readonly limit?: number; readonly cursor?: string },
  ): Promise<{ data: HistoryVersion<TRecord>[]; meta: { limit: number; next?: string } }>;
}

/** The `history` of the entity with `history` served at `/data/<pathName>`. */
export function historyAccessor<TRecord>(
  transport: Transport,
  pathName: string,
): HistoryAccessor<TRecord> {
  return {
    async history(id, query = {}) {
      const parameters = new URLSearchParams();
      if (query.limit !== undefined) parameters.set('limit', String(query.limit));
      if (query.cursor !== undefined) parameters.set('cursor', query.cursor);
      const path = `/data/${encodeURIComponent(pathName)}/${encodeURIComponent(String(id))}/history`;
      const { data, meta } = await transport.request('GET', path, parameters);
      return {
        data: data as HistoryVersion<TRecord>[],
        meta: meta as { limit: number; next?: string },
      };
    },
  };
}

/** What a client offers for one entity. */
export interface EntityAccessor<
  TRecord,
  TInput,
  TPatch,
  TWhere,
  TOrder extends string,
  TExpansions = Record<never, never>,
> {
  /**
   * Lists records (filtered, sorted, paged): the page and its `meta`; `expand` embeds the records
   * the named references point at.
   */
  list<K extends keyof TExpansions & string = never, S extends FieldPath<TRecord> = never>(
    query?: ListQuery<TWhere, TOrder> & ExpandOption<K> & FieldsOption<S>,
  ): Promise<{ data: Selected<Expanded<TRecord, TExpansions, K>, S>[]; meta: ListMeta }>;
  /**
   * Reads a record; `EntityApiError` 404 when there is none. `expand` embeds the records the
   * named references point at: `get('p1', { expand: ['category'] })`; `fields` returns only the
   * named fields.
   */
  get<K extends keyof TExpansions & string = never, S extends FieldPath<TRecord> = never>(
    id: string | number,
    options?: ExpandOption<K> & FieldsOption<S> & AsOfOption,
  ): Promise<Selected<Expanded<TRecord, TExpansions, K>, S>>;
  /** Inserts a record, or a list of records in one transaction. */
  insert(record: TInput): Promise<TRecord>;
  insert(records: readonly TInput[]): Promise<TRecord[]>;
  /** Replaces a record (or renames it, or creates it when absent). */
  replace(id: string | number, record: TInput): Promise<TRecord>;
  /** Changes some fields; `null` removes an optional one. */
  patch(id: string | number, fields: TPatch): Promise<TRecord>;
  /** Deletes a record and returns it. */
  remove(id: string | number): Promise<TRecord>;
  /** Counts the records matching the filters. */
  count(query?: {
    readonly where?: TWhere;
    readonly filter?: string;
    readonly deleted?: 'include' | 'only';
  }): Promise<number>;
  /**
   * Upserts (SPEC §12): inserts each record whose key is free; a record whose key exists is
   * replaced, merged or left as it is (`onConflict`), all in one transaction. Resolves to the
   * stored records and `meta` with the counts of `created`, `updated` and `unchanged`.
   */
  upsert(
    record: TInput | TPatch,
    options: UpsertOptions,
  ): Promise<{ data: TRecord; meta: UpsertMeta }>;
  upsert(
    records: readonly (TInput | TPatch)[],
    options: UpsertOptions,
  ): Promise<{ data: TRecord[]; meta: UpsertMeta }>;
  /**
   * Changes the given fields of every record `where` matches (at least one filter), in one
   * transaction, and resolves to the changed records; more than `maxAffected` matches (default
   * 1000): `EntityApiError` 400 and nothing changes.
   */
  patchWhere(where: TWhere, fields: TPatch, options?: BulkOptions): Promise<TRecord[]>;
  /** Deletes every record `where` matches, in one transaction; resolves to them as they were. */
  removeWhere(where: TWhere, options?: BulkOptions): Promise<TRecord[]>;
}

/** How an upsert treats a record whose key exists. */
export interface UpsertOptions {
  readonly onConflict: 'replace' | 'merge' | 'ignore';
}

/** `meta` of an upsert. */
export interface UpsertMeta {
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly lastUpdateTimeUnix: number;
  readonly lastUpdateTimeISO: string;
}

/** Options of a change or delete by filter. */
export interface BulkOptions {
  /** The most records it may act on (default 1000, at most 10000). */
  readonly maxAffected?: number;
}

/** A request of an entity's accessor, before it is sent (alone, or as an operation of a batch). */
interface Call {
  readonly method: string;
  readonly path: string;
  readonly query?: URLSearchParams;
  readonly body?: unknown;
}

/** The requests behind an entity's accessor methods, shared by the accessor and its batch form. */
function callsOf(pathName: string) {
  const collection = `/data/${encodeURIComponent(pathName)}`;
  const record = (id: string | number): string => `${collection}/${encodeURIComponent(String(id))}`;
  const bulk = (where: unknown, options: BulkOptions = {}): URLSearchParams => {
    const query = listParameters({ where });
    if (options.maxAffected !== undefined) query.set('maxAffected', String(options.maxAffected));
    return query;
  };
  return {
    collection,
    record,
    insert: (records: unknown): Call => ({ method: 'POST', path: collection, body: records }),
    upsert: (records: unknown, options: UpsertOptions): Call => ({
      method: 'POST',
      path: collection,
      query: new URLSearchParams({ onConflict: options.onConflict }),
      body: records,
    }),
    get: (id: string | number): Call => ({ method: 'GET', path: record(id) }),
    replace: (id: string | number, value: unknown): Call => ({
      method: 'PUT',
      path: record(id),
      body: value,
    }),
    patch: (id: string | number, fields: unknown): Call => ({
      method: 'PATCH',
      path: record(id),
      body: fields,
    }),
    remove: (id: string | number): Call => ({ method: 'DELETE', path: record(id) }),
    patchWhere: (where: unknown, fields: unknown, options?: BulkOptions): Call => ({
      method: 'PATCH',
      path: collection,
      query: bulk(where, options),
      body: fields,
    }),
    removeWhere: (where: unknown, options?: BulkOptions): Call => ({
      method: 'DELETE',
      path: collection,
      query: bulk(where, options),
    }),
  };
}

/** Sends one call and resolves to the envelope. */
function send(transport: Transport, call: Call): Promise<Envelope> {
  return transport.request(call.method, call.path, call.query, call.body);
}

/** What a client offers besides for an entity with `softDelete` (SPEC §13). */
export interface SoftDeleteAccessor<TRecord> {
  /** Makes a soft-deleted record live again and returns it; `EntityApiError` 404 when none is deleted. */
  restore(id: string | number): Promise<TRecord>;
  /** Removes a record for good, also a soft-deleted one, and returns it. */
  purge(id: string | number): Promise<TRecord>;
}

/** The `restore` and `purge` of the entity with `softDelete` served at `/data/<pathName>`. */
export function softDeleteAccessor<TRecord>(
  transport: Transport,
  pathName: string,
): SoftDeleteAccessor<TRecord> {
  const record = (id: string | number): string =>
    `/data/${encodeURIComponent(pathName)}/${encodeURIComponent(String(id))}`;
  return {
    async restore(id) {
      return (await transport.request('POST', `${record(id)}/restore`)).data as TRecord;
    },
    async purge(id) {
      const query = new URLSearchParams({ purge: 'true' });
      return (await transport.request('DELETE', record(id), query)).data as TRecord;
    },
  };
}

/** The accessor of the entity served at `/data/<pathName>`. */
export function entityAccessor<
  TRecord,
  TInput,
  TPatch,
  TWhere,
  TOrder extends string,
  TExpansions = Record<never, never>,
>(
  transport: Transport,
  pathName: string,
): EntityAccessor<TRecord, TInput, TPatch, TWhere, TOrder, TExpansions> {
  const calls = callsOf(pathName);
  const { collection, record } = calls;
  const insert = async (records: TInput | readonly TInput[]): Promise<TRecord | TRecord[]> =>
    (await send(transport, calls.insert(records))).data as TRecord | TRecord[];
  const upsert = async (
    records: unknown,
    options: UpsertOptions,
  ): Promise<{ data: TRecord | TRecord[]; meta: UpsertMeta }> => {
    const { data, meta } = await send(transport, calls.upsert(records, options));
    return { data: data as TRecord | TRecord[], meta: meta as UpsertMeta };
  };
  return {
    async list<K extends keyof TExpansions & string = never, S extends FieldPath<TRecord> = never>(
      query: ListQuery<TWhere, TOrder> & ExpandOption<K> & FieldsOption<S> = {},
    ) {
      const parameters = listParameters(query);
      readParameters(parameters, query);
      const { data, meta } = await transport.request('GET', collection, parameters);
      return {
        data: data as Selected<Expanded<TRecord, TExpansions, K>, S>[],
        meta: (meta ?? {}) as ListMeta,
      };
    },
    async get<K extends keyof TExpansions & string = never, S extends FieldPath<TRecord> = never>(
      id: string | number,
      options: ExpandOption<K> & FieldsOption<S> & AsOfOption = {},
    ) {
      const parameters = new URLSearchParams();
      readParameters(parameters, options);
      if (options.asOf !== undefined)
        parameters.set(
          'asOf',
          options.asOf instanceof Date ? options.asOf.toISOString() : options.asOf,
        );
      const query = parameters.size === 0 ? undefined : parameters;
      return (await transport.request('GET', record(id), query)).data as Selected<
        Expanded<TRecord, TExpansions, K>,
        S
      >;
    },
    insert: insert as EntityAccessor<
      TRecord,
      TInput,
      TPatch,
      TWhere,
      TOrder,
      TExpansions
    >['insert'],
    async replace(id, value) {
      return (await send(transport, calls.replace(id, value))).data as TRecord;
    },
    async patch(id, fields) {
      return (await send(transport, calls.patch(id, fields))).data as TRecord;
    },
    async remove(id) {
      return (await send(transport, calls.remove(id))).data as TRecord;
    },
    upsert: upsert as EntityAccessor<
      TRecord,
      TInput,
      TPatch,
      TWhere,
      TOrder,
      TExpansions
    >['upsert'],
    async patchWhere(where, fields, options) {
      return (await send(transport, calls.patchWhere(where, fields, options))).data as TRecord[];
    },
    async removeWhere(where, options) {
      return (await send(transport, calls.removeWhere(where, options))).data as TRecord[];
    },
    async count(query = {}) {
      const path = `/entity/${encodeURIComponent(pathName)}/recordCounts`;
      const { data } = await transport.request('GET', path, listParameters(query));
      return isObject(data) && typeof data['count'] === 'number' ? data['count'] : 0;
    },
  };
}

/**
 * One operation of a batch (`client.batch`), made by the batch form of an entity's accessor;
 * `TResult` is the type of its result's `data`.
 */
export interface BatchOperation<TResult> {
  readonly method: string;
  readonly path: string;
  readonly body?: { readonly data: unknown };
  readonly ifMatch?: string;
  /** Never set: carries the type of the operation's result. */
  readonly result?: TResult;
}

/** The result of one operation of a batch: its status, `data`, and `meta` and `etag` when given. */
export interface BatchResult<TData> {
  readonly status: number;
  readonly data: TData;
  readonly meta?: Record<string, unknown>;
  readonly etag?: string;
}

/** The results of a batch's operations, typed per operation. */
export type BatchResults<T extends readonly BatchOperation<unknown>[]> = {
  -readonly [I in keyof T]: T[I] extends BatchOperation<infer R> ? BatchResult<R> : never;
};

/** `If-Match` of a batch operation that writes one record. */
export interface IfMatchOption {
  readonly ifMatch?: string;
}

/** The batch form of an entity's accessor: each method makes an operation instead of a request. */
export interface BatchAccessor<TRecord, TInput, TPatch, TWhere> {
  get(id: string | number): BatchOperation<TRecord>;
  insert(record: TInput): BatchOperation<TRecord>;
  insert(records: readonly TInput[]): BatchOperation<TRecord[]>;
  upsert(record: TInput | TPatch, options: UpsertOptions): BatchOperation<TRecord>;
  upsert(records: readonly (TInput | TPatch)[], options: UpsertOptions): BatchOperation<TRecord[]>;
  replace(id: string | number, record: TInput, options?: IfMatchOption): BatchOperation<TRecord>;
  patch(id: string | number, fields: TPatch, options?: IfMatchOption): BatchOperation<TRecord>;
  remove(id: string | number, options?: IfMatchOption): BatchOperation<TRecord>;
  patchWhere(where: TWhere, fields: TPatch, options?: BulkOptions): BatchOperation<TRecord[]>;
  removeWhere(where: TWhere, options?: BulkOptions): BatchOperation<TRecord[]>;
}

/** The batch form of the accessor of the entity served at `/data/<pathName>`. */
export function batchAccessor<TRecord, TInput, TPatch, TWhere>(
  pathName: string,
): BatchAccessor<TRecord, TInput, TPatch, TWhere> {
  const calls = callsOf(pathName);
  const operation = <R>(call: Call, options: IfMatchOption = {}): BatchOperation<R> => {
    const search = call.query === undefined ? '' : call.query.toString();
    return {
      method: call.method,
      path: search === '' ? call.path : `${call.path}?${search}`,
      ...(call.body === undefined ? {} : { body: { data: call.body } }),
      ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
    };
  };
  return {
    get: (id) => operation(calls.get(id)),
    insert: ((records: unknown) => operation(calls.insert(records))) as BatchAccessor<
      TRecord,
      TInput,
      TPatch,
      TWhere
    >['insert'],
    upsert: ((records: unknown, options: UpsertOptions) =>
      operation(calls.upsert(records, options))) as BatchAccessor<
      TRecord,
      TInput,
      TPatch,
      TWhere
    >['upsert'],
    replace: (id, value, options) => operation(calls.replace(id, value), options),
    patch: (id, fields, options) => operation(calls.patch(id, fields), options),
    remove: (id, options) => operation(calls.remove(id), options),
    patchWhere: (where, fields, options) => operation(calls.patchWhere(where, fields, options)),
    removeWhere: (where, options) => operation(calls.removeWhere(where, options)),
  };
}

/** `client.batch`: builds operations with the batch forms of the accessors (`B`) and runs them. */
export type BatchRunner<B> = <const T extends readonly BatchOperation<unknown>[]>(
  build: (b: B) => T,
) => Promise<BatchResults<T>>;

/**
 * The `batch` of a client: `POST /batch` with the operations `build` returns, in one transaction
 * (SPEC §12). Resolves to their results in order; a failing operation rejects with an
 * `EntityApiError` whose `operation` is its index, and nothing is written.
 */
export function batchRunner<B>(transport: Transport, builder: B): BatchRunner<B> {
  return async (build) => {
    const operations = build(builder);
    const { data } = await transport.request(
      'POST',
      '/batch',
      undefined,
      { operations },
      { bare: true },
    );
    return data as BatchResults<typeof operations>;
  };
}

/** The query string of a list: filters as `field=value` / `field[OP]=value`, then paging. */
export function listParameters(query: ListQuery<unknown, string>): URLSearchParams {
  const parameters = new URLSearchParams();
  const add = (name: string, value: unknown): void => {
    for (const item of Array.isArray(value) ? value : [value])
      if (item !== undefined) parameters.append(name, String(item));
  };
  if (isObject(query.where)) {
    for (const [field, filter] of Object.entries(query.where)) {
      if (filter === undefined) continue;
      if (isObject(filter)) {
        for (const [operator, value] of Object.entries(filter))
          add(operator === 'EQUALS' ? field : `${field}[${operator}]`, value);
      } else add(field, filter);
    }
  }
  if (query.filter !== undefined) parameters.set('filter', query.filter);
  if (query.q !== undefined) parameters.set('q', query.q);
  if (query.count === true) parameters.set('count', 'true');
  if (query.orderBy !== undefined && query.orderBy.length > 0)
    parameters.set('orderBy', query.orderBy.join(','));
  if (query.limit !== undefined) parameters.set('limit', String(query.limit));
  if (query.start !== undefined) parameters.set('start', String(query.start));
  if (query.cursor !== undefined) parameters.set('cursor', query.cursor);
  if (query.deleted !== undefined) parameters.set('deleted', query.deleted);
  return parameters;
}

/** `expand` and `fields` of a read, when given. */
function readParameters(
  parameters: URLSearchParams,
  options: ExpandOption<string> & FieldsOption<string>,
): void {
  if (options.expand !== undefined && options.expand.length > 0)
    parameters.set('expand', options.expand.join(','));
  if (options.fields !== undefined && options.fields.length > 0)
    parameters.set('fields', options.fields.join(','));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The later of two WAL positions (`16/B374D848`); a malformed one loses. */
function laterToken(current: string | undefined, next: string): string | undefined {
  const value = (token: string): bigint | undefined => {
    const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(token);
    return match === null
      ? undefined
      : (BigInt(`0x${match[1]!}`) << 32n) | BigInt(`0x${match[2]!}`);
  };
  const nextValue = value(next);
  if (nextValue === undefined) return current;
  if (current === undefined) return next;
  return nextValue > (value(current) ?? 0n) ? next : current;
}
