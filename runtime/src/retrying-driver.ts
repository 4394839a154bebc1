/**
 * The storage driver `startServer` hands to the service: it wraps the real driver, opens it in
 * the background with exponential backoff while the storage is unreachable, and until then fails
 * every call with `StorageUnavailableError` (so the service answers 503 instead of not starting).
 *
 * The wrapper is built from `DRIVER_MEMBERS`, which says for every member of `StorageDriver` how
 * it is forwarded; a member added to the interface and not listed there is a compile error, so
 * the wrapper can no longer hide a driver method (it once hid `listTexts`).
 */
import type { ChangeFeed, OpenOptions, StorageDriver, TableDescriptor } from './driver.js';
import { isStorageUnavailableError, StorageUnavailableError } from './errors.js';
import type { Logger } from './logger.js';

/**
 * How the wrapper treats each member of `StorageDriver`:
 * - `guarded`: forwarded to the wrapped driver once it is open (a call before fails with
 *   `StorageUnavailableError`); offered only when the wrapped driver has it.
 * - `own`: implemented by the wrapper itself (opening, closing, the outbox, secrets).
 * - `value`: read from the wrapped driver as it is.
 */
export const DRIVER_MEMBERS = {
  dialect: 'value',
  readAfter: 'value',
  open: 'own',
  get: 'guarded',
  getNow: 'guarded',
  insert: 'guarded',
  nextSequence: 'guarded',
  update: 'guarded',
  getMany: 'guarded',
  updateMany: 'guarded',
  replaceMany: 'guarded',
  delete: 'guarded',
  deleteMany: 'guarded',
  transaction: 'guarded',
  getDeleted: 'guarded',
  restore: 'guarded',
  history: 'guarded',
  versionAt: 'guarded',
  trimHistory: 'guarded',
  list: 'guarded',
  listTexts: 'guarded',
  listTextsNow: 'guarded',
  listCounted: 'guarded',
  count: 'guarded',
  countNow: 'guarded',
  activity: 'guarded',
  ping: 'guarded',
  secret: 'own',
  changes: 'own',
  close: 'own',
} as const satisfies { readonly [K in keyof StorageDriver]-?: 'guarded' | 'own' | 'value' };

type Members = typeof DRIVER_MEMBERS;

/** The driver methods forwarded once the storage is open. */
export type GuardedMember = {
  [K in keyof Members]: Members[K] extends 'guarded' ? K : never;
}[keyof Members];

/** A function member of `StorageDriver`, as the wrapper calls it. */
type AnyMethod = (this: StorageDriver, ...args: unknown[]) => unknown;

const GUARDED = (Object.keys(DRIVER_MEMBERS) as (keyof Members)[]).filter(
  (name): name is GuardedMember => DRIVER_MEMBERS[name] === 'guarded',
);

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

/**
 * Wraps a driver whose storage may not be reachable yet: `open` is retried in the background with
 * exponential backoff, and until it succeeds every call fails with `StorageUnavailableError`.
 */
export class RetryingOpenDriver implements StorageDriver {
  private ready = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  // Defined in the constructor from `DRIVER_MEMBERS` (`declare`: no class-field initialiser).
  declare readonly get: StorageDriver['get'];
  declare readonly getNow: StorageDriver['getNow'];
  declare readonly insert: StorageDriver['insert'];
  declare readonly nextSequence: StorageDriver['nextSequence'];
  declare readonly update: StorageDriver['update'];
  declare readonly getMany: StorageDriver['getMany'];
  declare readonly updateMany: StorageDriver['updateMany'];
  declare readonly replaceMany: StorageDriver['replaceMany'];
  declare readonly delete: StorageDriver['delete'];
  declare readonly deleteMany: StorageDriver['deleteMany'];
  declare readonly transaction: StorageDriver['transaction'];
  declare readonly getDeleted: StorageDriver['getDeleted'];
  declare readonly restore: StorageDriver['restore'];
  declare readonly history: StorageDriver['history'];
  declare readonly versionAt: StorageDriver['versionAt'];
  declare readonly trimHistory: StorageDriver['trimHistory'];
  declare readonly list: StorageDriver['list'];
  declare readonly listTexts: StorageDriver['listTexts'];
  declare readonly listTextsNow: StorageDriver['listTextsNow'];
  declare readonly listCounted: StorageDriver['listCounted'];
  declare readonly count: StorageDriver['count'];
  declare readonly countNow: StorageDriver['countNow'];
  declare readonly activity: StorageDriver['activity'];
  declare readonly ping: StorageDriver['ping'];

  readonly changes: ChangeFeed | undefined;

  constructor(
    private readonly inner: StorageDriver,
    private readonly tables: readonly TableDescriptor[],
    private readonly openOptions: OpenOptions,
    private readonly logger: Logger,
    private readonly label: string,
    /** Called when the storage came back but cannot be used: the service must stop. */
    private readonly onFatal: (error: unknown) => void,
  ) {
    for (const name of GUARDED) {
      const method: unknown = inner[name];
      // Offered only when the driver has it: e.g. the list handler falls back to list() when a
      // driver has no listTexts.
      if (typeof method !== 'function') continue;
      Object.defineProperty(this, name, {
        // The check throws synchronously, as a hand-written `this.check().get(…)` did; `getNow`
        // must stay synchronous anyway.
        value: (...args: unknown[]): unknown => (method as AnyMethod).apply(this.check(), args),
        enumerable: true,
      });
    }
    const feed = inner.changes;
    // Reading the outbox waits for the storage like every other call; watching may start early.
    this.changes = feed && {
      read: async (after, limit) => {
        this.check();
        return feed.read(after, limit);
      },
      bounds: async () => {
        this.check();
        return feed.bounds();
      },
      trim: async (time) => {
        this.check();
        return feed.trim(time);
      },
      watch: (listener) => feed.watch(listener),
    };
  }

  get dialect(): string {
    return this.inner.dialect;
  }

  get readAfter(): boolean {
    return this.inner.readAfter === true;
  }

  /** Tries to open once; on an unreachable storage schedules retries instead of failing. */
  async openOnce(delay = FIRST_RETRY_MS): Promise<void> {
    try {
      await this.inner.open(this.tables, this.openOptions);
      this.ready = true;
      this.logger.info({ storage: this.label }, 'storage ready');
    } catch (error) {
      if (!isStorageUnavailableError(error) || this.closed) throw error;
      this.logger.warn(
        { storage: this.label, retryInMs: delay, err: error },
        'storage unavailable, retrying',
      );
      this.retryTimer = setTimeout(() => {
        this.openOnce(Math.min(delay * 2, MAX_RETRY_MS)).catch(this.onFatal);
      }, delay);
      this.retryTimer.unref();
    }
  }

  private check(): StorageDriver {
    if (!this.ready) throw new StorageUnavailableError('the storage is not ready yet');
    return this.inner;
  }

  /** Opening is `openOnce`'s job: the service's own `open` call has nothing left to do. */
  open(): Promise<void> {
    return Promise.resolve();
  }

  /** The wrapped driver's secret; a driver without secrets gets a fresh one each call. */
  async secret(name: string, create: () => string): Promise<string> {
    // Async, as every driver call: before the storage is ready it rejects, never throws.
    const inner = this.check();
    return inner.secret === undefined ? create() : inner.secret(name, create);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.ready) await this.inner.close();
  }
}
