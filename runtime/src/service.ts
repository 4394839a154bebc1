import Router from '@koa/router';
import Koa from 'koa';
import type { StorageDriver } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import { BadRequestError, EntityNotFoundError, MethodNotAllowedError } from './errors.js';
import { DEFAULT_BODY_LIMIT } from './http/body.js';
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
}

const DATA_PREFIX = '/data/';
const COLLECTION_METHODS = ['GET', 'HEAD', 'POST'];
const RECORD_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'];
const SINGLE_COLLECTION_METHODS = ['GET', 'HEAD'];
const SINGLE_RECORD_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH'];

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
    now: options.now ?? Date.now,
  };
  const byPathName = new Map<string, DataRoutes>();
  for (const routes of service.routes) byPathName.set(routes.definition.name.toLowerCase(), routes);
  const findRoutes = (segment: string): DataRoutes => {
    const routes = byPathName.get(segment.toLowerCase());
    if (routes === undefined) throw new EntityNotFoundError(safeDecode(segment).toUpperCase());
    return routes;
  };

  const app = new Koa<RequestState>();
  app.proxy = process.env['TRUST_PROXY'] === 'true';
  // Behind one trusted proxy only its own X-Forwarded-For entry counts: the rest is client-supplied.
  app.maxIpsCount = 1;
  app.silent = true;
  app.use(errorMiddleware(logger));
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
    const handler =
      slash === -1
        ? collectionHandler(routes, ctx.method)
        : recordHandler(routes, ctx.method, decodeId(rest.slice(slash + 1)));
    return withEntityMiddleware(routes.hooks, ctx, () => handler(ctx, data));
  });

  const router = new Router<RequestState>();
  router.get('/health', async (ctx) => {
    await data.driver.ping();
    ctx.body = successBody({ storage: 'ok' });
  });
  router.get('/entity', (ctx) => {
    ctx.body = successBody(service.entities);
  });
  router.get('/entity/:entity', (ctx) => {
    const routes = findRoutes(ctx.params['entity'] ?? '');
    ctx.body = successBody(service.entities[routes.definition.name]);
  });
  router.get('/entity/:entity/recordCounts', (ctx) => {
    const routes = findRoutes(ctx.params['entity'] ?? '');
    return withEntityMiddleware(routes.hooks, ctx, () => routes.count(ctx, data));
  });
  router.get('/summary', async (ctx) => {
    const activity = await data.driver.activity();
    const entities: Record<string, Record<string, number | string>> = {};
    for (const routes of service.routes) {
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

/** The handler of a request on `/data/{entity}`, or the 405 it gets. */
function collectionHandler(routes: DataRoutes, method: string): CollectionHandler {
  const single = routes.definition.singleRecordId !== undefined;
  if (method === 'GET' || method === 'HEAD') return routes.list;
  if (method === 'OPTIONS') return options(single ? SINGLE_COLLECTION_METHODS : COLLECTION_METHODS);
  if (method === 'POST' && !single) return routes.insert;
  throw notAllowed(method, routes, single ? SINGLE_COLLECTION_METHODS : COLLECTION_METHODS);
}

/** The handler of a request on `/data/{entity}/{id}`, or the 405 it gets. */
function recordHandler(routes: DataRoutes, method: string, id: string): CollectionHandler {
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
      return options(single ? SINGLE_RECORD_METHODS : RECORD_METHODS);
  }
  throw notAllowed(method, routes, single ? SINGLE_RECORD_METHODS : RECORD_METHODS);
}

/** OPTIONS: the methods the resource accepts, in `Allow` and in the envelope. */
function options(allowed: readonly string[]): CollectionHandler {
  return (ctx) => {
    ctx.set('Allow', allowed.join(', '));
    ctx.body = successBody({ allow: allowed });
    return Promise.resolve();
  };
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
    throw new BadRequestError(`Record id ${raw} in the path is not valid percent-encoding`);
  }
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
