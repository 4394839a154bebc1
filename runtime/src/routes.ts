/**
 * Per-entity routing: each generated `routes.ts` builds its entity's `@koa/router` with
 * `entityRouter` (prefix `/data/<entity>`, the access rules, the entity's middleware) and adds one
 * explicit route per allowed method; `createService` (./service.ts) mounts every entity's router.
 */
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Context, Middleware } from 'koa';
import { authorize, ownerScope, type AccessMethod, type AccessRules } from './auth/access.js';
import type { EntityDefinition } from './definition.js';
import { successBody } from './envelope.js';
import {
  BadRequestError,
  MethodForbiddenError,
  MethodNotAllowedError,
  quoteInput,
} from './errors.js';
import type { EntityHooks, EntityRouter } from './hooks.js';
import type { RequestState } from './http/errors.js';
import type { DataContext } from './data-context.js';
import type { RestConfig } from './rest-config.js';

/** Everything a service needs to serve one entity; generated per entity in its `routes.ts`. */
export interface DataRoutes<TRecord extends object = object> {
  readonly definition: EntityDefinition<TRecord>;
  /** The user's hooks of this entity (`src/hooks/<entity>.ts`). */
  readonly hooks: EntityHooks<TRecord>;
  /** The REST configuration: which methods are switched on, how lists are paged and sorted. */
  readonly restConfig: RestConfig;
  /** Who may call each method (the access file); absent when the service has no access rules. */
  readonly access?: AccessRules;
  /** Builds the entity's router of `/data/<entity>` on the service's data context. */
  readonly router: (data: DataContext) => EntityRouter;
}

/** The first segment of the path under `/data/` that names an entity: `product` for `PRODUCT`. */
export function pathNameOf(definition: EntityDefinition<object>): string {
  return definition.name.toLowerCase();
}

const DATA_PREFIX = '/data/';

/**
 * The router of one entity: `@koa/router` with the prefix `/data/<entity>` (matched
 * case-insensitively), then the access check of each request (when there are access rules) and
 * the entity's middleware from its hooks. The generated routes are added to it.
 *
 * PUT and PATCH create an absent record: that needs NEW as well as UPDATE — switched on by the
 * REST configuration and, with access rules, allowed to the caller — which the operation checks
 * (`RequestState.authorizeCreate`) once it knows the record is absent.
 */
export function entityRouter<TRecord extends object>(
  definition: EntityDefinition<TRecord>,
  hooks: EntityHooks<TRecord>,
  restConfig: RestConfig,
  access?: AccessRules,
): EntityRouter {
  const router = new Router<RequestState>({ prefix: `${DATA_PREFIX}${pathNameOf(definition)}` });
  const name = definition.name;
  const creates = restConfig.allowedMethods.includes('NEW');
  router.use((ctx, next) => {
    if (access !== undefined)
      guard(ctx, access, accessMethodOf(ctx.method, isRecordPath(ctx.path)), name);
    if (ctx.method === 'PUT' || ctx.method === 'PATCH') {
      const principal = ctx.state.principal;
      ctx.state.authorizeCreate = () => {
        if (!creates) throw new MethodForbiddenError(name, 'NEW');
        if (access !== undefined) authorize(access, 'NEW', name, principal);
      };
    }
    return next();
  });
  if (hooks.middleware !== undefined && hooks.middleware.length > 0)
    router.use(...hooks.middleware);
  return router;
}

/**
 * Checks that the caller may call `method` (401/403 otherwise) and restricts the request to the
 * caller's records when the entity has an owner rule.
 */
export function guard(
  ctx: Context,
  access: AccessRules,
  method: AccessMethod,
  entity: string,
): void {
  const state = ctx.state as RequestState;
  authorize(access, method, entity, state.principal);
  const owner = ownerScope(access, state.principal);
  if (owner !== undefined) state.owner = owner;
}

/**
 * The record id of a request on `/data/{entity}/{id}`: the rest of the path after the entity,
 * percent-decoded (so an id may contain `/`), without a trailing slash.
 */
export function recordId(ctx: Pick<Context, 'path'>): string {
  const rest = ctx.path.slice(DATA_PREFIX.length);
  let raw = rest.slice(rest.indexOf('/') + 1);
  if (raw.endsWith('/')) raw = raw.slice(0, -1);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError(
      `Record id ${quoteInput(raw)} in the path is not valid percent-encoding`,
    );
  }
}

/** Whether a `/data/{entity}/…` path names a record rather than the collection. */
function isRecordPath(path: string): boolean {
  const rest = path.slice(DATA_PREFIX.length);
  const slash = rest.indexOf('/');
  return slash >= 0 && slash < rest.length - 1;
}

/** The access method a request on `/data` calls. */
function accessMethodOf(method: string, record: boolean): AccessMethod {
  switch (method) {
    case 'POST':
      return 'NEW';
    case 'PUT':
    case 'PATCH':
      return 'UPDATE';
    case 'DELETE':
      return 'DELETE';
    default:
      return record ? 'GET_BYID' : 'GET_LIST';
  }
}

/** The order `Allow` lists methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * One middleware serving an entity's router: its routes, with `allowedMethods()` for OPTIONS and
 * 405, whose answers are then given in the envelope with `Allow` in a stable order — and a 403
 * instead of the 405 for a method the REST configuration switched off.
 */
export function mountRouter(routes: DataRoutes, router: EntityRouter): Middleware<RequestState> {
  const serve = compose([router.routes(), router.allowedMethods()] as Middleware<RequestState>[]);
  const end = (): Promise<void> => Promise.resolve();
  return async (ctx) => {
    await serve(ctx, end);
    // Unless a route answered, allowedMethods() left a 405 or an empty OPTIONS answer, or no
    // route has this path at all (every method of it is switched off): Koa's default 404.
    const unanswered =
      ctx.status === 405 ||
      (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.body === '') ||
      (ctx.status === 404 && (ctx.body === undefined || ctx.body === null));
    if (!unanswered) return;
    const allow = ctx.response
      .get('Allow')
      .split(',')
      .map((method) => method.trim())
      .filter((method) => method !== '')
      .sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
    if (ctx.method === 'OPTIONS') {
      ctx.status = 200;
      ctx.set('Allow', allow.join(', '));
      ctx.body = successBody({ allow });
      return;
    }
    refuse(routes, ctx.method, isRecordPath(ctx.path), allow);
  };
}

/** The 403 of a method the REST configuration switched off, or the 405 of one the route lacks. */
function refuse(
  routes: DataRoutes,
  method: string,
  record: boolean,
  allow: readonly string[],
): never {
  const { name, singleRecordId } = routes.definition;
  const single = singleRecordId !== undefined;
  const rest = accessMethodOf(method, record);
  const exists = !(single && (method === 'POST' || method === 'DELETE'));
  if (exists && KNOWN_METHODS.has(method) && !routes.restConfig.allowedMethods.includes(rest))
    throw new MethodForbiddenError(name, rest);
  const what = single ? ' (a single-record entity)' : '';
  throw new MethodNotAllowedError(
    `Method ${method} is not allowed here for Entity ${name}${what}; allowed: ${allow.join(', ')}`,
    allow,
  );
}

/** The methods of the data routes; any other is a 405. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(METHOD_ORDER);
