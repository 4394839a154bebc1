/**
 * The fast path of GET `/data/{entity}/{id}`, the most frequent request of most services: it is
 * answered straight from Node's request listener, without Koa's context, middleware chain and
 * routers, with the same status, headers and body (byte for byte) as the Koa pipeline would send.
 *
 * It answers only what it can answer exactly: the record (200) and the 304 of a matching
 * `If-None-Match`, also with embedded records (`expand=`, SPEC §11; the parsed expansion of each
 * query string is kept, and on SQLite without access rules a forward expansion through scalar
 * references is read by key in the request's tick, like the record). Everything else — a missing or someone else's record, bad credentials, a
 * refused method, a storage error, a path it does not recognize — is handed to the Koa pipeline
 * untouched, which reads again and answers as always (so a 404 costs a second read). Requests of
 * an entity with middleware in its hooks, paths a custom route matches, HEAD, and every request
 * while the log level is `debug` (which logs each request) go through Koa from the start.
 *
 * In a service without access rules, it also answers list pages (GET `/data/{entity}` with
 * filters, order, paging, top-level `fields=` and `count=true`) when the driver reads them
 * synchronously (SQLite: `listTextsNow`, for what runs on the main connection), and counts (GET
 * `/entity/{entity}/recordCounts`): synchronously when the driver can (SQLite: `countNow`), else
 * once the count comes back, an error as the pipeline answers it; with the pipeline's answer byte
 * for byte. A 400, `expand`, `deleted=`, a dotted `fields=` path, a list the driver runs in a
 * reader thread, an open transaction: the pipeline answers, as always.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import {
  authorize,
  ownerScope,
  type AccessRules,
  type OwnerScope,
  type Principal,
} from '../auth/access.js';
import type { Authenticator } from '../auth/credentials.js';
import { owns } from '../auth/owner.js';
import type { DataContext } from '../data-context.js';
import type { EntityDefinition } from '../definition.js';
import type { CountQuery, KeyValues, ListQuery, StorageDriver, StoredRecord } from '../driver.js';
import { recordBodyJson, recordBodyOfJson } from '../envelope.js';
import {
  authorizeExpand,
  expandedEntityTag,
  expandRecordNow,
  expandRecords,
  parseExpand,
  type ExpandPlan,
} from '../expand.js';
import { listQueryOf, referenceTargets, textPageBody, topLevelFields } from '../listing.js';
import { parseFields } from '../listing/fields.js';
import { parseListRequest, parseQuery, type ListRequest } from '../listing/query.js';
import type { Logger } from '../logger.js';
import { entityTag, notModified } from '../operations.js';
import { isReadAfterToken, withReadAfter } from '../read-after.js';
import type { RestConfig } from '../rest-config.js';
import { CorsPolicy, EXPOSED_HEADERS } from './cors.js';
import { COMMON_HEADERS, errorAnswer, type RequestTracker } from './errors.js';
import {
  DATA_PREFIX,
  decodeRecordId,
  entitySegment,
  keyOfId,
  queryMayHold,
  rawRecordId,
} from './paths.js';

/** A request listener as `app.callback()` returns it. */
export type RequestListener = ReturnType<Koa['callback']>;

/** An entity whose GET by key the fast path may answer. */
export interface FastGetEntity {
  readonly definition: EntityDefinition<object>;
  /** Its access rules, when it has some. */
  readonly access?: AccessRules;
}

/** What the fast path needs of the service; see `createService`. */
export interface FastGetOptions {
  readonly driver: StorageDriver;
  readonly logger: Logger;
  readonly tracker: RequestTracker;
  /** The entities it serves, by the lower-case path segment (`product` of `/data/product/p1`). */
  readonly entities: ReadonlyMap<string, FastGetEntity>;
  /** Set when the service has access rules: every request's credentials are checked. */
  readonly auth?: Authenticator;
  /** The CORS origins (`*` for any), when CORS is on. */
  readonly corsOrigins?: readonly string[];
  /** Whether a custom route of the service matches GET on this path (it then goes first). */
  readonly customRoute?: (path: string) => boolean;
  /**
   * What expansions read through (`expand=`, SPEC §11): the service's data context. Without it,
   * a GET by key with `expand` takes the pipeline.
   */
  readonly expand?: DataContext;
  /**
   * The entities whose list pages (GET `/data/{entity}`) the fast path may answer, by path
   * segment, and the data context they are read through; absent (no list on the fast path) when
   * the service has access rules.
   */
  readonly lists?: {
    readonly entities: ReadonlyMap<string, FastListEntity>;
    readonly data: DataContext;
  };
}

/** An entity whose list pages the fast path may answer. */
export interface FastListEntity {
  readonly definition: EntityDefinition<object>;
  readonly config: RestConfig;
}

/**
 * A list request the fast path answers, as parsed once per query string (see `pages`): the
 * request, its driver query and its top-level `fields=` selection.
 */
interface ListPlan {
  readonly request: ListRequest;
  readonly query: ListQuery;
  readonly fields: readonly string[] | undefined;
}

/** Most parsed expansions kept (by entity and query string); the cache starts over past it. */
const MAX_PLANS = 256;

/** Characters after which Koa's URL parsing (parseurl) would read the path (or query) differently. */
const UNUSUAL_PATH = /[\t\n\f\r #\u00a0\ufeff]/;
/** The path of a count is `/entity/{entity}/recordCounts`. */
const COUNTS_PREFIX = '/entity/';
const COUNTS_SUFFIX = '/recordCounts';
/** What the listener returns for a request it answered synchronously. */
const DONE: Promise<void> = Promise.resolve();

/** The request listener that answers GET by key itself and hands everything else to `next`. */
export function fastGetListener(options: FastGetOptions, next: RequestListener): RequestListener {
  const fast = new FastGet(options, next);
  return (req, res) =>
    // HTTP/2 requests (Koa also serves them) always take the Koa pipeline.
    req.httpVersionMajor === 1
      ? fast.handle(req as IncomingMessage, res as ServerResponse)
      : next(req, res);
}

class FastGet {
  /** The CORS policy, when CORS is on. */
  private readonly cors: CorsPolicy | undefined;
  /**
   * The expansion of each query string seen (by entity): the plan, `undefined` when the query
   * asks for none, `false` when the pipeline answers it (a 400, or an expansion refused).
   */
  private readonly plans = new Map<string, ExpandPlan | undefined | false>();
  /**
   * The parsed list request of each query string seen (by entity), or `false` when the pipeline
   * answers it (a 400, `expand`, `deleted=`, a nested selection, a list the driver
   * does not read synchronously). Queries with a cursor are parsed every time, not kept.
   */
  private readonly pages = new Map<string, ListPlan | false>();
  /** The query of each count's query string seen (by entity), or `false` for the pipeline. */
  private readonly counts = new Map<string, CountQuery | false>();
  /** The service's cursor key once known (the first list asks for it and takes the pipeline). */
  private cursorKey: string | undefined;

  constructor(
    private readonly options: FastGetOptions,
    private readonly next: RequestListener,
  ) {
    const origins = options.corsOrigins;
    this.cors = origins === undefined || origins.length === 0 ? undefined : new CorsPolicy(origins);
    if (options.lists !== undefined) this.fetchCursorKey(options.lists.data);
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const lists = this.options.lists;
    if (lists !== undefined) {
      if (this.page(req, res, lists)) return DONE;
      const counted = this.count(req, res, lists);
      if (counted !== false) return counted;
    }
    let target: Target | undefined;
    try {
      target = this.target(req);
    } catch {
      target = undefined; // never let a request listener throw: the pipeline answers
    }
    if (target === undefined) return this.next(req, res);
    const driver = this.options.driver;
    const token = req.headers['x-read-after'];
    if (token !== undefined && driver.readAfter === true) {
      // A read after a write (read replicas): served in the token's context; a malformed token
      // gets the pipeline's 400.
      if (typeof token !== 'string' || !isReadAfterToken(token)) return this.next(req, res);
      return withReadAfter({ requested: token, written: undefined }, () =>
        this.serve(req, res, target),
      );
    }
    // Without credentials to check, a synchronous driver lets the answer go out in this tick,
    // which saves Node's HTTP server more than the read itself costs.
    if (
      this.options.auth !== undefined ||
      driver.getNow === undefined ||
      (target.plan !== undefined && !target.plan.byKey)
    )
      return this.serve(req, res, target);
    let stored: StoredRecord | undefined;
    try {
      stored = driver.getNow(target.entity.definition.table, target.key);
    } catch {
      return this.next(req, res); // the pipeline answers (and logs) the storage error
    }
    return this.answer(req, res, target, stored, undefined, undefined) ? DONE : this.next(req, res);
  }

  /**
   * The entity and key of a GET by key the fast path can take, else `undefined`. The path is read
   * as the routers read it (http/paths.ts); it applies when the entity's router has the GET route
   * and no middleware of its hooks (see `FastGetOptions.entities`), no custom route matches, the
   * path holds nothing Koa's URL parsing would read differently, and the log level is not `debug`.
   */
  private target(req: IncomingMessage): Target | undefined {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(DATA_PREFIX)) return undefined;
    const query = url.indexOf('?');
    // A selection (`fields=`) is the operation's to answer, as is a query with escapes (a name
    // spelled `%66ields` is still `fields`).
    if (query >= 0 && (url.includes('fields', query) || url.includes('%', query))) return undefined;
    const path = query < 0 ? url : url.slice(0, query);
    const entity = this.options.entities.get(entitySegment(path).toLowerCase());
    if (entity === undefined || UNUSUAL_PATH.test(path)) return undefined;
    // History and `asOf` reads (SPEC §13) are the operation's to answer.
    if (
      entity.definition.table.history === true &&
      (path.endsWith('/history') ||
        path.endsWith('/history/') ||
        (query >= 0 && url.includes('asOf', query)))
    )
      return undefined;
    if (this.options.logger.isLevelEnabled('debug')) return undefined;
    if (this.options.customRoute?.(path) === true) return undefined;
    const raw = rawRecordId(path);
    const id = raw === '' ? undefined : decodeRecordId(raw);
    if (id === undefined) return undefined;
    let key: KeyValues | undefined;
    try {
      key = keyOfId(entity.definition, id);
    } catch {
      return undefined;
    }
    if (key === undefined) return undefined;
    if (query < 0 || !url.includes('expand', query)) return { entity, key };
    // The query string as Koa reads it, or the pipeline answers.
    const querystring = url.slice(query + 1);
    if (UNUSUAL_PATH.test(querystring)) return undefined;
    const plan = this.planOf(entity, querystring);
    if (plan === false) return undefined;
    return plan === undefined ? { entity, key } : { entity, key, plan };
  }

  /**
   * The expansion the query string asks for on `entity` (kept, see `plans`): `undefined` for none,
   * `false` when the pipeline must answer (a 400 naming the path, or, without access rules, an
   * expanded entity whose REST configuration refuses the read).
   */
  private planOf(entity: FastGetEntity, querystring: string): ExpandPlan | undefined | false {
    const data = this.options.expand;
    if (data === undefined) return false;
    const cacheKey = `${entity.definition.name}?${querystring}`;
    const cached = this.plans.get(cacheKey);
    if (cached !== undefined || this.plans.has(cacheKey)) return cached;
    let plan: ExpandPlan | undefined | false;
    try {
      plan = parseExpand(entity.definition, new URLSearchParams(querystring), data);
      // Without access rules, what may be expanded depends on the REST configuration alone.
      if (plan !== undefined && this.options.auth === undefined) authorizeExpand(plan, undefined);
    } catch {
      plan = false;
    }
    if (this.plans.size >= MAX_PLANS) this.plans.clear();
    this.plans.set(cacheKey, plan);
    return plan;
  }

  /**
   * Answers a list page (GET `/data/{entity}` of an entity in `lists`) in this tick when it can:
   * the query parses, asks for nothing but filters, order, paging and top-level `fields=`, and
   * the driver reads the list synchronously (`listTextsNow`). `false` when it did not answer:
   * the request then goes on (to GET by key, which leaves a collection path to the pipeline).
   */
  private page(
    req: IncomingMessage,
    res: ServerResponse,
    lists: NonNullable<FastGetOptions['lists']>,
  ): boolean {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(DATA_PREFIX)) return false;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (path.indexOf('/', DATA_PREFIX.length) >= 0) return false; // a record, or a trailing `/`
    const entity = lists.entities.get(entitySegment(path).toLowerCase());
    if (entity === undefined || UNUSUAL_PATH.test(url)) return false;
    const driver = this.options.driver;
    if (driver.listTextsNow === undefined || driver.readAfter === true) return false;
    if (this.options.logger.isLevelEnabled('debug')) return false;
    if (this.options.customRoute?.(path) === true) return false;
    const cursorKey = this.readyCursorKey(lists.data);
    if (cursorKey === undefined) return false;
    const querystring = query < 0 ? '' : url.slice(query + 1);
    const plan = this.listPlan(entity, querystring, lists.data, cursorKey);
    if (plan === false) return false;
    const { definition } = entity;
    return this.answerWith(req, res, () => {
      const pageSize = plan.request.limit ?? plan.request.cap;
      const texts = driver.listTextsNow?.(
        definition.table,
        plan.query,
        pageSize - 1,
        plan.fields,
        plan.request.count,
      );
      if (texts === undefined) {
        // Read elsewhere (a reader thread): this query string is the pipeline's from now on.
        if (plan.request.after === undefined) this.keepPage(entity, querystring, false);
        return undefined;
      }
      return textPageBody(definition, plan.request, texts, cursorKey);
    });
  }

  /**
   * Answers a count (GET `/entity/{entity}/recordCounts` of an entity in `lists`): in this tick
   * when the driver counts synchronously (`countNow`), else once the count it runs elsewhere (a
   * reader thread, the database server) comes back. `false` when it does not answer (the
   * pipeline does).
   */
  private count(
    req: IncomingMessage,
    res: ServerResponse,
    lists: NonNullable<FastGetOptions['lists']>,
  ): Promise<void> | false {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(COUNTS_PREFIX)) return false;
    const driver = this.options.driver;
    if (driver.readAfter === true) return false;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const slash = path.indexOf('/', COUNTS_PREFIX.length);
    if (slash < 0 || path.slice(slash) !== COUNTS_SUFFIX) return false;
    const segment = path.slice(COUNTS_PREFIX.length, slash);
    const entity = lists.entities.get(segment.toLowerCase());
    if (entity === undefined || segment.includes('%') || UNUSUAL_PATH.test(url)) return false;
    if (this.options.logger.isLevelEnabled('debug')) return false;
    if (this.options.customRoute?.(path) === true) return false;
    const cursorKey = this.readyCursorKey(lists.data);
    if (cursorKey === undefined) return false;
    const querystring = query < 0 ? '' : url.slice(query + 1);
    const plan = this.countPlan(entity, querystring, lists.data, cursorKey);
    if (plan === false) return false;
    const table = entity.definition.table;
    let now: number | undefined;
    if (driver.countNow !== undefined) {
      try {
        now = driver.countNow(table, plan);
      } catch {
        return false; // an open transaction or a storage error: the pipeline answers (and logs)
      }
    }
    if (now === undefined)
      return this.countElsewhere(req, res, path, () => driver.count(table, plan));
    const counted = now;
    return this.answerWith(req, res, () => countBody(counted)) ? DONE : false;
  }

  /**
   * Answers the count the driver runs elsewhere once it comes back, or its error as the pipeline
   * would answer and log it (`errorAnswer`): the count has run, so it is not handed to the
   * pipeline to run again (a count over its time budget would take twice the budget).
   */
  private async countElsewhere(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    counting: () => Promise<number>,
  ): Promise<void> {
    const { tracker, logger } = this.options;
    const requestId = tracker.requestId(header(req, 'x-request-id'));
    let status = 200;
    let body: string;
    let extra: Readonly<Record<string, string>> = {};
    try {
      body = countBody(await counting());
    } catch (error) {
      const answer = errorAnswer(error, logger, tracker, { requestId, method: 'GET', path });
      status = answer.status;
      extra = answer.headers;
      body = JSON.stringify(answer.body);
    }
    const headers = this.commonHeaders(req, requestId);
    for (const [name, value] of Object.entries(extra)) headers[name] = value;
    headers['Content-Type'] = 'application/json; charset=utf-8';
    headers['Content-Length'] = Buffer.byteLength(body);
    if (status < 500) tracker.answered();
    res.writeHead(status, headers);
    res.end(body);
  }

  /**
   * Sends the JSON body `read` gives as a 200 in this tick; `false` (nothing sent) when it gives
   * none or throws (a storage error or an open transaction: the pipeline answers).
   */
  private answerWith(
    req: IncomingMessage,
    res: ServerResponse,
    read: () => string | undefined,
  ): boolean {
    let body: string | undefined;
    try {
      body = read();
      if (body === undefined) return false;
      res.writeHead(200, {
        ...this.commonHeaders(req),
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
    } catch {
      return false;
    }
    this.options.tracker.answered();
    res.end(body);
    return true;
  }

  /** The cursor key once known; until then asks for it and gives `undefined` (the pipeline's). */
  private readyCursorKey(data: DataContext): string | undefined {
    if (this.cursorKey === undefined) this.fetchCursorKey(data);
    return this.cursorKey;
  }

  /** The count query of a query string (kept, see `counts`), or `false` for the pipeline. */
  private countPlan(
    entity: FastListEntity,
    querystring: string,
    data: DataContext,
    cursorKey: string,
  ): CountQuery | false {
    const key = `${entity.definition.name}?${querystring}`;
    const kept = this.counts.get(key);
    if (kept !== undefined) return kept;
    let plan: CountQuery | false = false;
    try {
      const { definition, config } = entity;
      // The whole query string is checked as for the list (countRecords).
      const { filters, expression, deleted, search } = parseQuery(
        definition,
        config,
        querystring,
        cursorKey,
        referenceTargets(definition, data),
      );
      // A search (`q=`) is counted by the pipeline, which joins the search index.
      if (
        config.allowedMethods.includes('GET_LIST') &&
        deleted === undefined &&
        search === undefined
      )
        plan = { filters, ...(expression === undefined ? {} : { expression }) };
    } catch {
      plan = false; // a 400 is the pipeline's to answer
    }
    if (this.counts.size >= MAX_PLANS) this.counts.clear();
    this.counts.set(key, plan);
    return plan;
  }

  /** Asks for the service's cursor key, kept once known (see `cursorKey`). */
  private fetchCursorKey(data: DataContext): void {
    let key: Promise<string> | undefined;
    try {
      key = data.cursorKey?.();
    } catch {
      return; // the storage is not there yet: the next list asks again
    }
    key?.then(
      (value) => {
        this.cursorKey = value;
      },
      () => undefined, // the storage is not there yet: the next list asks again
    );
  }

  /** The parsed list request of a query string (kept, see `pages`), or `false` for the pipeline. */
  private listPlan(
    entity: FastListEntity,
    querystring: string,
    data: DataContext,
    cursorKey: string,
  ): ListPlan | false {
    const cursor = queryMayHold(querystring, 'cursor');
    if (!cursor) {
      const kept = this.pages.get(`${entity.definition.name}?${querystring}`);
      if (kept !== undefined) return kept;
    }
    let plan: ListPlan | false = false;
    try {
      const { definition, config } = entity;
      if (!config.allowedMethods.includes('GET_LIST') || queryMayHold(querystring, 'expand'))
        throw new Error('the pipeline answers');
      const request = parseListRequest(
        definition,
        config,
        querystring,
        data.maxPageSize,
        cursorKey,
        referenceTargets(definition, data),
      );
      const selection =
        querystring === ''
          ? undefined
          : parseFields(definition, new URLSearchParams(querystring), undefined);
      const fields = selection === undefined ? undefined : topLevelFields(selection);
      if (
        request.deleted === undefined &&
        // A search's relevance order pages by signed offsets: the pipeline writes its cursors.
        request.search === undefined &&
        (selection === undefined || fields !== undefined)
      )
        plan = { request, query: listQueryOf(request, undefined), fields };
    } catch {
      plan = false; // a 400 (or anything else) is the pipeline's to answer
    }
    if (!cursor) this.keepPage(entity, querystring, plan);
    return plan;
  }

  private keepPage(entity: FastListEntity, querystring: string, plan: ListPlan | false): void {
    if (this.pages.size >= MAX_PLANS) this.pages.clear();
    this.pages.set(`${entity.definition.name}?${querystring}`, plan);
  }

  /**
   * The headers every answer starts with, in the order errorMiddleware and the CORS middleware
   * set them.
   */
  private commonHeaders(
    req: IncomingMessage,
    requestId = this.options.tracker.requestId(header(req, 'x-request-id')),
  ): Record<string, string | number> {
    const headers: Record<string, string | number> = { 'X-Request-Id': requestId };
    for (const [name, value] of COMMON_HEADERS) headers[name] = value;
    if (this.cors !== undefined) {
      headers['Vary'] = 'Origin';
      const allowOrigin = this.cors.allowOrigin(header(req, 'origin'));
      if (allowOrigin !== undefined) {
        headers['Access-Control-Allow-Origin'] = allowOrigin;
        headers['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
      }
    }
    return headers;
  }

  /** Serves a GET by key after checking credentials or reading asynchronously. */
  private async serve(req: IncomingMessage, res: ServerResponse, target: Target): Promise<void> {
    let stored: StoredRecord | undefined;
    let owner: OwnerScope | undefined;
    let expanded: Record<string, unknown> | undefined;
    try {
      const { definition, access } = target.entity;
      const { auth, expand } = this.options;
      const plan = target.plan;
      let principal: Principal | undefined;
      if (auth !== undefined) {
        principal = await auth.authenticate(header(req, 'authorization'), header(req, 'x-api-key'));
        if (access !== undefined) {
          authorize(access, 'GET_BYID', definition.name, principal);
          owner = ownerScope(access, principal);
        }
        if (plan !== undefined) authorizeExpand(plan, principal);
      }
      stored = await this.options.driver.get(definition.table, target.key);
      if (plan !== undefined && expand !== undefined && stored !== undefined) {
        if (owns(definition, owner, stored.record)) {
          expanded = { ...stored.record };
          await expandRecords(expand, definition, [expanded], plan, principal);
        }
      }
    } catch {
      // Refused credentials or method, an unavailable storage, …: the pipeline answers (and logs).
      return this.next(req, res);
    }
    if (!this.answer(req, res, target, stored, owner, expanded)) return this.next(req, res);
  }

  /**
   * Sends the record (or the 304) as the pipeline would; `false` when the pipeline must answer: no
   * record, someone else's (owner rule), or anything failing before the head was written.
   */
  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    stored: StoredRecord | undefined,
    owner: OwnerScope | undefined,
    expanded: Record<string, unknown> | undefined,
  ): boolean {
    if (stored === undefined || !owns(target.entity.definition, owner, stored.record)) return false;
    let body: string | undefined;
    try {
      // The record as sent: with `expand`, its expanded copy (read now when not read yet), whose
      // JSON text the entity tag covers.
      let json: string | undefined;
      let etag: string;
      if (target.plan === undefined) {
        etag = entityTag(stored.version);
      } else {
        let record = expanded;
        if (record === undefined) {
          const getNow = this.options.driver.getNow;
          if (getNow === undefined) return false;
          record = { ...stored.record };
          expandRecordNow(getNow, record, target.plan, undefined);
        }
        json = JSON.stringify(record);
        etag = expandedEntityTag(stored.version, json);
      }
      // Same header names and order as errorMiddleware, the CORS middleware and getRecord set.
      const headers = this.commonHeaders(req);
      headers['ETag'] = etag;
      const unchanged = notModified(header(req, 'if-none-match'), etag);
      if (!unchanged) {
        body =
          json === undefined
            ? recordBodyJson(stored.record, stored.updatedAt)
            : recordBodyOfJson(json, stored.updatedAt);
        headers['Content-Type'] = 'application/json; charset=utf-8';
        headers['Content-Length'] = Buffer.byteLength(body);
      }
      // Last in the try: until the head is written, the pipeline can still answer instead.
      res.writeHead(unchanged ? 304 : 200, headers);
    } catch {
      return false;
    }
    this.options.tracker.answered();
    res.end(body);
    return true;
  }
}

interface Target {
  readonly entity: FastGetEntity;
  readonly key: KeyValues;
  /** What the query asks to expand, if anything. */
  readonly plan?: ExpandPlan;
}

/** The body of a count, as `successBody({ count })` serializes. */
function countBody(count: number): string {
  return `{"status":"success","data":{"count":${count}}}`;
}

/** A request header as Koa's `ctx.get` reads it: `''` when absent. */
function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return typeof value === 'string' ? value : '';
}
