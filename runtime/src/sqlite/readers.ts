/**
 * The read pool of the SQLite driver: list and count queries of a file database run in worker
 * threads (reader-worker.ts), each with a read-only connection (WAL lets them read while the
 * main connection writes), so a slow query cannot stall the event loop — `/health`, reads by key
 * and writes go on. A query that runs longer than the time budget is stopped by terminating its
 * worker (a new one takes its place) and answered with 503.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { QueryTimeoutError } from '../errors.js';

export { QueryTimeoutError } from '../errors.js';
import type { ReaderData, ReadRequest, ReadResponse } from './reader-worker.js';
import type { RecordShape, RowTexts } from './record-text.js';
import { DEFAULT_CACHE_SIZE_KIB } from './options.js';

/** An error the worker's SQLite connection raised, with its code, for the driver's mapping. */
export class ReaderError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

interface Task {
  readonly request: Omit<ReadRequest, 'id'>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  /** Started when the task is queued: the budget covers waiting and running. */
  timer?: NodeJS.Timeout;
  reader?: Reader;
}

interface Reader {
  readonly worker: Worker;
  busy: { id: number; task: Task } | undefined;
  /** The worker has opened its connection (it says so with `{ ready: true }`). */
  ready: boolean;
}

/**
 * The compiled worker script next to this module; when this module runs from its TypeScript
 * sources (tests), the built copy in `dist/`.
 */
function workerFile(): URL {
  const beside = new URL('./reader-worker.js', import.meta.url);
  if (existsSync(beside)) return beside;
  return new URL('../../dist/sqlite/reader-worker.js', import.meta.url);
}

/**
 * better-sqlite3 cannot interrupt a statement: a reader whose query ran out of time is abandoned
 * (answered 503, terminated as soon as SQLite returns) and replaced. At most this many abandoned
 * readers per reader may still be finishing; beyond that, queries wait for them.
 */
const ABANDONED_PER_READER = 1;

export class ReadPool {
  private readonly readers: Reader[] = [];
  private readonly queue: Task[] = [];
  private abandoned = 0;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly filename: string,
    private readonly busyTimeoutMs: number,
    private readonly size: number,
    private readonly timeoutMs: number,
    private readonly cacheSizeKiB: number = DEFAULT_CACHE_SIZE_KIB,
  ) {}

  /** Runs a query in a reader: raw rows, or the first column of the first row. */
  run(sql: string, params: unknown[], mode: 'rows' | 'value'): Promise<unknown> {
    return this.submit({ sql, params, mode });
  }

  /**
   * Runs a list query in a reader, answering the JSON text of each row's record (the reader
   * writes them, so no row object crosses threads) and the raw row at index `keep`.
   */
  texts(sql: string, params: unknown[], shape: RecordShape, keep: number): Promise<RowTexts> {
    return this.submit({ sql, params, mode: 'texts', shape, keep }) as Promise<RowTexts>;
  }

  private submit(request: Omit<ReadRequest, 'id'>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the SQLite read pool is closed'));
    return new Promise((resolve, reject) => {
      const task: Task = { request, resolve, reject };
      task.timer = setTimeout(() => this.timedOut(task), this.timeoutMs);
      this.queue.push(task);
      this.dispatch();
    });
  }

  /** Stops every reader; queries still running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const closed = (): Error => new Error('the SQLite read pool is closed');
    for (const task of this.queue.splice(0)) this.settle(task, closed());
    const readers = this.readers.splice(0);
    const idle: Promise<number>[] = [];
    for (const reader of readers) {
      if (reader.busy === undefined) {
        idle.push(reader.worker.terminate());
        continue;
      }
      this.settle(reader.busy.task, closed());
      void reader.worker.terminate(); // ends once SQLite returns; never awaited
    }
    await Promise.all(idle);
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let reader = this.readers.find((candidate) => candidate.busy === undefined);
      const room = this.size * (1 + ABANDONED_PER_READER);
      if (
        reader === undefined &&
        this.readers.length < this.size &&
        this.readers.length + this.abandoned < room
      )
        reader = this.spawn();
      if (reader === undefined) return;
      const task = this.queue.shift()!;
      const id = this.nextId++;
      reader.busy = { id, task };
      task.reader = reader;
      // Starting a reader is the pool's work, not the query's: its clock restarts once it runs.
      if (!reader.ready) clearTimeout(task.timer);
      reader.worker.postMessage({ id, ...task.request } satisfies ReadRequest);
    }
  }

  private spawn(): Reader {
    const worker = new Worker(workerFile(), {
      workerData: {
        filename: this.filename,
        busyTimeoutMs: this.busyTimeoutMs,
        cacheSizeKiB: this.cacheSizeKiB,
      } satisfies ReaderData,
    });
    // A reader never keeps the process alive: the driver's close() ends them.
    worker.unref();
    const reader: Reader = { worker, busy: undefined, ready: false };
    worker.on('message', (response: ReadResponse | { readonly ready: true }) => {
      if ('ready' in response) {
        reader.ready = true;
        const waiting = reader.busy?.task;
        if (waiting !== undefined)
          waiting.timer = setTimeout(() => this.timedOut(waiting), this.timeoutMs);
        return;
      }
      const busy = reader.busy;
      if (busy === undefined || busy.id !== response.id) return;
      reader.busy = undefined;
      if ('error' in response)
        this.settle(busy.task, new ReaderError(response.error.message, response.error.code));
      else this.settle(busy.task, undefined, response.result);
      this.dispatch();
    });
    worker.on('error', (error) => {
      if (reader.busy !== undefined) this.settle(reader.busy.task, error);
      reader.busy = undefined;
      this.remove(reader);
      this.dispatch();
    });
    this.readers.push(reader);
    return reader;
  }

  private timedOut(task: Task): void {
    const queued = this.queue.indexOf(task);
    if (queued >= 0) this.queue.splice(queued, 1);
    const reader = task.reader;
    this.settle(task, new QueryTimeoutError(this.timeoutMs));
    if (reader === undefined || reader.busy?.task !== task) return;
    // The reader is abandoned: a fresh one serves the next queries meanwhile.
    reader.busy = undefined;
    this.remove(reader);
    this.abandoned++;
    reader.worker.once('exit', () => {
      this.abandoned--;
      this.dispatch();
    });
    void reader.worker.terminate();
    this.dispatch();
  }

  private settle(task: Task, error: Error | undefined, result?: unknown): void {
    clearTimeout(task.timer);
    if (error === undefined) task.resolve(result);
    else task.reject(error);
  }

  private remove(reader: Reader): void {
    const index = this.readers.indexOf(reader);
    if (index >= 0) this.readers.splice(index, 1);
  }
}
