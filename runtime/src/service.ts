import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import {
  authorize,
  mayCall,
  ownerScope,
  type AccessMethod,
  type Principal,
} from './auth/access.js';
import { Authenticator } from './auth/credentials.js';
import type { StorageDriver } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import {
  BadRequestError,
  EntityNotFoundError,
  MethodNotAllowedError,
  quoteInput,
} from './errors.js';
import { DEFAULT_BODY_LIMIT } from './http/body.js';
import { corsMiddleware } from './http/cors.js';
import { errorMiddleware, type RequestState } from './http/errors.js';
import { customRoutesMiddleware, withEntityMiddleware } from './hooks.js';
import { createLogger, type Logger } from './logger.js';
import type { DataContext } from './operations.js';
import type { CollectionHandler, DataRoutes } from './routes.js';

/** The REST configuration of one entity, as baked into the generated code. */
export interface RestConfig {
  readonly allowedMethods: readonly ('GET_LIST' | 'GET_BYID' | 'NEW' | 'UPDATE' | 'DELETE')[];
  readonly getListStrategy: 'ALL' | 'START_LIMIT';
  readonly defaultLimit?: number;
  readonly maxWindow?: number;
  readonly defaultOrder?: readonly string[];
  readonly allowedOrderingFields?: readonly string[];
}

/** What `/entity` tells about one entity. */
export interface EntityInfo {
  /** The ENTITY document as written in the schema. */
  readonly schema: unknown;
  readonly restConfig: RestConfig;
}

/** The generated description of a whole service. */
export interface ServiceDefinition {
  /** Hash of the normalized schema, reported by `/summary`. */
  readonly schemaHash: string;
  /** Every entity's routes, sorted by entity name. */
  readonly routes: readonly DataRoutes[];
  /** Schema and REST configuration of every entity, by entity name. */
  readonly entities: Readonly<Record<string, EntityInfo>>;
}

/** The Koa application of a generated service. */
export type ServiceApp = Koa<RequestState>;

/** Run-time options of a service. */
export interface ServiceOptions {
  readonly driver: StorageDriver;
  readonly logger?: Logger;
  /** Maximum request body size in bytes (default 10 MiB). */
  readonly bodyLimit?: number;
  /** Clock in Unix milliseconds (default `Date.now`). */
  readonly now?: () => number;
  /**
   * Turns credentials into principals for the access rules (`authFromEnv(process.env)` in a
   * generated server.ts). Without it no credentials are accepted: only public methods work.
   */
  readonly auth?: Authenticator;
  /** Origins allowed to call the service from a browser (CORS); none by default. */
  readonly corsOrigins?: readonly string[];
  /** The largest page a list answers (default 1000): longer lists stop there, with `meta.next`. */
  readonly maxPageSize?: number;
  /**
   * The key that signs list cursors (`CURSOR_SECRET`). Without it a random key is generated and
   * kept in the storage on first use, so every instance on that storage shares it.
   */
  readonly cursorSecret?: string;
}

const DATA_PREFIX = '/data/';

type RestMethod = RestConfig['allowedMethods'][number];

/** The HTTP methods of `/data/{entity}` and `/data/{entity}/{id}` that each REST method covers. */
const COLLECTION_METHODS: readonly (readonly [string, RestMethod])[] = [
  ['GET', 'GET_LIST'],
  ['HEAD', 'GET_LIST'],
  ['POST', 'NEW'],
];
const RECORD_METHODS: readonly (readonly [string, RestMethod])[] = [
  ['GET', 'GET_BYID'],
  ['HEAD', 'GET_BYID'],
  ['PUT', 'UPDATE'],
  ['PATCH', 'UPDATE'],
  ['DELETE', 'DELETE'],
];

/** The methods an entity's two resources answer, for `Allow` and OPTIONS. */
interface AllowedMethods {
  readonly collection: readonly string[];
  readonly record: readonly string[];
}

/**
 * What `Allow` lists: the methods of the resource minus those the REST configuration switched
 * off (they answer 403) and, for a single-record entity, POST and DELETE (they answer 405).
 */
function allowedMethods(routes: DataRoutes, restConfig: RestConfig | undefined): AllowedMethods {
  const single = routes.definition.singleRecordId !== undefined;
  const enabled = (rest: RestMethod): boolean =>
    restConfig === undefined || restConfig.allowedMethods.includes(rest);
  const pick = (methods: readonly (readonly [string, RestMethod])[]): string[] =>
    methods
      .filter(
        ([method, rest]) =>
          enabled(rest) && !(single && (method === 'POST' || method === 'DELETE')),
      )
      .map(([method]) => method);
  return { collection: pick(COLLECTION_METHODS), record: pick(RECORD_METHODS) };
}

/**
 * Builds the Koa application of a generated service: the error envelope first, then `/data`
 * dispatch (one map lookup per request, however many entities there are), then the metadata
 * routes. It does not listen; use `app.callback()` or `app.listen()`.
 */
export function createService(service: ServiceDefinition, options: ServiceOptions): ServiceApp {
  const logger = options.logger ?? createLogger();
  const data: DataContext = {
    driver: options.driver,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ...(options.maxPageSize === undefined ? {} : { maxPageSize: options.maxPageSize }),
    cursorKey: cursorKeyOf(options),
    now: options.now ?? Date.now,
  };
  const byPathName = new Map<string, DataRoutes>();
  const allowed = new Map<DataRoutes, AllowedMethods>();
  for (const routes of service.routes) {
    byPathName.set(routes.definition.name.toLowerCase(), routes);
    allowed.set(
      routes,
      allowedMethods(routes, service.entities[routes.definition.name]?.restConfig),
    );
  }
  const findRoutes = (segment: string): DataRoutes => {
    const routes = byPathName.get(segment.toLowerCase());
    if (routes === undefined) throw new EntityNotFoundError(safeDecode(segment).toUpperCase());
    return routes;
  };
  const accessControlled = service.routes.some((routes) => routes.access !== undefined);
  const auth = options.auth ?? new Authenticator();
  if (!accessControlled) {
    logger.warn(
      'no access rules: every method of every entity is public (generate with --access <file> to protect them)',
    );
  } else if (!auth.configured) {
    logger.warn(
      'access rules are in place but no credentials are configured (JWT_SECRET, JWT_PUBLIC_KEY, ' +
        'JWT_JWKS_URL or API_KEYS_FILE): only public methods can be called',
    );
  }
  /** Whether the caller may list an entity, and so see it in /entity and /summary. */
  const listable = (ctx: Context, routes: DataRoutes): boolean =>
    routes.access === undefined || mayCall(routes.access.GET_LIST, principalOf(ctx));
  /** The access check of one entity method: 401/403 when refused, the owner rule when it applies. */
  const guard = (ctx: Context, routes: DataRoutes, method: AccessMethod): void => {
    const principal = principalOf(ctx);
    authorize(routes.access, method, routes.definition.name, principal);
    const state = ctx.state as RequestState;
    const owner = ownerScope(routes.access, principal);
    if (owner !== undefined) state.owner = owner;
    const access = routes.access;
    // PUT and PATCH create an absent record: that needs NEW too, checked once it is known absent.
    if (method === 'UPDATE' && access !== undefined)
      state.authorizeCreate = () => authorize(access, 'NEW', routes.definition.name, principal);
  };

  const app = new Koa<RequestState>();
  app.proxy = process.env['TRUST_PROXY'] === 'true';
  // Behind one trusted proxy only its own X-Forwarded-For entry counts: the rest is client-supplied.
  app.maxIpsCount = 1;
  app.silent = true;
  app.use(errorMiddleware(logger));
  if (options.corsOrigins !== undefined && options.corsOrigins.length > 0)
    app.use(corsMiddleware(options.corsOrigins));
  if (accessControlled) {
    // Credentials are verified before anything else, so the users' custom routes and hooks can
    // read ctx.state.principal; invalid credentials are a 401 even on public methods.
    app.use(async (ctx, next) => {
      if (ctx.path !== '/health') {
        const principal = await auth.authenticate(ctx.get('Authorization'), ctx.get('X-API-Key'));
        if (principal !== undefined) ctx.state.principal = principal;
      }
      return next();
    });
  }
  // The users' custom routes come before the /data dispatcher, which would otherwise take
  // `/data/product/p1/summary` for the record with id `p1/summary`.
  const customRoutes = customRoutesMiddleware(service.routes, data);
  if (customRoutes !== undefined) app.use(customRoutes);
  app.use(async (ctx, next) => {
    const path = ctx.path;
    if (!path.startsWith(DATA_PREFIX)) return next();
    let rest = path.slice(DATA_PREFIX.length);
    if (rest.endsWith('/')) rest = rest.slice(0, -1);
    const slash = rest.indexOf('/');
    if (rest === '' || slash === 0) return next();
    const routes = findRoutes(slash === -1 ? rest : rest.slice(0, slash));
    const methods = allowed.get(routes)!;
    const handler =
      slash === -1
        ? collectionHandler(routes, ctx.method, methods.collection)
        : recordHandler(routes, ctx.method, decodeId(rest.slice(slash + 1)), methods.record);
    const method = accessMethodOf(ctx.method, slash === -1);
    if (method !== undefined) guard(ctx, routes, method);
    return withEntityMiddleware(routes.hooks, ctx, () => handler(ctx, data));
  });

  const router = new Router<RequestState>();
  router.get('/health', async (ctx) => {
    await data.driver.ping();
    ctx.body = successBody({ storage: 'ok' });
  });
  // An entity the caller may not list is absent from /entity and /summary.
  const findListable = (ctx: Context, segment: string): DataRoutes => {
    const routes = findRoutes(segment);
    if (!listable(ctx, routes)) throw new EntityNotFoundError(routes.definition.name);
    return routes;
  };
  router.get('/entity', (ctx) => {
    if (!accessControlled) {
      ctx.body = successBody(service.entities);
      return;
    }
    const visible: Record<string, EntityInfo> = {};
    for (const routes of service.routes) {
      const info = service.entities[routes.definition.name];
      if (info !== undefined && listable(ctx, routes)) visible[routes.definition.name] = info;
    }
    ctx.body = successBody(visible);
  });
  router.get('/entity/:entity', (ctx) => {
    const routes = findListable(ctx, ctx.params['entity'] ?? '');
    ctx.body = successBody(service.entities[routes.definition.name]);
  });
  // OPTIONS of an unknown entity is a 404 like its GET (router.allowedMethods would answer 200).
  router.options(['/entity/:entity', '/entity/:entity/recordCounts'], (ctx) => {
    findListable(ctx, ctx.params['entity'] ?? '');
    sendAllow(ctx, ['GET', 'HEAD']);
  });
  router.get('/entity/:entity/recordCounts', (ctx) => {
    const routes = findRoutes(ctx.params['entity'] ?? '');
    guard(ctx, routes, 'GET_LIST');
    return withEntityMiddleware(routes.hooks, ctx, () => routes.count(ctx, data));
  });
  router.get('/summary', async (ctx) => {
    const activity = await data.driver.activity();
    const entities: Record<string, Record<string, number | string>> = {};
    for (const routes of service.routes) {
      if (!listable(ctx, routes)) continue;
      const name = routes.definition.name;
      const times = activity[name] ?? {};
      const summary: Record<string, number | string> = {};
      addTime(summary, 'lastCreate', times.lastCreate);
      addTime(summary, 'lastUpdate', times.lastUpdate);
      addTime(summary, 'lastDelete', times.lastDelete);
      entities[name] = summary;
    }
    ctx.body = successBody({ schemaHash: service.schemaHash, entities });
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * The cursor-signing key of a service, fetched once: `cursorSecret`, else the storage's shared
 * secret (made on first use), else one of this process (a driver without secrets; cursors then do
 * not survive a restart).
 */
function cursorKeyOf(options: ServiceOptions): () => Promise<string> {
  const make = (): string => randomBytes(32).toString('hex');
  let key: Promise<string> | undefined;
  return () => {
    if (options.cursorSecret !== undefined) return Promise.resolve(options.cursorSecret);
    const driver = options.driver;
    key ??= (
      driver.secret === undefined ? Promise.resolve(make()) : driver.secret('cursor', make)
    ).catch((error: unknown) => {
      key = undefined; // the storage may be back next time
      throw error;
    });
    return key;
  };
}

/** The access method a request on `/data` calls; `undefined` for OPTIONS. */
function accessMethodOf(method: string, collection: boolean): AccessMethod | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return collection ? 'GET_LIST' : 'GET_BYID';
    case 'POST':
      return 'NEW';
    case 'PUT':
    case 'PATCH':
      return 'UPDATE';
    case 'DELETE':
      return 'DELETE';
    default:
      return undefined;
  }
}

function principalOf(ctx: Context): Principal | undefined {
  return (ctx.state as RequestState).principal;
}

/** The handler of a request on `/data/{entity}`, or the 405 it gets. */
function collectionHandler(
  routes: DataRoutes,
  method: string,
  allow: readonly string[],
): CollectionHandler {
  const single = routes.definition.singleRecordId !== undefined;
  if (method === 'GET' || method === 'HEAD') return routes.list;
  if (method === 'OPTIONS') return options(allow);
  if (method === 'POST' && !single) return routes.insert;
  throw notAllowed(method, routes, allow);
}

/** The handler of a request on `/data/{entity}/{id}`, or the 405 it gets. */
function recordHandler(
  routes: DataRoutes,
  method: string,
  id: string,
  allow: readonly string[],
): CollectionHandler {
  const single = routes.definition.singleRecordId !== undefined;
  switch (method) {
    case 'GET':
    case 'HEAD':
      return (ctx, data) => routes.get(ctx, data, id);
    case 'PUT':
      return (ctx, data) => routes.replace(ctx, data, id);
    case 'PATCH':
      return (ctx, data) => routes.patch(ctx, data, id);
    case 'DELETE':
      if (!single) return (ctx, data) => routes.remove(ctx, data, id);
      break;
    case 'OPTIONS':
      return options(allow);
  }
  throw notAllowed(method, routes, allow);
}

/** OPTIONS: the methods the resource accepts, in `Allow` and in the envelope. */
function options(allowed: readonly string[]): CollectionHandler {
  return (ctx) => {
    sendAllow(ctx, allowed);
    return Promise.resolve();
  };
}

function sendAllow(ctx: Pick<Context, 'set' | 'body'>, allowed: readonly string[]): void {
  ctx.set('Allow', allowed.join(', '));
  ctx.body = successBody({ allow: allowed });
}

function addTime(
  target: Record<string, number | string>,
  name: string,
  ms: number | undefined,
): void {
  if (ms === undefined) return;
  const meta = recordMeta(ms);
  target[`${name}TimeUnix`] = meta.lastUpdateTimeUnix;
  target[`${name}TimeISO`] = meta.lastUpdateTimeISO;
}

function notAllowed(
  method: string,
  routes: DataRoutes,
  allowed: readonly string[],
): MethodNotAllowedError {
  const entity = routes.definition.name;
  const what = routes.definition.singleRecordId === undefined ? '' : ' (a single-record entity)';
  return new MethodNotAllowedError(
    `Method ${method} is not allowed here for Entity ${entity}${what}; allowed: ${allowed.join(', ')}`,
    allowed,
  );
}

function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError(
      `Record id ${quoteInput(raw)} in the path is not valid percent-encoding`,
    );
  }
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
