/**
 * Per-entity routing: each generated `routes.ts` builds its entity's `@koa/router` with
 * `entityRouter` (prefix `/data/<entity>`, the access rules, the entity's middleware) and adds one
 * explicit route per allowed method; `createService` (./service.ts) mounts every entity's router.
 */
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Context, Middleware } from 'koa';
import {
  authorize,
  mayCall,
  ownerScope,
  type AccessMethod,
  type AccessRules,
} from './auth/access.js';
import type { EntityDefinition } from './definition.js';
import { MethodForbiddenError, MethodNotAllowedError } from './errors.js';
import type { EntityHooks, EntityRouter } from './hooks.js';
import { answerOptions } from './http/allow.js';
import type { RequestState } from './http/errors.js';
import { DATA_PREFIX, isRecordPath, recordId } from './http/paths.js';

export { recordId };
import type { DataContext } from './data-context.js';
import { onConflictOf } from './operations.js';
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

/**
 * The router of one entity: `@koa/router` with the prefix `/data/<entity>` (matched
 * case-insensitively), then the entity's gate (`entityGate`: access rules, hook middleware). The
 * generated routes are added to it.
 */
export function entityRouter<TRecord extends object>(
  definition: EntityDefinition<TRecord>,
  hooks: EntityHooks<TRecord>,
  restConfig: RestConfig,
  access?: AccessRules,
): EntityRouter {
  const router = new Router<RequestState>({ prefix: `${DATA_PREFIX}${pathNameOf(definition)}` });
  router.use(
    ...entityGate(
      { definition, hooks, restConfig, ...(access === undefined ? {} : { access }) },
      (ctx) => accessMethodOf(ctx.method, isRecordPath(ctx.path)),
    ),
  );
  return router;
}

/**
 * What every request of an entity passes before its handler — on the entity's router and on its
 * `recordCounts` route alike: the access check of the method `methodOf` names (when there are
 * access rules), then the entity's middleware from its hooks.
 *
 * PUT and PATCH create an absent record: that needs NEW as well as UPDATE — switched on by the
 * REST configuration and, with access rules, allowed to the caller — which the operation checks
 * (`RequestState.authorizeCreate`) once it knows the record is absent. An upsert (POST with
 * `onConflict`) needs UPDATE as well as NEW, checked here.
 */
export function entityGate(
  routes: Pick<DataRoutes, 'definition' | 'hooks' | 'restConfig' | 'access'>,
  methodOf: (ctx: Context) => AccessMethod,
): Middleware<RequestState>[] {
  const { definition, hooks, restConfig, access } = routes;
  const name = definition.name;
  const creates = restConfig.allowedMethods.includes('NEW');
  const updates = restConfig.allowedMethods.includes('UPDATE');
  const readsById = restConfig.allowedMethods.includes('GET_BYID');
  const check: Middleware<RequestState> = (ctx, next) => {
    if (access !== undefined) guard(ctx, access, methodOf(ctx), name);
    if (ctx.method === 'POST' || ctx.method === 'PUT' || ctx.method === 'PATCH') {
      ctx.state.readsById =
        readsById && (access === undefined || mayCall(access.GET_BYID, ctx.state.principal));
    }
    // An upsert (POST with onConflict) may update records: it needs UPDATE as well as NEW.
    if (ctx.method === 'POST' && onConflictOf(ctx) !== undefined) {
      if (!updates) throw new MethodForbiddenError(name, 'UPDATE');
      if (access !== undefined) authorize(access, 'UPDATE', name, ctx.state.principal);
    }
    if (ctx.method === 'PUT' || ctx.method === 'PATCH') {
      const principal = ctx.state.principal;
      ctx.state.authorizeCreate = () => {
        if (!creates) throw new MethodForbiddenError(name, 'NEW');
        if (access !== undefined) authorize(access, 'NEW', name, principal);
      };
    }
    return next();
  };
  return [check, ...(hooks.middleware ?? [])];
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

/** The access method a request on `/data` calls. */
function accessMethodOf(method: string, record: boolean): AccessMethod {
  switch (method) {
    case 'POST':
      // On a record path POST only restores a soft-deleted record (SPEC §13), a DELETE right.
      return record ? 'DELETE' : 'NEW';
    case 'PUT':
    case 'PATCH':
      return 'UPDATE';
    case 'DELETE':
      return 'DELETE';
    default:
      return record ? 'GET_BYID' : 'GET_LIST';
  }
}

/**
 * The methods the data routes of a path have, whatever the REST configuration says, in the order
 * `Allow` lists them: GET and HEAD everywhere, POST, PATCH and DELETE (by filter) on the
 * collection, PUT, PATCH and DELETE on a record; a single-record entity has no POST and no DELETE,
 * and no change by filter. Any other method of the path is a 405.
 */
function routeMethods(
  definition: EntityDefinition<object>,
  record: boolean,
  restore = false,
): readonly string[] {
  const single = definition.singleRecordId !== undefined;
  if (!record) return single ? ['GET', 'HEAD'] : ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];
  if (single) return ['GET', 'HEAD', 'PUT', 'PATCH'];
  // `<id>/restore` of an entity with softDelete also restores (POST, SPEC §13).
  return restore && definition.table.softDelete === true
    ? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
    : ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'];
}

/** The methods of a path that the REST configuration leaves on: the `Allow` header's list. */
function allowedMethods(routes: DataRoutes, record: boolean, restore = false): string[] {
  const on = routes.restConfig.allowedMethods;
  return routeMethods(routes.definition, record, restore).filter((method) =>
    on.includes(accessMethodOf(method, record)),
  );
}

/** Whether a record path may be the restore of a record (`…/restore`). */
function isRestorePath(path: string): boolean {
  return path.replace(/\/$/, '').endsWith('/restore');
}

/**
 * One middleware serving an entity's router: its routes, then — for a request no route answered —
 * the OPTIONS answer, the 405 of a method the path does not have, or the 403 of a method the REST
 * configuration switched off, in that order, each in the envelope and with `Allow` listing the
 * methods left on in a stable order (empty when the configuration switched them all off).
 */
export function mountRouter(routes: DataRoutes, router: EntityRouter): Middleware<RequestState> {
  const serve = compose([router.routes(), router.allowedMethods()] as Middleware<RequestState>[]);
  const end = (): Promise<void> => Promise.resolve();
  const allow = {
    collection: allowedMethods(routes, false),
    record: allowedMethods(routes, true),
    restore: allowedMethods(routes, true, true),
  };
  return async (ctx) => {
    await serve(ctx, end);
    // Unless a route answered, allowedMethods() left a 405 or an empty OPTIONS answer, or no
    // route has this path at all (every method of it is switched off): Koa's default 404.
    const unanswered =
      ctx.status === 405 ||
      (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.body === '') ||
      (ctx.status === 404 && (ctx.body === undefined || ctx.body === null));
    if (!unanswered) return;
    const record = isRecordPath(ctx.path);
    const restore = record && isRestorePath(ctx.path);
    const methods = !record ? allow.collection : restore ? allow.restore : allow.record;
    if (ctx.method === 'OPTIONS') return answerOptions(ctx, methods);
    ctx.set('Allow', methods.join(', '));
    refuse(routes, ctx, record, methods, restore);
  };
}

/**
 * The 405 of a method the route lacks, or — after the access rules, which come first as for every
 * route — the 403 of one the REST configuration switched off.
 */
function refuse(
  routes: DataRoutes,
  ctx: Context,
  record: boolean,
  allow: readonly string[],
  restore: boolean,
): never {
  const { name, singleRecordId } = routes.definition;
  const method = ctx.method;
  if (routeMethods(routes.definition, record, restore).includes(method)) {
    const rest = accessMethodOf(method, record);
    if (routes.access !== undefined) guard(ctx, routes.access, rest, name);
    throw new MethodForbiddenError(name, rest);
  }
  const what = singleRecordId !== undefined ? ' (a single-record entity)' : '';
  const allowed =
    allow.length > 0 ? allow.join(', ') : 'none (the REST configuration switches every method off)';
  throw new MethodNotAllowedError(
    `Method ${method} is not allowed here for Entity ${name}${what}; allowed: ${allowed}`,
    allow,
  );
}
