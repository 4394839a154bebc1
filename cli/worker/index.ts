/**
 * The generator's worker thread: work that does not need the main thread's results runs there
 * while the main thread does the rest — compiling `types.ts` with json-schema-to-typescript (which
 * also takes long to load), loading the previous generation's schema for the migration planner.
 * On a machine with two cores or more a regeneration waits for neither.
 *
 * The thread runs when the generator runs built; from the sources (the tests) the tasks run in
 * the calling thread. It never keeps the process alive while it has nothing to do.
 */
import { Worker } from 'node:worker_threads';
import { runTask, type WorkerResults, type WorkerTask } from './tasks.js';
import type { ThreadRequest, ThreadResponse } from './thread.js';

/** The thread's module, when the generator runs built. */
const THREAD_MODULE = import.meta.url.endsWith('.js')
  ? new URL('./thread.js', import.meta.url)
  : undefined;

interface Running {
  readonly thread: Worker;
  readonly pending: Map<
    number,
    { resolve: (result: unknown) => void; reject: (error: Error) => void }
  >;
  next: number;
}

let running: Running | undefined;

/**
 * Starts the worker thread, so that it has loaded what it needs when the first task comes.
 * Nothing when running from the sources or when it runs already.
 */
export function startWorker(): void {
  if (running !== undefined || THREAD_MODULE === undefined) return;
  const thread = new Worker(THREAD_MODULE);
  const started: Running = { thread, pending: new Map(), next: 0 };
  running = started;
  const fail = (error: Error): void => {
    if (running === started) running = undefined;
    for (const { reject } of started.pending.values()) reject(error);
    started.pending.clear();
  };
  thread.on('message', (response: ThreadResponse) => {
    const waiting = started.pending.get(response.id);
    if (waiting === undefined) return;
    started.pending.delete(response.id);
    if (started.pending.size === 0) thread.unref();
    if ('error' in response)
      waiting.reject(new Error(`in the generator's worker: ${response.error}`));
    else waiting.resolve(response.result);
  });
  thread.on('error', fail);
  thread.on('exit', (code) =>
    fail(new Error(`the generator's worker stopped (exit code ${code})`)),
  );
  thread.unref();
}

/** Runs a task in the worker thread when it can run, else in this one. */
export function inWorker<K extends WorkerTask['kind']>(
  task: Extract<WorkerTask, { kind: K }>,
): Promise<WorkerResults[K]> {
  startWorker();
  const worker = running;
  if (worker === undefined) return runTask(task);
  return new Promise((resolve, reject) => {
    const id = worker.next++;
    worker.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
    worker.thread.ref();
    worker.thread.postMessage({ id, task } satisfies ThreadRequest);
  });
}
