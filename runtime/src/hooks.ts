/**
 * Extension points of a generated service: the hook and middleware types of an entity, its typed
 * store, and the custom routes a service adds next to the generated ones.
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';
import type { EntityDefinition } from './definition.js';
import type { CountQuery, ListQuery, StorageDriver } from './driver.js';
import type { RequestState } from './http/errors.js';
import { keyOfId } from './http/paths.js';
import type { DataContext } from './data-context.js';
import type { ChangeEvent } from './events/change.js';

/** The Koa context of the request a hook runs for (`ctx.state.requestId`, headers, user data). */
export type HookContext = Context;

/** Koa middleware run in front of an entity's generated handlers. */
export type EntityMiddleware = Middleware<RequestState>;

/** The router `EntityHooks.routes` adds custom routes to: a `@koa/router` without a prefix. */
export type EntityRouter = Router<RequestState>;

/** A hook may do its work synchronously or return a promise. */
type MaybePromise<T> = T | Promise<T>;

/**
 * Typed access to one entity's records for custom routes, on the service's storage driver. Records
 * come back in their stored, canonical form.
 */
export interface EntityStore<TRecord extends object> {
  readonly definition: EntityDefinition<TRecord>;
  /** The service's storage driver, for anything the helpers below do not cover. */
  readonly driver: StorageDriver;
  /** Reads the record with this id (as in `/data/{entity}/{id}`); `undefined` when there is none. */
  get(id: string): Promise<TRecord | undefined>;
  /** Lists records; without a query every record, in key order. */
  list(query?: Partial<ListQuery>): Promise<TRecord[]>;
  /** Counts the records matching the query's filters; without a query every record. */
  count(query?: Partial<CountQuery>): Promise<number>;
}

/**
 * Lifecycle hooks and custom routes of one entity. The user writes them in
 * `src/hooks/<entity>.ts`, a file entity-gen creates once and never changes; the generated routes
 * call them. Every member is optional.
 *
 * - A before-hook may return a changed record, which is stored instead; whatever it returns (or
 *   the record it was given, if it changed it in place) is validated again like a request body,
 *   so a hook cannot store an invalid record. Throw an `HttpError` (e.g.
 *   `new HttpError(422, 'reason')`) to reject the request; the client gets that status and reason
 *   in the error envelope and nothing is written. Any other error is a 500.
 * - After-hooks run once, after the write succeeded. An error they throw is the response, but the
 *   write stays done; catch errors of optional side effects yourself.
 * - A before-hook of PUT/PATCH may run again when a concurrent writer forces a retry; keep before
 *   hooks free of side effects.
 * - `afterCommit` runs outside any request, once per committed change, with the event `/events`
 *   sends (docs/events.md).
 */
export interface EntityHooks<TRecord extends object> {
  /**
   * Before a record is inserted: POST (for a list, once per record before anything is written),
   * and PUT/PATCH that create an absent record.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (`void`) keeps the record; `undefined` would refuse such hooks
  beforeInsert?(record: TRecord, ctx: HookContext): MaybePromise<TRecord | void>;
  /** After records were inserted; for a list, once per record after the whole list was stored. */
  afterInsert?(record: TRecord, ctx: HookContext): MaybePromise<void>;
  /** Before PUT or PATCH overwrite (or rename) `previous` with `record`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: as for beforeInsert
  beforeUpdate?(record: TRecord, previous: TRecord, ctx: HookContext): MaybePromise<TRecord | void>;
  /** After PUT or PATCH stored `record` in place of `previous`. */
  afterUpdate?(record: TRecord, previous: TRecord, ctx: HookContext): MaybePromise<void>;
  /** Before DELETE removes `record`. */
  beforeDelete?(record: TRecord, ctx: HookContext): MaybePromise<void>;
  /** After DELETE removed `record`. */
  afterDelete?(record: TRecord, ctx: HookContext): MaybePromise<void>;
  /**
   * After a change of a record of this entity committed in this process (by a request or by a
   * custom route through `store.driver`), with the same event object `/events` sends: `seq`,
   * `op` (`created`, `updated`, `deleted`; a rename is `deleted` then `created`), `id`, `record`
   * (before the change for `deleted`). For in-process reactions: it never delays or changes the
   * response; hooks run one at a time in the order this process saw the
   * commits, and an error is logged. Needs change events on (`EVENTS`, default on).
   */
  afterCommit?(event: ChangeEvent<TRecord>): MaybePromise<void>;
  /**
   * Koa middleware run, in order, in front of the entity's generated handlers (every method on
   * `/data/{entity}` and `/data/{entity}/{id}`, and `/entity/{entity}/recordCounts`), e.g. to
   * check authorization. Call `await next()` to continue.
   */
  readonly middleware?: readonly EntityMiddleware[];
  /**
   * Adds custom routes, with full paths (`/data/product/:id/summary`, `/product-stats`). They are
   * matched before the generated `/data` routes, so they may also replace one of them. Middleware
   * added with `router.use()` runs for these custom routes only.
   */
  routes?(router: EntityRouter, store: EntityStore<TRecord>): void;
}

/** The custom routes of a service's entities (`EntityHooks.routes`). */
export interface CustomRoutes {
  /** One middleware serving them all. */
  readonly middleware: EntityMiddleware;
  /** Whether one of them answers GET on `path` (a request path, not percent-decoded). */
  matchesGet(path: string): boolean;
}

/**
 * Builds the custom routes of every entity that has some (`undefined` when none has). Each entity
 * gets its own router, so `router.use()` stays within that entity.
 */
export function customRoutes(
  entities: readonly { definition: EntityDefinition<object>; hooks?: EntityHooks<object> }[],
  data: DataContext,
): CustomRoutes | undefined {
  const routers: EntityRouter[] = [];
  for (const { definition, hooks } of entities) {
    if (hooks?.routes === undefined) continue;
    const router: EntityRouter = new Router<RequestState>();
    hooks.routes(router, entityStore(definition, data.driver));
    routers.push(router);
  }
  if (routers.length === 0) return undefined;
  return {
    middleware: compose(routers.map((router) => router.routes() as EntityMiddleware)),
    // What each router's middleware tests before it runs a route (custom routers have no host).
    matchesGet: (path) => routers.some((router) => router.match(path, 'GET').route),
  };
}

/** The typed record access a custom route gets for its entity. */
function entityStore<TRecord extends object>(
  definition: EntityDefinition<TRecord>,
  driver: StorageDriver,
): EntityStore<TRecord> {
  const query = (partial: Partial<ListQuery> = {}): ListQuery => ({
    filters: [],
    orderBy: [],
    ...partial,
  });
  return {
    definition,
    driver,
    async get(id) {
      const key = keyOfId(definition, id);
      if (key === undefined) return undefined;
      const stored = await driver.get(definition.table, key);
      return stored?.record as TRecord | undefined;
    },
    async list(partial) {
      const stored = await driver.list(definition.table, query(partial));
      return stored.map((row) => row.record as TRecord);
    },
    count: (partial) => driver.count(definition.table, { filters: partial?.filters ?? [] }),
  };
}
