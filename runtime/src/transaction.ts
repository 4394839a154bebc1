/**
 * Writes of several records in one transaction (upsert of a list, changes by filter, batches):
 * `atomically` runs its work in the driver's transaction and marks the asynchronous context, so
 * that the per-record locks of single writes (record-lock.ts) step aside — the transaction already
 * orders the writes it makes, and waiting there for a writer that waits for the transaction would
 * never end.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StorageDriver } from './driver.js';
import { HttpError } from './errors.js';

const scope = new AsyncLocalStorage<true>();

/** Whether the caller runs inside `atomically`'s work. */
export function inTransaction(): boolean {
  return scope.getStore() === true;
}

/**
 * Runs `work` in one transaction of `driver`: everything it writes commits together or not at
 * all. Inside a running one, `work` simply joins it. A driver without transactions answers 501.
 */
export async function atomically<T>(driver: StorageDriver, work: () => Promise<T>): Promise<T> {
  if (inTransaction()) return await work();
  if (driver.transaction === undefined) {
    throw new HttpError(
      501,
      'The storage driver of this service has no transactions: writes of several records at once are not available',
    );
  }
  return await driver.transaction(() => scope.run(true, work));
}
