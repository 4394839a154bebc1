/**
 * Group commit of the SQLite driver: concurrent writes share one IMMEDIATE transaction (and so
 * one fsync), each inside its own savepoint, and are acknowledged only after the commit that
 * covers them (see `WriteQueue.write`). Off (`SQLITE_GROUP_COMMIT=off`), each write commits alone.
 */
import type Database from 'better-sqlite3';
import type { StoredChange } from '../driver.js';
import { mapError } from './errors.js';

/** A write waiting for its group commit. */
interface QueuedWrite {
  readonly work: (grouped: boolean) => Written<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Set once the write ran (and stays set only if its savepoint was kept). */
  written?: Written<unknown>;
  error?: unknown;
}

/** The result of a write transaction and the changes it appended. */
export interface Written<T> {
  readonly result: T;
  readonly changes: readonly StoredChange[];
}

/** The writes of one driver, committed alone or in groups. */
export class WriteQueue {
  /** Write transactions run so far (a group commit counts once). */
  commits = 0;
  /** Writes waiting for the next group commit, in arrival order. */
  private queue: QueuedWrite[] = [];
  /** Whether a group commit is scheduled (`setImmediate`) and not yet run. */
  private flushScheduled = false;
  /** Runs a group of writes in one IMMEDIATE transaction, one savepoint each. */
  private group: ((batch: readonly QueuedWrite[]) => void) | undefined;

  /**
   * @param database the open connection (throws `StorageUnavailableError` when there is none)
   * @param emit tells the watchers of the outbox what a write committed
   * @param grouped whether concurrent writes share a transaction
   */
  constructor(
    private readonly database: () => Database.Database,
    private readonly emit: (committed: readonly StoredChange[]) => void,
    private readonly grouped: boolean,
  ) {}

  /** True while writes wait for their commit. */
  get pending(): boolean {
    return this.queue.length > 0;
  }

  /** Forgets the group transaction prepared on the connection (it is closing). */
  reset(): void {
    this.group = undefined;
  }

  /**
   * Runs one write transaction. With group commit, the write waits in a queue that is committed
   * right after the event loop's current I/O phase (`setImmediate`, no timer): the writes whose
   * requests arrived meanwhile — typically during the previous commit, which blocks the loop —
   * share one IMMEDIATE transaction and so one fsync, each inside its own savepoint, so that a
   * failing write rolls back only itself and gets its own error. Every write is acknowledged
   * (its promise settles) only after the commit that covers it; the change events of the group
   * reach the watchers in seq order. `work(grouped)` runs the write's statements, in a
   * transaction of its own when `grouped` is false and as a savepoint when it is true.
   */
  write<T>(work: (grouped: boolean) => Written<T>): Promise<T> {
    if (!this.grouped) {
      try {
        this.database();
        this.commits++;
        const { result, changes } = work(false);
        this.emit(changes);
        return Promise.resolve(result);
      } catch (error) {
        return Promise.reject(mapError(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits the queued writes as one group and settles their promises. */
  flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    try {
      this.database();
      if (batch.length === 1) {
        // Alone: its own transaction, without a savepoint.
        const item = batch[0]!;
        try {
          item.written = item.work(false);
        } catch (error) {
          item.error = error;
        }
      } else {
        this.groupTransaction()(batch);
      }
      this.commits++;
    } catch (error) {
      // The group's transaction failed as a whole (BEGIN, COMMIT, or storage lost in between):
      // nothing of it was committed.
      const mapped = mapError(error);
      for (const item of batch) item.reject(mapped);
      return;
    }
    for (const item of batch) {
      if (item.written !== undefined) this.emit(item.written.changes);
    }
    for (const item of batch) {
      if (item.written !== undefined) item.resolve(item.written.result);
      else item.reject(mapError(item.error));
    }
  }

  private groupTransaction(): (batch: readonly QueuedWrite[]) => void {
    if (this.group !== undefined) return this.group;
    const db = this.database();
    const run = db.transaction((batch: readonly QueuedWrite[]) => {
      for (const item of batch) {
        try {
          item.written = item.work(true);
        } catch (error) {
          // A failure that ended the transaction (SQLite rolls back on some errors) fails the
          // whole group; any other rolled back the write's own savepoint only.
          if (!db.inTransaction) throw error;
          item.error = error;
        }
      }
    });
    this.group = run.immediate;
    return this.group;
  }
}
