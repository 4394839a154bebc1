/**
 * Writes to one record inside one service process run one after another. PUT, PATCH and DELETE
 * read the record, then write it only if its version did not move (optimistic concurrency): two
 * concurrent writes of the same record would otherwise make one of them retry, and under many
 * writers a client that never asked for optimistic concurrency (no If-Match) could get a 409.
 * Queued here they never conflict with each other; writers in other processes are still
 * handled by the version check and its retries.
 */
import { inTransaction } from './transaction.js';

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `work` once every earlier write of the same record (table and id) has finished. Inside a
 * transaction (transaction.ts) it runs at once: the transaction orders its own writes.
 */
export async function withRecordLock<T>(
  table: string,
  id: string,
  work: () => Promise<T>,
): Promise<T> {
  if (inTransaction()) return await work();
  const key = `${table}\u0000${id}`;
  const before = queues.get(key) ?? Promise.resolve();
  const mine = before.then(work, work);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  try {
    return await mine;
  } finally {
    // The last writer of a record removes its queue, so the map holds only records in use.
    if (queues.get(key) === settled) queues.delete(key);
  }
}
