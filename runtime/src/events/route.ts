/**
 * `GET /events` (SPEC §9): validates the request, works out which changes the caller may see —
 * the entities it may list (REST configuration and access rules), and under an owner rule only
 * its own records — and hands the stream to the hub.
 */
import type { Context, Middleware } from 'koa';
import {
  AuthenticationRequiredError,
  mayCall,
  ownerScope,
  type OwnerScope,
} from '../auth/access.js';
import { owns } from '../auth/owner.js';
import { BadRequestError, HttpError, MethodForbiddenError, quoteInput } from '../errors.js';
import type { RequestState } from '../http/errors.js';
import { guard, type DataRoutes } from '../routes.js';
import type { EventHub } from './hub.js';
import type { ChangeFilter } from './subscriber.js';

const PARAMETERS = new Set(['entity', 'after']);

/** The middleware of `GET /events` on `hub`, for the service's `entities`. */
export function eventsRoute(
  hub: EventHub,
  entities: readonly DataRoutes[],
): Middleware<RequestState> {
  const byName = new Map(entities.map((routes) => [routes.definition.name.toUpperCase(), routes]));
  return async (ctx) => {
    for (const name of Object.keys(ctx.query)) {
      if (!PARAMETERS.has(name))
        throw new BadRequestError(
          `Unknown query parameter "${quoteInput(name)}" of /events; it takes entity and after`,
        );
    }
    const filter = changeFilter(ctx, requestedEntities(ctx, byName) ?? entities);
    const after = position(ctx);
    if (ctx.method === 'HEAD') {
      ctx.status = 200;
      ctx.type = 'text/event-stream';
      return;
    }
    await hub.subscribe({
      res: ctx.res,
      filter,
      after,
      begin: () => {
        ctx.status = 200;
        ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
        // A proxy that buffers responses (nginx) would hold events back.
        ctx.set('X-Accel-Buffering', 'no');
        // The stream is written directly, for as long as the client stays.
        ctx.respond = false;
        ctx.res.flushHeaders();
      },
    });
  };
}

/** The entities of `entity=A,B` (also repeated), or `undefined` when the parameter is absent. */
function requestedEntities(
  ctx: Context,
  byName: ReadonlyMap<string, DataRoutes>,
): DataRoutes[] | undefined {
  const raw = ctx.query['entity'];
  if (raw === undefined) return undefined;
  const names = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0)
    throw new BadRequestError('The entity parameter of /events names no entity');
  const chosen = new Set<DataRoutes>();
  for (const name of names) {
    const routes = byName.get(name.toUpperCase());
    if (routes === undefined)
      throw new BadRequestError(
        `Unknown entity "${quoteInput(name)}" in the entity parameter of /events`,
      );
    // Asked for by name: the same answer as listing it (403 switched off, 401/403 by access).
    if (!routes.restConfig.allowedMethods.includes('GET_LIST'))
      throw new MethodForbiddenError(routes.definition.name, 'GET_LIST');
    if (routes.access !== undefined) guard(ctx, routes.access, 'GET_LIST', routes.definition.name);
    chosen.add(routes);
  }
  return [...chosen];
}

/** Which changes of `entities` the caller receives: those it may list, its own under an owner rule. */
function changeFilter(ctx: Context, entities: readonly DataRoutes[]): ChangeFilter {
  const principal = (ctx.state as RequestState).principal;
  const visible = new Map<string, { routes: DataRoutes; owner: OwnerScope | undefined }>();
  for (const routes of entities) {
    if (!routes.restConfig.allowedMethods.includes('GET_LIST')) continue;
    if (routes.access !== undefined && !mayCall(routes.access.GET_LIST, principal)) continue;
    visible.set(routes.definition.name, { routes, owner: ownerScope(routes.access, principal) });
  }
  if (visible.size === 0) {
    if (principal === undefined && entities.some((routes) => routes.access !== undefined))
      throw new AuthenticationRequiredError(false);
    throw new HttpError(
      403,
      'No entity may be listed by this caller, so it may not receive change events',
    );
  }
  return (change, record) => {
    const entry = visible.get(change.entity);
    if (entry === undefined) return false;
    return entry.owner === undefined || owns(entry.routes.definition, entry.owner, record());
  };
}

/** The seq to resume after: `Last-Event-ID` (what EventSource sends), else `?after=`. */
function position(ctx: Context): number | undefined {
  const header = ctx.get('Last-Event-ID').trim();
  const query = ctx.query['after'];
  const [what, raw] =
    header !== ''
      ? ['Last-Event-ID', header]
      : ['after', Array.isArray(query) ? query.join(',') : query];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value))
    throw new BadRequestError(
      `${what} must be the id of an event, a whole number of at least 0, not "${quoteInput(raw)}"`,
    );
  return value;
}
