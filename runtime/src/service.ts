import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import compose from 'koa-compose';
import { mayCall, type Principal } from './auth/access.js';
import { Authenticator } from './auth/credentials.js';
import { batchRoute } from './batch.js';
import { countRecords } from './listing.js';
import type { StorageDriver, TableDescriptor } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import { EntityNotFoundError } from './errors.js';
import { changeEvent } from './events/change.js';
import { EventHub } from './events/hub.js';
import { eventsRoute } from './events/route.js';
import { DEFAULT_BODY_LIMIT } from './http/body.js';
import { answerOptions } from './http/allow.js';
import { corsMiddleware } from './http/cors.js';
import { errorMiddleware, RequestTracker, type RequestState } from './http/errors.js';
import { readAfterMiddleware } from './read-after.js';
import {
  fastGetListener,
  type FastGetEntity,
  type FastGetOptions,
  type FastListEntity,
} from './http/fast-get.js';
import { DATA_PREFIX, entitySegment } from './http/paths.js';
import { customRoutes, type EntityRouter } from './hooks.js';
import { createLogger, type Logger } from './logger.js';
import type { DataContext } from './data-context.js';
import type { RestConfig } from './rest-config.js';
import { entityGate, mountRouter, pathNameOf, type DataRoutes } from './routes.js';
import { addOpenApiRoutes, type OpenApiDocument } from './openapi.js';
import { addAdminRoutes } from './admin.js';
import type { EntityDocument } from './schema.js';

export type { RestConfig } from './rest-config.js';

/** What `/entity` tells about one entity. */
export interface EntityInfo {
  /** The ENTITY document as written in the schema. */
  readonly schema: EntityDocument;
  readonly restConfig: RestConfig;
}

/** The generated description of a whole service. */
export interface ServiceDefinition {
  /** Hash of the normalized schema, reported by `/summary`. */
  readonly schemaHash: string;
  /** Every entity, sorted by name. */
  readonly entities: readonly DataRoutes[];
  /** The OpenAPI document `entity-gen generate` wrote (`readOpenApiDocument`), when there is one. */
  readonly openApi?: OpenApiDocument | undefined;
}

/** The storage layout of every entity of a service, for opening a driver. */
export function tablesOf(service: ServiceDefinition): TableDescriptor[] {
  return service.entities.map((entity) => entity.definition.table);
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
  /**
   * Trust `X-Forwarded-For`, `-Proto` and `-Host` (Koa's `app.proxy`; `TRUST_PROXY=true` in a
   * generated server.ts). Only behind a proxy that sets them: clients can send them too.
   */
  readonly trustProxy?: boolean;
  /**
   * The change events of the service (`GET /events`, `afterCommit` hooks). `startServer` makes one
   * from the environment and ends its streams on shutdown. Without it, the service makes one with
   * the default settings that does not trim the outbox; its streams end with their connections.
   */
  readonly events?: EventHub;
  /**
   * Application middleware of your own, run for every request after the credentials are checked
   * and before the custom routes and the entities' routers (logging, tracing, headers, …). The
   * application refuses `app.use()` once built, because GET by key is answered before Koa: with
   * middleware given here, every request takes the Koa pipeline, GET by key included.
   */
  readonly middleware?: readonly Middleware<RequestState>[];
  /** Serve the admin web app at `/admin` (default true; `ADMIN=off` in a generated server). */
  readonly admin?: boolean;
}

/**
 * Builds the Koa application of a generated service: the error envelope first, then each
 * entity's router under `/data/<entity>` (picked with one map lookup, however many entities there
 * are), then the metadata routes. It does not listen; use `app.callback()` or `app.listen()`.
 */
export function createService(service: ServiceDefinition, options: ServiceOptions): ServiceApp {
  const logger = options.logger ?? createLogger();
  const data: DataContext = {
    driver: options.driver,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ...(options.maxPageSize === undefined ? {} : { maxPageSize: options.maxPageSize }),
    cursorKey: cursorKeyOf(options),
    now: options.now ?? Date.now,
    entities: new Map(
      service.entities.map((routes) => [routes.definition.name.toUpperCase(), routes]),
    ),
  };
  const byPathName = new Map<string, DataRoutes>();
  const byName = new Map(service.entities.map((routes) => [routes.definition.name, routes]));
  const routers = new Map<DataRoutes, Middleware<RequestState>>();
  /** The entities whose GET by key the fast path answers (see `fastGetEntity`). */
  const fastEntities = new Map<string, FastGetEntity>();
  /** The entities whose list pages the fast path answers (see `fastListEntity`). */
  const fastLists = new Map<string, FastListEntity>();
  for (const routes of service.entities) {
    const pathName = pathNameOf(routes.definition);
    byPathName.set(pathName, routes);
    const router = routes.router(data);
    routers.set(routes, mountRouter(routes, router));
    const fast = fastGetEntity(routes, router);
    if (fast !== undefined) fastEntities.set(pathName, fast);
    const list = fastListEntity(routes, router);
    if (list !== undefined) fastLists.set(pathName, list);
  }
  const findRoutes = (segment: string): DataRoutes => {
    const routes = byPathName.get(segment.toLowerCase());
    if (routes === undefined) throw new EntityNotFoundError(safeDecode(segment).toUpperCase());
    return routes;
  };
  const accessControlled = service.entities.some((routes) => routes.access !== undefined);
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

  const events = options.events ?? new EventHub(options.driver, { logger });
  reactToCommits(service, events, logger);

  const app = new ServiceKoa();
  app.proxy = options.trustProxy === true;
  // Behind one trusted proxy only its own X-Forwarded-For entry counts: the rest is client-supplied.
  app.maxIpsCount = 1;
  app.silent = true;
  const tracker = new RequestTracker(logger);
  app.use(errorMiddleware(logger, tracker));
  if (options.driver.readAfter === true) app.use(readAfterMiddleware());
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
  for (const middleware of options.middleware ?? []) app.use(middleware);
  // The users' custom routes come before the entities' routers, which would otherwise take
  // `/data/product/p1/summary` for the record with id `p1/summary`.
  const custom = customRoutes(service.entities, data);
  if (custom !== undefined) app.use(custom.middleware);
  const serveData: Middleware<RequestState> = (ctx, next) => {
    const path = ctx.path;
    if (!path.startsWith(DATA_PREFIX)) return next();
    const segment = entitySegment(path);
    if (segment === '') return next();
    return routers.get(findRoutes(segment))!(ctx, next);
  };
  app.use(serveData);

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
    const visible: Record<string, EntityInfo> = {};
    for (const routes of service.entities)
      if (listable(ctx, routes)) visible[routes.definition.name] = entityInfo(routes);
    ctx.body = successBody(visible);
  });
  router.get('/entity/:entity', (ctx) => {
    ctx.body = successBody(entityInfo(findListable(ctx, ctx.params['entity'] ?? '')));
  });
  // OPTIONS of an unknown entity is a 404 like its GET (router.allowedMethods would answer 200).
  router.options('/entity/:entity', (ctx) => {
    findListable(ctx, ctx.params['entity'] ?? '');
    answerOptions(ctx, ['GET', 'HEAD']);
  });
  // Like the list it counts: without GET_LIST in the REST configuration, no method is allowed.
  router.options('/entity/:entity/recordCounts', (ctx) => {
    const routes = findListable(ctx, ctx.params['entity'] ?? '');
    answerOptions(
      ctx,
      routes.restConfig.allowedMethods.includes('GET_LIST') ? ['GET', 'HEAD'] : [],
    );
  });
  // A count passes the gate of the entity's list: its access rule and its hook middleware.
  const countGates = new Map(
    service.entities.map((routes) => [routes, compose(entityGate(routes, () => 'GET_LIST'))]),
  );
  router.get('/entity/:entity/recordCounts', (ctx) => {
    const routes = findRoutes(ctx.params['entity'] ?? '');
    return countGates.get(routes)!(ctx, () =>
      countRecords(ctx, data, routes.definition, routes.restConfig),
    );
  });
  router.get('/summary', async (ctx) => {
    const activity = await data.driver.activity();
    const entities: Record<string, Record<string, number | string>> = {};
    for (const routes of service.entities) {
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
  router.get('/events', eventsRoute(events, service.entities));
  // Data operations across entities in one transaction (batch.ts).
  router.post('/batch', batchRoute(app, data, serveData));
  // The document and its reference page leave out the entities the caller may not list.
  addOpenApiRoutes(router, service.openApi, (ctx, entity) => {
    const routes = byName.get(entity);
    return routes !== undefined && listable(ctx, routes);
  });
  // `GET /me` (what the caller may do) and the admin app at `/admin` (docs/admin.md).
  addAdminRoutes(router, service.entities, options.admin !== false);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const ownMiddleware = (options.middleware ?? []).length > 0;
  app.fastGet = ownMiddleware
    ? undefined
    : {
        options: {
          driver: data.driver,
          logger,
          tracker,
          entities: fastEntities,
          ...(accessControlled ? { auth } : {}),
          ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
          ...(custom === undefined ? {} : { customRoute: custom.matchesGet }),
          expand: data,
          // Under access rules a list's owner scope and the caller's rights are the pipeline's.
          ...(accessControlled ? {} : { lists: { entities: fastLists, data } }),
        },
      };
  app.built = true;
  return app;
}

/**
 * The Koa application of a service, whose request listener (`callback()`, also used by
 * `listen()`) answers GET by key on the fast path (http/fast-get.ts) unless the service was given
 * middleware of its own. Once built it refuses more middleware: added after the fact, it would not
 * see the requests the fast path answers.
 */
class ServiceKoa extends Koa<RequestState> {
  fastGet: { readonly options: FastGetOptions } | undefined;
  built = false;

  override use<NewStateT = object, NewContextT = object>(
    middleware: Koa.Middleware<RequestState & NewStateT, Koa.DefaultContext & NewContextT>,
  ): Koa<RequestState & NewStateT, Koa.DefaultContext & NewContextT> {
    if (this.built)
      throw new Error(
        'app.use() after createService/createApp: pass application middleware as the `middleware` ' +
          'option of createApp (it runs for every request, before the entity routers), or as ' +
          'the hook middleware of an entity (src/hooks/<entity>.ts)',
      );
    return super.use(middleware);
  }

  override callback(): ReturnType<Koa['callback']> {
    const handle = super.callback();
    return this.fastGet === undefined ? handle : fastGetListener(this.fastGet.options, handle);
  }
}

/**
 * An entity as the fast path of GET by key sees it, if it may answer for it: when the entity's
 * router has the route (its REST configuration allows GET_BYID) and its hooks add no middleware.
 */
function fastGetEntity(routes: DataRoutes, router: EntityRouter): FastGetEntity | undefined {
  const path = `${DATA_PREFIX}${pathNameOf(routes.definition)}/id`;
  if (!router.match(path, 'GET').route) return undefined;
  if (routes.hooks.middleware !== undefined && routes.hooks.middleware.length > 0) return undefined;
  return {
    definition: routes.definition,
    ...(routes.access === undefined ? {} : { access: routes.access }),
  };
}

/**
 * An entity as the fast path of list pages sees it, if it may answer for it: a collection (not a
 * single-record entity) whose router has the list route (its REST configuration allows GET_LIST)
 * and whose hooks add no middleware.
 */
function fastListEntity(routes: DataRoutes, router: EntityRouter): FastListEntity | undefined {
  const { definition, hooks, restConfig } = routes;
  if (definition.singleRecordId !== undefined) return undefined;
  if (!router.match(`${DATA_PREFIX}${pathNameOf(definition)}`, 'GET').route) return undefined;
  if (hooks.middleware !== undefined && hooks.middleware.length > 0) return undefined;
  return { definition, config: restConfig };
}

/**
 * Runs the `afterCommit` hooks with the changes this process commits: one at a time, in the order
 * the commits were heard, outside any request; an error is logged and the next hook runs.
 */
function reactToCommits(service: ServiceDefinition, events: EventHub, logger: Logger): void {
  const hooks = new Map<string, NonNullable<DataRoutes['hooks']['afterCommit']>>();
  for (const routes of service.entities) {
    const hook = routes.hooks.afterCommit;
    if (hook !== undefined) hooks.set(routes.definition.name, hook.bind(routes.hooks));
  }
  if (hooks.size === 0) return;
  let queue = Promise.resolve();
  events.onCommitted((committed) => {
    for (const change of committed) {
      const hook = hooks.get(change.entity);
      if (hook === undefined) continue;
      queue = queue
        .then(() => hook(changeEvent(change)))
        .catch((error: unknown) =>
          logger.error(
            { err: error, entity: change.entity, id: change.id, seq: change.seq },
            'afterCommit hook failed',
          ),
        );
    }
  });
}

/** What `/entity` tells about an entity: its document as the schema declares it, its REST config. */
function entityInfo(routes: DataRoutes): EntityInfo {
  return { schema: routes.definition.document, restConfig: routes.restConfig };
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

function principalOf(ctx: Context): Principal | undefined {
  return (ctx.state as RequestState).principal;
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

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
