/**
 * The generator's worker thread (see ./index.ts). As soon as it starts it loads what its tasks
 * need — the schema loader, then json-schema-to-typescript — while the main thread reads the
 * schema.
 */
import { parentPort } from 'node:worker_threads';
import { runTask, type WorkerTask } from './tasks.js';

/** A task of the main thread, numbered. */
export interface ThreadRequest {
  readonly id: number;
  readonly task: WorkerTask;
}

/** The answer to a request: the task's result, or why there is none. */
export type ThreadResponse =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('the generator worker runs as a worker thread');
// The schema loader first: the previous schema is asked for first, and sooner.
void import('../migrate/index.js').then(() => import('json-schema-to-typescript'));
port.on('message', ({ id, task }: ThreadRequest) => {
  runTask(task).then(
    (result) => port.postMessage({ id, result } satisfies ThreadResponse),
    (error: unknown) =>
      port.postMessage({
        id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      } satisfies ThreadResponse),
  );
});
