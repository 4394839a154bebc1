import type { Context } from 'koa';
import type { AccessRules } from './auth/access.js';
import type { EntityDefinition } from './definition.js';
import type { EntityHooks } from './hooks.js';
import type { DataContext } from './operations.js';
import { MethodForbiddenError } from './errors.js';

/** Handles a request on `/data/{entity}` (list, insert). */
export type CollectionHandler = (ctx: Context, data: DataContext) => Promise<void>;

/** Handles a request on `/data/{entity}/{id}`. */
export type RecordHandler = (ctx: Context, data: DataContext, id: string) => Promise<void>;

/** The HTTP handlers of one entity, generated per entity and mounted by `createService`. */
export interface DataRoutes {
  readonly definition: EntityDefinition<object>;
  /** The user's hooks of this entity: its middleware and custom routes are mounted by the service. */
  readonly hooks?: EntityHooks<object>;
  /** Who may call each method (the access file); absent when the service has no access rules. */
  readonly access?: AccessRules;
  /** GET /data/{entity} */
  readonly list: CollectionHandler;
  /** GET /entity/{entity}/recordCounts */
  readonly count: CollectionHandler;
  /** POST /data/{entity} */
  readonly insert: CollectionHandler;
  /** GET /data/{entity}/{id} */
  readonly get: RecordHandler;
  /** PUT /data/{entity}/{id} */
  readonly replace: RecordHandler;
  /** PATCH /data/{entity}/{id} */
  readonly patch: RecordHandler;
  /** DELETE /data/{entity}/{id} */
  readonly remove: RecordHandler;
}

/** A handler for an operation the REST configuration switched off: always 403. */
export function forbidden(
  definition: EntityDefinition<object>,
  method: 'GET_LIST' | 'GET_BYID' | 'NEW' | 'UPDATE' | 'DELETE',
): CollectionHandler & RecordHandler {
  return () => Promise.reject(new MethodForbiddenError(definition.name, method));
}
