/**
 * The types worker: compiles JSON Schemas to TypeScript declarations off the main thread (see
 * ./record-types.ts). It loads json-schema-to-typescript as soon as it starts, while the main
 * thread is still reading and checking the schema.
 */
import { parentPort } from 'node:worker_threads';
import type { JsonSchema } from './json-schema.js';
import { compileDefinitions } from './types-compiler.js';

/** A request of the main thread. */
export interface TypesWorkerRequest {
  readonly id: number;
  readonly $defs: Record<string, JsonSchema>;
}

/** The answer to a request: the compiled text, or why there is none. */
export type TypesWorkerResponse =
  { readonly id: number; readonly text: string } | { readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('types-worker.js runs as a worker thread');
void import('json-schema-to-typescript');
port.on('message', (request: TypesWorkerRequest) => {
  compileDefinitions(request.$defs).then(
    (text) => port.postMessage({ id: request.id, text } satisfies TypesWorkerResponse),
    (error: unknown) =>
      port.postMessage({
        id: request.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      } satisfies TypesWorkerResponse),
  );
});
