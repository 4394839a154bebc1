/**
 * The REST configuration of an entity as the runtime reads it: allowed methods, list strategy,
 * paging limits and ordering.
 */
import type { AccessMethod } from './auth/access.js';

/** The REST configuration of one entity, as baked into the generated code (SPEC §4.5). */
export interface RestConfig {
  /** The methods switched on; the others answer 403. */
  readonly allowedMethods: readonly AccessMethod[];
  /** `ALL` lists every record unless `limit` is given; `START_LIMIT` pages by `defaultLimit`. */
  readonly getListStrategy: 'ALL' | 'START_LIMIT';
  /** Used when a request has no `limit` (START_LIMIT). */
  readonly defaultLimit?: number;
  /** `start + limit` may not exceed it. */
  readonly maxWindow?: number;
  /** Applied when a request has no `orderBy`. */
  readonly defaultOrder?: readonly string[];
  /** `orderBy` on other fields is a 400. */
  readonly allowedOrderingFields?: readonly string[];
}
