import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { CACHE_PATH, type PreviousOutput } from '../generate/index.js';
import { invalidManifestDiagnostic, MANIFEST_PATH, parseManifest } from '../manifest/index.js';
import { MIGRATIONS_DIR } from '../migrate/index.js';
import type { OutputSnapshot } from '../plan/index.js';

/** Where the user's hooks files live. */
const HOOKS_DIR = 'src/hooks';

/** The output folder as the previous generation left it, read before generating. */
export interface PreviousRead {
  /** What `generate` is given; `undefined` when the folder holds no manifest. */
  readonly output?: PreviousOutput;
  /** Text of `.entity-gen/manifest.json`, when there is one. */
  readonly manifestText?: string;
  /** Text of the generator's cache file (`CACHE_PATH`), when there is one. */
  readonly cacheText?: string;
  /** The manifest cannot be used (not JSON, tampered paths, a newer format). */
  readonly diagnostic?: Diagnostic;
  /** Contents of the files read so far, by path. */
  readonly files: ReadonlyMap<string, string>;
  readonly migrationFiles: readonly string[];
}

/**
 * Reads the previous generation: the manifest, the files it lists and the names in
 * `migrations/`. A folder that does not exist reads as empty.
 */
export async function readPreviousOutput(outputDir: string): Promise<PreviousRead> {
  const manifestText = await readIfExists(join(outputDir, MANIFEST_PATH));
  const cacheText = await readIfExists(join(outputDir, CACHE_PATH));
  const migrationFiles = await fileNames(join(outputDir, MIGRATIONS_DIR));
  const userFiles = await existingUserFiles(outputDir);
  if (manifestText === undefined) {
    return {
      files: new Map(),
      migrationFiles,
      output: { migrationFiles, files: new Map(), userFiles },
    };
  }
  const parsed = parseManifest(manifestText);
  if (parsed.manifest === undefined) {
    return {
      manifestText,
      files: new Map(),
      migrationFiles,
      diagnostic: invalidManifestDiagnostic(parsed.problem),
    };
  }
  const files = await readFiles(outputDir, Object.keys(parsed.manifest.files), new Map());
  return {
    manifestText,
    ...(cacheText === undefined ? {} : { cacheText }),
    files,
    migrationFiles,
    output: { manifest: parsed.manifest, migrationFiles, files, userFiles },
  };
}

/** The user's files that exist in the output folder (the ones a generation creates when absent). */
async function existingUserFiles(outputDir: string): Promise<Set<string>> {
  const hooks = (await fileNames(join(outputDir, HOOKS_DIR))).map((name) => `${HOOKS_DIR}/${name}`);
  const others = await Promise.all(
    USER_FILES.map(async (path) =>
      (await readIfExists(join(outputDir, path))) === undefined ? [] : [path],
    ),
  );
  return new Set([...hooks, ...others.flat()]);
}

/** The user's files outside `src/hooks/`. */
const USER_FILES = ['src/server.ts', '.gitignore'];

/**
 * Reads what `planOutput` needs from an output folder: the previous generation, and the files at
 * the paths the new generation writes, and the names in `src/hooks/`.
 */
export async function readOutputSnapshot(
  outputDir: string,
  previous: PreviousRead,
  generated: readonly { readonly path: string }[],
): Promise<OutputSnapshot> {
  const hooksFiles = (await fileNames(join(outputDir, HOOKS_DIR)))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${HOOKS_DIR}/${name}`);
  const wanted = new Set(generated.map((file) => file.path));
  const files = await readFiles(
    outputDir,
    [
      ...generated.map((file) => file.path).filter((path) => path !== MANIFEST_PATH),
      // A hooks file of no entity: planOutput tells an unedited starter from an edited one.
      ...hooksFiles.filter((path) => !wanted.has(path)),
    ],
    previous.files,
  );
  return {
    manifest: previous.manifestText,
    ...(previous.cacheText === undefined ? {} : { cache: previous.cacheText }),
    files,
    migrationFiles: previous.migrationFiles,
    hooksFiles,
  };
}

/**
 * `known` plus the files at `paths` not in it yet. Read one after the other, synchronously: for
 * the hundreds of small files of a service that is several times faster than through the thread
 * pool (an open, a stat, a read and a close, each a round trip), and the CLI has nothing else to do
 * meanwhile.
 */
async function readFiles(
  outputDir: string,
  paths: readonly string[],
  known: ReadonlyMap<string, string>,
): Promise<Map<string, string>> {
  const files = new Map(known);
  for (const path of paths) {
    if (files.has(path)) continue;
    const text = readIfExistsSync(join(outputDir, path));
    if (text !== undefined) files.set(path, text);
  }
  return files;
}

/** A file's text, or `undefined` when there is no file at that path. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** `readIfExists`, synchronously. */
export function readIfExistsSync(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Names of the files directly in `dir`, sorted; none when it does not exist. */
async function fileNames(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
