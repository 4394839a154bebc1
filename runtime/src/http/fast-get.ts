/**
 * The fast path of GET `/data/{entity}/{id}`, the most frequent request of most services: it is
 * answered straight from Node's request listener, without Koa's context, middleware chain and
 * routers, with the same status, headers and body (byte for byte) as the Koa pipeline would send.
 *
 * It answers only what it can answer exactly: the record (200) and the 304 of a matching
 * `If-None-Match`. Everything else — a missing or someone else's record, bad credentials, a
 * refused method, a storage error, a path it does not recognize — is handed to the Koa pipeline
 * untouched, which reads again and answers as always (so a 404 costs a second read). Requests of
 * an entity with middleware in its hooks, paths a custom route matches, HEAD, and every request
 * while the log level is `debug` (which logs each request) go through Koa from the start.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { authorize, ownerScope, type AccessRules, type OwnerScope } from '../auth/access.js';
import type { Authenticator } from '../auth/credentials.js';
import { owns } from '../auth/owner.js';
import type { EntityDefinition } from '../definition.js';
import type { KeyValues, StorageDriver, StoredRecord } from '../driver.js';
import { recordBodyJson } from '../envelope.js';
import type { Logger } from '../logger.js';
import { entityTag, tagListMatches } from '../operations.js';
import type { RequestTracker } from './errors.js';

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
}

const DATA_PREFIX = '/data/';
/** Characters after which Koa's URL parsing (parseurl) would read the path differently. */
const UNUSUAL_PATH = /[\t\n\f\r #\u00a0\ufeff]/;
/** What the listener returns for a request it answered synchronously. */
const DONE: Promise<void> = Promise.resolve();
/** The same headers as the CORS middleware (cors.ts) sends to an allowed origin. */
const EXPOSED_HEADERS = 'ETag, X-Request-Id, Allow';

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
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string> | undefined;

  constructor(
    private readonly options: FastGetOptions,
    private readonly next: RequestListener,
  ) {
    const origins = options.corsOrigins;
    this.anyOrigin = origins?.includes('*') === true;
    this.origins =
      origins === undefined || origins.length === 0
        ? undefined
        : new Set(origins.map((origin) => origin.replace(/\/+$/, '')));
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let target: Target | undefined;
    try {
      target = this.target(req);
    } catch {
      target = undefined; // never let a request listener throw: the pipeline answers
    }
    if (target === undefined) return this.next(req, res);
    const driver = this.options.driver;
    // Without credentials to check, a synchronous driver lets the answer go out in this tick,
    // which saves Node's HTTP server more than the read itself costs.
    if (this.options.auth !== undefined || driver.getNow === undefined)
      return this.serve(req, res, target);
    let stored: StoredRecord | undefined;
    try {
      stored = driver.getNow(target.entity.definition.table, target.key);
    } catch {
      return this.next(req, res); // the pipeline answers (and logs) the storage error
    }
    return this.answer(req, res, target.entity, stored, undefined) ? DONE : this.next(req, res);
  }

  /** The entity and key of a GET by key the fast path can take, else `undefined`. */
  private target(req: IncomingMessage): Target | undefined {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(DATA_PREFIX)) return undefined;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const slash = path.indexOf('/', DATA_PREFIX.length);
    if (slash < 0) return undefined;
    const entity = this.options.entities.get(path.slice(DATA_PREFIX.length, slash).toLowerCase());
    if (entity === undefined || UNUSUAL_PATH.test(path)) return undefined;
    if (this.options.logger.isLevelEnabled('debug')) return undefined;
    if (this.options.customRoute?.(path) === true) return undefined;
    // As `recordId` (routes.ts) reads it: the rest of the path, without a trailing slash.
    let raw = path.slice(slash + 1);
    if (raw.endsWith('/')) raw = raw.slice(0, -1);
    if (raw === '') return undefined;
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    const { definition } = entity;
    if (definition.singleRecordId !== undefined && id !== definition.singleRecordId)
      return undefined;
    let key: KeyValues | undefined;
    try {
      key = definition.parseId(id);
    } catch {
      return undefined;
    }
    return key === undefined ? undefined : { entity, key };
  }

  /** Serves a GET by key after checking credentials or reading asynchronously. */
  private async serve(req: IncomingMessage, res: ServerResponse, target: Target): Promise<void> {
    let stored: StoredRecord | undefined;
    let owner: OwnerScope | undefined;
    try {
      const { definition, access } = target.entity;
      const auth = this.options.auth;
      if (auth !== undefined) {
        const principal = await auth.authenticate(
          header(req, 'authorization'),
          header(req, 'x-api-key'),
        );
        if (access !== undefined) {
          authorize(access, 'GET_BYID', definition.name, principal);
          owner = ownerScope(access, principal);
        }
      }
      stored = await this.options.driver.get(definition.table, target.key);
    } catch {
      // Refused credentials or method, an unavailable storage, …: the pipeline answers (and logs).
      return this.next(req, res);
    }
    if (!this.answer(req, res, target.entity, stored, owner)) return this.next(req, res);
  }

  /**
   * Sends the record (or the 304) as the pipeline would; `false` when the pipeline must answer: no
   * record, someone else's (owner rule), or anything failing before the head was written.
   */
  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    entity: FastGetEntity,
    stored: StoredRecord | undefined,
    owner: OwnerScope | undefined,
  ): boolean {
    if (stored === undefined || !owns(entity.definition, owner, stored.record)) return false;
    let body: string | undefined;
    try {
      // Same header names and order as errorMiddleware, the CORS middleware and getRecord set.
      const headers: Record<string, string | number> = {
        'X-Request-Id': this.options.tracker.requestId(header(req, 'x-request-id')),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-store',
      };
      if (this.origins !== undefined) this.cors(req, headers);
      const etag = entityTag(stored.version);
      headers['ETag'] = etag;
      const ifNoneMatch = header(req, 'if-none-match');
      // Compared weakly, as getRecord does.
      const notModified = ifNoneMatch !== '' && tagListMatches(ifNoneMatch, etag, true);
      if (!notModified) {
        body = recordBodyJson(stored.record, stored.updatedAt);
        headers['Content-Type'] = 'application/json; charset=utf-8';
        headers['Content-Length'] = Buffer.byteLength(body);
      }
      // Last in the try: until the head is written, the pipeline can still answer instead.
      res.writeHead(notModified ? 304 : 200, headers);
    } catch {
      return false;
    }
    this.options.tracker.answered();
    res.end(body);
    return true;
  }

  private cors(req: IncomingMessage, headers: Record<string, string | number>): void {
    headers['Vary'] = 'Origin';
    const origin = header(req, 'origin');
    if (origin === '' || (!this.anyOrigin && !this.origins!.has(origin))) return;
    headers['Access-Control-Allow-Origin'] = this.anyOrigin ? '*' : origin;
    headers['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
  }
}

interface Target {
  readonly entity: FastGetEntity;
  readonly key: KeyValues;
}

/** A request header as Koa's `ctx.get` reads it: `''` when absent. */
function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return typeof value === 'string' ? value : '';
}
