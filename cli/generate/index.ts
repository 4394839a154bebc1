/**
 * The generator: `generate` is the list of its phases, each a function of what the ones before it
 * gave (docs/architecture.md draws them):
 *
 *     load → validate → model      buildModel (cli/model/build.ts), once
 *     plan migrations              planMigrationFiles (cli/migrate/plan.ts)
 *     emit                         emitService (./emit.ts) and the record types (./record-types.ts)
 *     format                       formatFiles (./format.ts), Biome in this process (./formatter.ts)
 *     manifest                     manifestOf (below; cli/manifest)
 *
 * It reads none of the user's files and starts no process (the generator's own templates, version
 * and fingerprint are loaded from its package once, like its code): the caller hands it the inputs
 * and the previous generation, and decides what to do with the files it returns (cli/plan,
 * cli/run). What only
 * makes it quicker — the cache of the last generation's files and the worker thread — comes in
 * one optional argument, `Speedups`; without it the result is the same.
 */
import { createRequire } from 'node:module';
import type { AccessSource } from '../access/index.js';
import type { Diagnostic } from '../diagnostics.js';
import { headerLine, withHeader } from '../header.js';
import {
  contentHash,
  MANIFEST_FORMAT,
  MANIFEST_PATH,
  renderManifest,
  type Invocation,
  type Manifest,
} from '../manifest/index.js';
import type { PreviousSchema, SchemaRename } from '../migrate/index.js';
import { planMigrationFiles, type MigrationPlan, type MigrationStep } from '../migrate/plan.js';
import { buildModel, type BuiltModel } from '../model/build.js';
import { withPositions } from '../model/positions.js';
import type { SchemaModel, ServedEntity, ServiceModel } from '../model/types.js';
import type { RestConfigSource } from '../restconfig/index.js';
import { loadSchemas } from '../schema/index.js';
import type { SchemaSource } from '../schema/types.js';
import { runTask, type TaskRunner } from '../worker/tasks.js';
import { renderCache, type FormatCache } from './cache.js';
import {
  emitService,
  entityKey,
  entityKeys,
  starterHooksFile,
  type EmitOptions,
  type FileOwner,
} from './emit.js';
import {
  emittedHash,
  formatFiles,
  textOf,
  type FormattedFile,
  type UnformattedFile,
} from './format.js';
import { entitySchemas } from './json-schema.js';
import { compileRecordTypes, type TypesRequest } from './record-types.js';

export { CACHE_PATH, reusableFiles, type FormatCache } from './cache.js';
export {
  DRIVER_CHOICES,
  hooksPath,
  type DriverChoice,
  type EmitOptions,
  type FileOwner,
} from './emit.js';

/**
 * One file of the generated service: a path relative to the output folder, its text, and who owns
 * it (generator files are rewritten on every run, user files are only created when absent; the
 * manifest is the generator's record of the run).
 */
export interface GeneratedFile {
  readonly path: string;
  readonly contents: string;
  readonly owner: FileOwner | 'manifest';
}

/** What the output folder holds from an earlier generation. */
export interface PreviousOutput {
  /** Its manifest, when it has a usable one. */
  readonly manifest?: Manifest;
  /** File names in `migrations/`. */
  readonly migrationFiles: readonly string[];
  /** Text of the files the manifest lists, as they are now. */
  readonly files: ReadonlyMap<string, string>;
  /**
   * The user's files that exist (`src/hooks/*.ts`, `src/server.ts`, `.gitignore`): they are kept
   * as they are, so their starter text is not formatted.
   */
  readonly userFiles?: ReadonlySet<string>;
}

/** Everything a generation is made from. */
export interface GenerateInput {
  readonly sources: readonly SchemaSource[];
  readonly restConfig?: RestConfigSource;
  readonly access?: AccessSource;
  readonly options: EmitOptions;
  /** The previous generation of the output folder; none for a first one. */
  readonly previous?: PreviousOutput;
  /** Accept migrations that lose stored data. */
  readonly allowDataLoss?: boolean;
  /** Migrations clear dangling values of references that gain `onDelete` (SPEC §11). */
  readonly clearDanglingReferences?: boolean;
  /** The invocation to record in the manifest, for `generate` without arguments. */
  readonly invocation?: Invocation;
}

/**
 * What makes a generation quicker without changing its result: the files of the last generation
 * that may be reused (`reusableFiles` of ./cache.ts, from the output folder's cache file), and
 * where pure tasks run (`inWorker` of cli/worker runs them in the worker thread). Without them,
 * everything is made afresh in the calling thread.
 */
export interface Speedups {
  readonly cache?: FormatCache;
  readonly run?: TaskRunner;
}

/** Outcome of `generate`: the whole output when the input was valid, diagnostics otherwise. */
export interface GenerateResult {
  /**
   * Every file of the output, sorted by path: the service, the new migration (if the schema
   * change needs one) and the manifest. None when there are diagnostics.
   */
  readonly files: readonly GeneratedFile[];
  readonly diagnostics: readonly Diagnostic[];
  readonly model: ServiceModel | undefined;
  /** What the new migration does to stored data. */
  readonly migrationSteps: readonly MigrationStep[];
  /** Entity and field renames of the schema change, which the user's code follows. */
  readonly renames: readonly SchemaRename[];
  /**
   * The text of the cache file (`CACHE_PATH`) for the next generation: not part of the output,
   * never committed. Empty when there are diagnostics.
   */
  readonly cache: string;
  /**
   * The starter hooks files of the previous generation's entities that are gone, by path, as the
   * generator wrote them: such a file still unedited goes with its entity (cli/plan).
   */
  readonly formerStarters?: ReadonlyMap<string, string>;
}

/**
 * The whole generator as one pure function of its input: the phases, in order. `generate`,
 * `check`, `dev`, `validate` and the tests all call it.
 */
export async function generate(
  input: GenerateInput,
  speedups: Speedups = {},
): Promise<GenerateResult> {
  const run = speedups.run ?? runTask;
  const cache = speedups.cache ?? new Map();
  // Loaded alongside the model (in the worker thread, when `run` has one).
  const previousSchema = loadPreviousSchema(input.previous, run);

  const built = buildModel({ ...input, sourceNames: input.options.sourceNames });
  if (built.model === undefined) return failed(built.diagnostics);
  const model = built.model;

  const previous = await previousSchema;
  const migrations = planMigrationPhase(input, built, model, previous);
  if (migrations.diagnostics.length > 0) return failed(asTyped(migrations.diagnostics, input));

  const emitted = emitPhase(model, input, cache, run);

  const formatted = await formatPhase(emitted, cache, run);

  const files: GeneratedFile[] = [
    ...formatted.files,
    ...emitted.kept,
    ...migrations.files.map((file) => ({ ...file, owner: 'generator' as const })),
  ];
  const manifest = manifestOf(model, files, input);
  files.push({ path: MANIFEST_PATH, contents: renderManifest(manifest), owner: 'manifest' });
  const formerStarters = await formerStarterFiles(previous, files, run);
  return {
    files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    diagnostics: [],
    model,
    migrationSteps: migrations.steps,
    renames: migrations.renames,
    cache: renderCache(formatted.emitted, formatted.files),
    ...(formerStarters === undefined ? {} : { formerStarters }),
  };
}

/**
 * The model names its schema files as generated files do (relative to the output folder);
 * diagnostics name them as the user typed them, like those of the schema itself.
 */
function asTyped(diagnostics: readonly Diagnostic[], input: GenerateInput): Diagnostic[] {
  const typed = new Map(
    Object.entries(input.options.sourceNames ?? {}).map(([given, inFolder]) => [inFolder, given]),
  );
  return diagnostics.map((diagnostic) => {
    const given = typed.get(diagnostic.file);
    return given === undefined ? diagnostic : { ...diagnostic, file: given };
  });
}

/**
 * The starter hooks files of the previous generation's entities that this one no longer has, as
 * the generator wrote them (formatted), so that cli/plan can tell an unedited one from an edited.
 */
async function formerStarterFiles(
  previous: PreviousSchema | undefined,
  files: readonly GeneratedFile[],
  run: TaskRunner,
): Promise<ReadonlyMap<string, string> | undefined> {
  if (previous === undefined || !('entities' in previous)) return undefined;
  const paths = new Set(files.map((file) => file.path));
  const gone = previous.entities.map(starterHooksFile).filter((file) => !paths.has(file.path));
  if (gone.length === 0) return undefined;
  const formatted = await formatFiles(
    gone.map((file) => ({ ...file, owner: 'user' as const })),
    new Map(),
    run,
  );
  return new Map(formatted.files.map((file) => [file.path, textOf(file.contents)]));
}

/** The previous generation's schema, loaded for the migrations planner; none on a first one. */
function loadPreviousSchema(
  previous: PreviousOutput | undefined,
  run: TaskRunner,
): Promise<PreviousSchema | undefined> {
  const documents = previous?.manifest?.schema;
  if (documents === undefined) return Promise.resolve(undefined);
  return run({ kind: 'previous', documents, file: MANIFEST_PATH });
}

/**
 * The migration from the previous generation's schema to this model. Its problems point into the
 * schema: when the model was built without source positions (the quick parse), a careful parse
 * lends them, and the plan is made again to say where — the model is not built again.
 */
function planMigrationPhase(
  input: GenerateInput,
  built: BuiltModel,
  model: ServiceModel,
  previous: PreviousSchema | undefined,
): MigrationPlan {
  const plan = (planned: ServiceModel): MigrationPlan =>
    planMigrationFiles(input.previous?.manifest?.schema, planned, {
      allowDataLoss: input.allowDataLoss ?? false,
      clearDanglingReferences: input.clearDanglingReferences === true,
      existingMigrations: input.previous?.migrationFiles ?? [],
      ...(previous === undefined ? {} : { previous }),
    });
  const migrations = plan(model);
  if (migrations.diagnostics.length === 0 || built.exactPositions) return migrations;
  return plan(withPositions(model, loadSchemas(input.sources, 'exact').entities));
}

/**
 * What the emit phase gives: the files to format — the templates' now, the `types.ts` files when
 * they are compiled — and the user's files kept as they are.
 */
interface Emitted {
  readonly toFormat: readonly UnformattedFile[];
  readonly types: Promise<readonly UnformattedFile[]>;
  readonly kept: readonly GeneratedFile[];
}

/**
 * Formats the emitted files: the templates' files in this thread while `run` (the worker thread)
 * still compiles the record types, then the `types.ts` files by `run`. The result is the same in
 * whatever order and thread the two parts are formatted: Biome formats each file on its own.
 */
async function formatPhase(
  emitted: Emitted,
  cache: FormatCache,
  run: TaskRunner,
): Promise<{ files: FormattedFile[]; emitted: Map<string, string> }> {
  const service = await formatFiles(emitted.toFormat, cache, runTask);
  const types = await formatFiles(await emitted.types, cache, run);
  return {
    files: [...service.files, ...types.files],
    emitted: new Map([...service.emitted, ...types.emitted]),
  };
}

/**
 * Every file of the service from the model, with its header: the templates' files, and `types.ts`
 * of every entity. A file whose cache key is in `cache` is not made (its `contents` is made only
 * when asked); the user's files that exist are kept, not formatted.
 */
function emitPhase(
  model: ServiceModel,
  input: GenerateInput,
  cache: FormatCache,
  run: TaskRunner,
): Emitted {
  const options: EmitOptions = {
    ...input.options,
    ...(input.options.restConfigFile === undefined && input.restConfig !== undefined
      ? { restConfigFile: input.restConfig.file }
      : {}),
    ...(input.options.accessFile === undefined && input.access !== undefined
      ? { accessFile: input.access.file }
      : {}),
  };
  const keys = entityKeys(model);
  // Compiled (in the worker thread, when `run` has one) while this one renders the rest.
  const types = recordTypeFiles(model, keys, cache, run);
  // Awaited by the format phase after the other files; a failure meanwhile is not unhandled.
  types.catch(() => undefined);
  const emitted = emitService(model, options, input.access?.text, keys).map(
    (file): UnformattedFile => {
      const { path, owner, contents, madeFrom } = file;
      if (owner === 'user') return { path, owner, contents };
      const header = headerLine(file.hash, file.sources);
      return {
        path,
        owner,
        contents: () => withHeader(path, textOf(contents), header),
        ...(madeFrom === undefined ? {} : { madeFrom: `${madeFrom}\0${header}` }),
      };
    },
  );
  const existing = input.previous?.userFiles ?? new Set<string>();
  const isKept = (file: UnformattedFile): boolean =>
    file.owner === 'user' && existing.has(file.path);
  return {
    toFormat: emitted.filter((file) => !isKept(file)),
    types,
    kept: emitted
      .filter(isKept)
      .map((file) => ({ path: file.path, owner: file.owner, contents: textOf(file.contents) })),
  };
}

/**
 * `types.ts` of every entity, compiled from its JSON Schema (./record-types.ts) — except where
 * the cache holds the file made from the entity's model: then neither its JSON Schema is made
 * nor the compiler asked.
 */
async function recordTypeFiles(
  model: ServiceModel,
  keys: ReadonlyMap<ServedEntity, string>,
  cache: FormatCache,
  run: TaskRunner,
): Promise<UnformattedFile[]> {
  const files: UnformattedFile[] = [];
  const requests: TypesRequest[] = [];
  const wanted = new Map<string, { path: string; madeFrom: string; entity: ServedEntity }>();
  for (const entity of model.entities) {
    const path = `src/entities/${entity.fileName}/types.ts`;
    // Its JSON Schema is made from the entity's model: the entity's key stands for it.
    const madeFrom = `${RECORD_TYPES_COMPILER} types ${keys.get(entity) ?? entityKey(entity)}`;
    const cached = cache.get(path);
    if (cached !== undefined && cached.emitted === emittedHash(madeFrom)) {
      files.push({ path, contents: cached.formatted, owner: 'generator', madeFrom });
    } else {
      wanted.set(entity.name, { path, madeFrom, entity });
      const { schemas } = entitySchemas(entity, (name) => `#/$defs/${name}`);
      requests.push({ entity: entity.name, schemas });
    }
  }
  const compiled = await compileRecordTypes(requests, run);
  for (const [name, { path, madeFrom, entity }] of wanted) {
    const header = headerLine(entity.documentHash, [entity.sourceFile]);
    files.push({
      path,
      owner: 'generator',
      madeFrom,
      contents: withHeader(path, `${compiled.get(name) ?? ''}\n`, header),
    });
  }
  return files;
}

/** The compiler of `types.ts` and its version: part of their cache key. */
const RECORD_TYPES_COMPILER = `json-schema-to-typescript ${
  (
    createRequire(import.meta.url)('json-schema-to-typescript/package.json') as {
      version: string;
    }
  ).version
}`;

/**
 * The manifest of this generation: how it was made, its schema, and a hash per owned file —
 * what a reviewer or `check` needs, no cache key.
 */
function manifestOf(
  model: SchemaModel,
  files: readonly GeneratedFile[],
  input: GenerateInput,
): Manifest {
  const hashes: Record<string, string> = {};
  for (const file of files)
    if (file.owner === 'generator') hashes[file.path] = contentHash(file.contents);
  // Migrations are append-only: the ones written earlier stay owned and listed.
  for (const [path, hash] of Object.entries(input.previous?.manifest?.files ?? {}))
    if (path.startsWith('migrations/') && hashes[path] === undefined) hashes[path] = hash;
  return {
    format: MANIFEST_FORMAT,
    ...(input.invocation === undefined ? {} : { invocation: input.invocation }),
    schemaHash: model.hash,
    schema: model.entities.map((entity) => entity.document),
    files: hashes,
  };
}

function failed(diagnostics: readonly Diagnostic[]): GenerateResult {
  return { files: [], diagnostics, model: undefined, migrationSteps: [], renames: [], cache: '' };
}
