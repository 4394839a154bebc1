import type { StorageDriver } from './driver.js';

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
}
