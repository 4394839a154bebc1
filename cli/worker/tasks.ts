/**
 * The tasks the generator's worker thread runs (./thread.ts): pure functions of their input,
 * which the main thread would otherwise run itself while it has other work to do.
 */
import type { FormatRequest } from '../generate/formatter.js';
import type { JsonSchema } from '../generate/json-schema.js';
import type { PreviousSchema } from '../migrate/index.js';
import type { JsonValue } from '../schema/types.js';

/** What the main thread asks for. */
export type WorkerTask =
  | { readonly kind: 'types'; readonly $defs: Record<string, JsonSchema> }
  | { readonly kind: 'previous'; readonly documents: readonly JsonValue[]; readonly file: string }
  | {
      readonly kind: 'format';
      readonly files: readonly FormatRequest[];
      readonly configuration: object;
    };

/** What each task gives back. */
export interface WorkerResults {
  /** The TypeScript declarations of `$defs` (../generate/types-compiler.ts). */
  readonly types: string;
  /** The previous generation's schema, loaded (../migrate `loadPreviousSchema`). */
  readonly previous: PreviousSchema;
  /** The files formatted by Biome (../generate/formatter.ts): path and text, in their order. */
  readonly format: readonly (readonly [string, string])[];
}

/**
 * Runs a task and gives its result: `runTask` in the calling thread, `inWorker` (./index.ts) in
 * the worker thread. The generator takes one as its `run` speed-up.
 */
export type TaskRunner = <K extends WorkerTask['kind']>(
  task: Extract<WorkerTask, { kind: K }>,
) => Promise<WorkerResults[K]>;

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
    case 'format': {
      const { formatWithBiome } = await import('../generate/formatter.js');
      return [...formatWithBiome(task.files, task.configuration)];
    }
  }
}
