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
  OneOrMany<T> | { readonly EQUALS?: OneOrMany<T>; readonly NOT_EQUALS?: OneOrMany<T> };

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
    };

/** Filters of an ARRAY of scalars: whether it has an element equal to the value. */
export interface MembershipFilter<T> {
  readonly CONTAINS?: OneOrMany<T>;
  readonly NOT_CONTAINS?: OneOrMany<T>;
}

/** A list request: filters, sort keys (`-field` descending), paging. */
export interface ListQuery<TWhere, TOrder extends string> {
  readonly where?: TWhere;
  readonly orderBy?: readonly TOrder[];
  readonly limit?: number;
  readonly start?: number;
  /** `meta.next` of the previous page. */
  readonly cursor?: string;
}

/** `meta` of a list: `start` (offset paging), `limit` (when a limit applies), `next` (a cursor). */
export interface ListMeta {
  readonly start?: number;
  readonly limit?: number;
  readonly next?: string;
}

/** One validation problem of a request, as the service reports it. */
export interface ApiIssue {
  readonly path: readonly (string | number)[];
  readonly code: string;
  readonly message: string;
}

/** An error answer of the service: its HTTP status, reason and validation issues. */
export class EntityApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly issues: readonly ApiIssue[] = [],
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
  request(method: string, path: string, query?: URLSearchParams, body?: unknown): Promise<Envelope>;
}

/** A success answer of the service. */
export interface Envelope {
  readonly data: unknown;
  readonly meta?: unknown;
}

/** The transport of a client; throws `EntityApiError` for an error answer. */
export function createTransport(options: ClientOptions): Transport {
  const base = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? globalThis.fetch.bind(globalThis);
  return {
    async request(method, path, query, body) {
      const given = options.headers;
      const headers = new Headers(typeof given === 'function' ? await given() : given);
      headers.set('Accept', 'application/json');
      if (body !== undefined) headers.set('Content-Type', 'application/json');
      const search = query === undefined || query.toString() === '' ? '' : `?${query.toString()}`;
      const response = await send(`${base}${path}${search}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }),
      });
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
      );
    },
  };
}

/** What a client offers for one entity. */
export interface EntityAccessor<TRecord, TInput, TPatch, TWhere, TOrder extends string> {
  /** Lists records (filtered, sorted, paged): the page and its `meta`. */
  list(query?: ListQuery<TWhere, TOrder>): Promise<{ data: TRecord[]; meta: ListMeta }>;
  /** Reads a record; `EntityApiError` 404 when there is none. */
  get(id: string | number): Promise<TRecord>;
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
  count(query?: { readonly where?: TWhere }): Promise<number>;
}

/** The accessor of the entity served at `/data/<pathName>`. */
export function entityAccessor<TRecord, TInput, TPatch, TWhere, TOrder extends string>(
  transport: Transport,
  pathName: string,
): EntityAccessor<TRecord, TInput, TPatch, TWhere, TOrder> {
  const collection = `/data/${encodeURIComponent(pathName)}`;
  const record = (id: string | number): string => `${collection}/${encodeURIComponent(String(id))}`;
  const insert = async (records: TInput | readonly TInput[]): Promise<TRecord | TRecord[]> =>
    (await transport.request('POST', collection, undefined, records)).data as TRecord | TRecord[];
  return {
    async list(query = {}) {
      const { data, meta } = await transport.request('GET', collection, listParameters(query));
      return { data: data as TRecord[], meta: (meta ?? {}) as ListMeta };
    },
    async get(id) {
      return (await transport.request('GET', record(id))).data as TRecord;
    },
    insert: insert as EntityAccessor<TRecord, TInput, TPatch, TWhere, TOrder>['insert'],
    async replace(id, value) {
      return (await transport.request('PUT', record(id), undefined, value)).data as TRecord;
    },
    async patch(id, fields) {
      return (await transport.request('PATCH', record(id), undefined, fields)).data as TRecord;
    },
    async remove(id) {
      return (await transport.request('DELETE', record(id))).data as TRecord;
    },
    async count(query = {}) {
      const path = `/entity/${encodeURIComponent(pathName)}/recordCounts`;
      const { data } = await transport.request('GET', path, listParameters(query));
      return isObject(data) && typeof data['count'] === 'number' ? data['count'] : 0;
    },
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
  if (query.orderBy !== undefined && query.orderBy.length > 0)
    parameters.set('orderBy', query.orderBy.join(','));
  if (query.limit !== undefined) parameters.set('limit', String(query.limit));
  if (query.start !== undefined) parameters.set('start', String(query.start));
  if (query.cursor !== undefined) parameters.set('cursor', query.cursor);
  return parameters;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
