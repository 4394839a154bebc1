/**
 * What the record operations and lists of a service get: the storage driver, the body size limit,
 * the clock, the page size cap and the key that signs list cursors.
 */
import type { AccessRules } from './auth/access.js';
import type { EntityDefinition } from './definition.js';
import type { StorageDriver } from './driver.js';
import type { RestConfig } from './rest-config.js';

/** What an expansion (`expand=`, SPEC §11) needs to know of an entity it reads. */
export interface ExpandableEntity {
  readonly definition: EntityDefinition<object>;
  readonly restConfig: RestConfig;
  readonly access?: AccessRules;
}

/** What every record operation needs besides the request: where records live and the limits. */
export interface DataContext {
  readonly driver: StorageDriver;
  /** Maximum request body size in bytes. */
  readonly bodyLimit: number;
  /** Current time in Unix milliseconds (replaceable in tests). */
  readonly now: () => number;
  /** The largest page a list answers (default 1000). */
  readonly maxPageSize?: number;
  /** The key that signs list cursors (HMAC), fetched once; see `createService`. */
  readonly cursorKey?: () => Promise<string>;
  /** Every entity of the service by its upper-case name, for `expand=` (SPEC §11). */
  readonly entities?: ReadonlyMap<string, ExpandableEntity>;
}
