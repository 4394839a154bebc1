/**
 * The tasks the generator's worker thread runs (./thread.ts): pure functions of their input,
 * which the main thread would otherwise run itself while it has other work to do.
 */
import type { JsonSchema } from '../generate/json-schema.js';
import type { PreviousSchema } from '../migrate/index.js';
import type { JsonValue } from '../schema/types.js';

/** What the main thread asks for. */
export type WorkerTask =
  | { readonly kind: 'types'; readonly $defs: Record<string, JsonSchema> }
  | { readonly kind: 'previous'; readonly documents: readonly JsonValue[]; readonly file: string };

/** What each task gives back. */
export interface WorkerResults {
  /** The TypeScript declarations of `$defs` (../generate/types-compiler.ts). */
  readonly types: string;
  /** The previous generation's schema, loaded (../migrate `loadPreviousSchema`). */
  readonly previous: PreviousSchema;
}

/** Runs a task in the calling thread. */
export async function runTask<K extends WorkerTask['kind']>(
  task: Extract<WorkerTask, { kind: K }>,
): Promise<WorkerResults[K]>;
export async function runTask(task: WorkerTask): Promise<WorkerResults[WorkerTask['kind']]> {
  switch (task.kind) {
    case 'types': {
      const { compileDefinitions } = await import('../generate/types-compiler.js');
      return compileDefinitions(task.$defs);
    }
    case 'previous': {
      const { loadPreviousSchema } = await import('../migrate/index.js');
      return loadPreviousSchema(task.documents, task.file);
    }
  }
}
