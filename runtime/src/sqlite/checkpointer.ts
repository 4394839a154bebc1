/**
 * Checkpoints of a file database off the request path. In WAL mode every commit appends the pages
 * it changed to the WAL, and SQLite copies them back into the database (a checkpoint) once the WAL
 * holds 1 000 pages — inside the commit that crossed the line, so the write request that happens to
 * commit it pays for every page written since (a fifth of a 10 000-record insert into a table of
 * 100 000 rows with two indexes). Here a worker thread (checkpoint-worker.ts) with its own
 * connection runs a PASSIVE checkpoint shortly after writes committed, while the main connection
 * keeps serving; it never waits for locks, and a checkpoint a reader holds back is finished by a
 * later one. The main connection keeps SQLite's own checkpoint as a bound (`WAL_BOUND_PAGES`), for
 * when writes outrun the worker.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { CheckpointerData, CheckpointResponse } from './checkpoint-worker.js';

/** The WAL size (in pages) at which the main connection still checkpoints by itself. */
export const WAL_BOUND_PAGES = 10_000;

/** How long after a commit the worker checkpoints (writes meanwhile share the checkpoint). */
const CHECKPOINT_DELAY_MS = 50;

/**
 * The compiled worker script next to this module; when this module runs from its TypeScript
 * sources (tests), the built copy in `dist/`.
 */
function workerFile(): URL {
  const beside = new URL('./checkpoint-worker.js', import.meta.url);
  if (existsSync(beside)) return beside;
  return new URL('../../dist/sqlite/checkpoint-worker.js', import.meta.url);
}

/** What the checkpointer did so far (`SqliteDriver.diagnostics()`). */
export interface CheckpointStats {
  /** Checkpoints the worker ran. */
  readonly checkpoints: number;
  /** Frames in the WAL at the last one, and how many of them it had copied. */
  readonly lastLog: number;
  readonly lastCheckpointed: number;
  /** The last error the worker's connection raised, if any. */
  readonly lastError: string | undefined;
}

export class Checkpointer {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** A commit came after the checkpoint now running was asked for. */
  private again = false;
  private closed = false;
  private stats: CheckpointStats = {
    checkpoints: 0,
    lastLog: 0,
    lastCheckpointed: 0,
    lastError: undefined,
  };

  constructor(
    private readonly filename: string,
    private readonly busyTimeoutMs: number,
    /** Called once the worker failed: the main connection then checkpoints as SQLite does. */
    private readonly gaveUp: () => void,
  ) {}

  /** What the checkpointer did so far. */
  get done(): CheckpointStats {
    return this.stats;
  }

  /** A write committed: a checkpoint follows shortly (one for every commit meanwhile). */
  committed(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => this.run(), CHECKPOINT_DELAY_MS);
    this.timer.unref();
  }

  /** Stops the worker (its connection closes; a checkpoint it runs finishes first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const stop = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(stop);
  }

  private run(): void {
    this.timer = undefined;
    if (this.closed) return;
    this.running = true;
    this.again = false;
    try {
      this.start().postMessage('checkpoint');
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    }
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const data: CheckpointerData = { filename: this.filename, busyTimeoutMs: this.busyTimeoutMs };
    const worker = new Worker(workerFile(), { workerData: data });
    worker.unref();
    worker.on('message', (response: CheckpointResponse) => this.finished(response));
    worker.on('error', (error: Error) => this.fail(error.message));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.fail(`the checkpoint worker exited with code ${code}`);
    });
    this.worker = worker;
    return worker;
  }

  /**
   * The worker is gone or could not start (it could not open the file, say): the main connection
   * checkpoints by itself again, as SQLite does, and no other worker is started.
   */
  private fail(message: string): void {
    if (this.closed && this.worker === undefined) return;
    this.stats = { ...this.stats, lastError: message };
    this.closed = true;
    this.running = false;
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) void worker.terminate();
    this.gaveUp();
  }

  private finished(response: CheckpointResponse | undefined): void {
    this.running = false;
    if (response !== undefined) {
      this.stats =
        'error' in response
          ? { ...this.stats, lastError: response.error }
          : {
              checkpoints: this.stats.checkpoints + 1,
              lastLog: response.log,
              lastCheckpointed: response.checkpointed,
              lastError: this.stats.lastError,
            };
    }
    if (this.again) this.committed();
  }
}
