import { createRequire } from 'node:module';
import type { AccessSource } from '../access/index.js';
import type { Diagnostic } from '../diagnostics.js';
import {
  contentHash,
  MANIFEST_FORMAT,
  MANIFEST_PATH,
  renderManifest,
  type Invocation,
  type Manifest,
} from '../manifest/index.js';
import { planMigrationFiles, type MigrationStep } from '../plan/migrations.js';
import type { SchemaRename } from '../migrate/index.js';
import { buildModel } from '../model/build.js';
import { inWorker } from '../worker/index.js';
import type { SchemaModel, ServedEntity, ServiceModel } from '../model/types.js';
import type { RestConfigSource } from '../restconfig/index.js';
import type { SchemaSource } from '../schema/types.js';
import {
  emitService,
  entityKey,
  entityKeys,
  headerLine,
  REGENERATE_COMMAND,
  type EmitOptions,
  type FileOwner,
} from './emit.js';
import {
  emittedHash,
  formatFiles,
  textOf,
  type FormatCache,
  type UnformattedFile,
} from './format.js';
import { entitySchemas } from './json-schema.js';
import { compileRecordTypes, type TypesRequest } from './record-types.js';

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
  /** Text of the files the manifest lists, as they are now (to reuse their formatted text). */
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
  /** The invocation to record in the manifest, for `generate` without arguments. */
  readonly invocation?: Invocation;
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
}

/**
 * The whole generator as one pure function: load → validate → normalize → emit → format, plus
 * the migration from the previous generation and the manifest of this one. Never touches the
 * disk; what to do with the files already in the output folder is decided by `planOutput`
 * (cli/plan). `generate`, `check`, `dev`, `validate` and the tests all call it.
 */
export async function generate(input: GenerateInput): Promise<GenerateResult> {
  const modelInput = { ...input, sourceNames: input.options.sourceNames };
  const previous = input.previous;
  const previousSchema = previous?.manifest?.schema;
  // Loaded in the worker thread while this one builds the new model.
  const loadingPrevious =
    previousSchema === undefined
      ? undefined
      : inWorker({ kind: 'previous', documents: previousSchema, file: MANIFEST_PATH });
  let built = buildModel(modelInput);
  const previousLoaded = await loadingPrevious;
  if (built.model === undefined) return failed(built.diagnostics);
  const planMigrations = (model: ServiceModel): ReturnType<typeof planMigrationFiles> =>
    planMigrationFiles(previousSchema, model, {
      allowDataLoss: input.allowDataLoss ?? false,
      existingMigrations: previous?.migrationFiles ?? [],
      ...(previousLoaded === undefined ? {} : { previous: previousLoaded }),
    });
  let migrations = planMigrations(built.model);
  if (migrations.diagnostics.length > 0 && !built.exactPositions) {
    // Its problems point into the schema: build it again with positions to say where.
    built = buildModel(modelInput, 'exact');
    if (built.model === undefined) return failed(built.diagnostics);
    migrations = planMigrations(built.model);
  }
  if (migrations.diagnostics.length > 0) return failed(migrations.diagnostics);
  const model = built.model;

  const options: EmitOptions = {
    ...input.options,
    ...(input.options.restConfigFile === undefined && input.restConfig !== undefined
      ? { restConfigFile: input.restConfig.file }
      : {}),
    ...(input.options.accessFile === undefined && input.access !== undefined
      ? { accessFile: input.access.file }
      : {}),
  };
  const cache = formatCache(previous);
  const keys = entityKeys(model);
  // Compiled in the worker thread while this one renders the rest.
  const types = recordTypeFiles(model, keys, cache);
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
  const kept = previous?.userFiles ?? new Set<string>();
  const formatted = await formatFiles(
    [
      ...emitted.filter((file) => !(file.owner === 'user' && kept.has(file.path))),
      ...(await types),
    ],
    cache,
  );
  const keptFiles = emitted
    .filter((file) => file.owner === 'user' && kept.has(file.path))
    .map((file) => ({ ...file, contents: textOf(file.contents) }));
  const files: GeneratedFile[] = [
    ...formatted.files,
    ...keptFiles,
    ...migrations.files.map((file) => ({ ...file, owner: 'generator' as const })),
  ];
  const manifest = manifestOf(model, files, formatted.emitted, input);
  files.push({ path: MANIFEST_PATH, contents: renderManifest(manifest), owner: 'manifest' });
  return {
    files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    diagnostics: [],
    model,
    migrationSteps: migrations.steps,
    renames: migrations.renames,
  };
}

/**
 * `types.ts` of every entity, compiled from its JSON Schema (./record-types.ts) — except where
 * the entity's model is the one the file on disk was made from: then the file stays as it is,
 * and neither its JSON Schema is made nor the compiler asked.
 */
async function recordTypeFiles(
  model: ServiceModel,
  keys: ReadonlyMap<ServedEntity, string>,
  cache: FormatCache,
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
  const compiled = await compileRecordTypes(requests);
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

/** The manifest of this generation: how it was made, its schema, and a hash per owned file. */
function manifestOf(
  model: SchemaModel,
  files: readonly GeneratedFile[],
  emitted: ReadonlyMap<string, string>,
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
    emitted: Object.fromEntries(emitted),
  };
}

/**
 * The formatted text of the previous generation's files, by path, with the hash of what the
 * templates had emitted for them: a file whose emitted text did not change is not formatted
 * again. Only files still as the manifest recorded them count.
 */
function formatCache(previous: PreviousOutput | undefined): FormatCache {
  const cache = new Map<string, { emitted: string; formatted: string }>();
  const manifest = previous?.manifest;
  if (manifest === undefined || previous === undefined) return cache;
  for (const [path, emitted] of Object.entries(manifest.emitted ?? {})) {
    const text = previous.files.get(path);
    if (text !== undefined && contentHash(text) === manifest.files[path])
      cache.set(path, { emitted, formatted: text });
  }
  return cache;
}

function failed(diagnostics: readonly Diagnostic[]): GenerateResult {
  return { files: [], diagnostics, model: undefined, migrationSteps: [], renames: [] };
}

/**
 * Adds the "generated, do not edit" header in the comment syntax of the file type. The command
 * is the same wherever and by whomever the service was generated: the options are remembered in
 * the folder's manifest, so repeating the generation needs none.
 */
function withHeader(path: string, contents: string, header: string): string {
  const command = `Regenerate: ${REGENERATE_COMMAND}`;
  if (path.endsWith('.ts') || path.endsWith('tsconfig.json'))
    return `// ${header}\n// ${command}\n\n${contents}`;
  if (path.endsWith('.md')) return `<!-- ${header} -->\n<!-- ${command} -->\n\n${contents}`;
  // package.json carries the header in its "//" property (JSON has no comments).
  return contents;
}
