/**
 * The generator's worker thread (see ./index.ts). As soon as it starts it loads what its tasks
 * need — the schema loader, json-schema-to-typescript, then Biome's binary — while
 * the main thread reads the schema and builds the model.
 */
import { parentPort } from 'node:worker_threads';
import { enableCompileCache } from '../compile-cache.js';
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
// The thread's own modules are compiled by it: the cache is turned on per thread.
enableCompileCache();
// The schema loader first: the previous schema is asked for first, and sooner.
void import('../migrate/index.js')
  .then(() => import('json-schema-to-typescript'))
  .then(() => Promise.all([import('../generate/formatter.js'), import('../generate/format.js')]))
  .then(([formatter, format]) => formatter.prepareBiome(format.BIOME_CONFIGURATION));
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
