/**
 * The manifest of an output folder, `.entity-gen/manifest.json`: which files the generator owns
 * (with the hash of what it wrote) and the schema they were generated from. It is what lets a run
 * tell a file the user edited from one the generator may rewrite or delete, and what the
 * migrations planner diffs the new schema against.
 *
 *     {"format": 1,
 *      "invocation": {"schemas": ["../schema.yaml"], "restConfig": …, "access": …,
 *                     "runtimeSpec": …, "driver": …},
 *      "schemaHash": "<sha-256 hex>",
 *      "schema": [<ENTITY documents as written, sorted by entity name>],
 *      "files": {"<path>": "sha256:<hex>", ...}}
 *
 * It holds only what a reviewer or `check` needs: no cache key and no fingerprint of the
 * generator (the generator's cache is a git-ignored file of its own, cli/generate/cache.ts; an
 * `emitted` key of older manifests, which held it, is read and dropped). Keys in that order,
 * files sorted by path, 2-space JSON with a trailing newline. The manifest
 * does not list itself, nor the user's files (`src/hooks/*`, `src/server.ts`). `invocation` is the
 * generation to repeat when `generate`, `check` or `dev` get no schema (paths relative to the
 * output folder). It records no generator version: a newer entity-gen changes it only where the
 * files it writes change (after an upgrade, the runtime range of package.json, unless an explicit
 * --runtime-spec is recorded); a `generator` key of older manifests is read and dropped.
 */
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../diagnostics.js';
import type { JsonValue } from '../schema/types.js';

/** Where the manifest lives inside the output folder. */
export const MANIFEST_PATH = '.entity-gen/manifest.json';

/** The manifest format this generator reads and writes. */
export const MANIFEST_FORMAT = 1;

/** The options of a generation that are remembered for the next one; paths relative to the folder. */
export interface Invocation {
  /** Schema files, relative to the output folder, `/`-separated. */
  readonly schemas: readonly string[];
  readonly restConfig?: string;
  readonly access?: string;
  /** npm spec of the runtime dependency, as given (a `file:` spec is relative to the folder). */
  readonly runtimeSpec?: string;
  readonly driver?: string;
}

export interface Manifest {
  readonly format: typeof MANIFEST_FORMAT;
  /** How the folder was generated, when known (older manifests do not say). */
  readonly invocation?: Invocation;
  /** `SchemaModel.hash` of the schema the files were generated from. */
  readonly schemaHash: string;
  /** The ENTITY documents as written, sorted by entity name. */
  readonly schema: readonly JsonValue[];
  /** Every generator-owned file, by path relative to the output folder: `sha256:<hex>`. */
  readonly files: Readonly<Record<string, string>>;
}

/**
 * The hash the manifest records for a file's contents: `sha256:<hex of the UTF-8 bytes>`.
 * A generation hashes the same texts several times (the file on disk, then the same text as the
 * new contents), so the hashes of the last few thousand texts are remembered.
 */
export function contentHash(contents: string): string {
  let hash = recentHashes.get(contents);
  if (hash === undefined) {
    hash = `sha256:${createHash('sha256').update(contents, 'utf8').digest('hex')}`;
    if (recentHashes.size >= RECENT_HASHES) recentHashes.clear();
    recentHashes.set(contents, hash);
  }
  return hash;
}

/** Texts and their hashes (see `contentHash`); cleared when full, to bound what it holds. */
const recentHashes = new Map<string, string>();
const RECENT_HASHES = 16_384;

/** The manifest's text: fixed key order, files sorted by path, 2-space JSON, trailing newline. */
export function renderManifest(manifest: Manifest): string {
  const files = sortedByPath(manifest.files);
  const ordered = {
    format: manifest.format,
    ...(manifest.invocation === undefined ? {} : { invocation: manifest.invocation }),
    schemaHash: manifest.schemaHash,
    schema: manifest.schema,
    files,
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

function sortedByPath(hashes: Readonly<Record<string, string>>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const path of Object.keys(hashes).sort(comparePaths)) sorted[path] = hashes[path] ?? '';
  return sorted;
}

/** Outcome of reading a manifest: the manifest, or why it cannot be used. */
export type ParsedManifest =
  | { readonly manifest: Manifest; readonly problem?: undefined }
  | { readonly manifest?: undefined; readonly problem: string };

/** The diagnostic of a manifest that cannot be read (`problem` says why). */
export function invalidManifestDiagnostic(problem: string): Diagnostic {
  return {
    file: MANIFEST_PATH,
    line: 1,
    column: 1,
    message:
      `the manifest cannot be used: ${problem}. Restore it from version control, or ` +
      'delete it to have identical files taken over and everything else left alone',
    code: 'MANIFEST_INVALID',
  };
}

/**
 * Reads a manifest's text. Paths are checked to stay inside the output folder, so a tampered
 * manifest cannot make a run delete files elsewhere.
 */
export function parseManifest(text: string): ParsedManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      problem: `not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (!isObject(parsed)) return { problem: 'not a JSON object' };
  const { format, generator, invocation, schemaHash, schema, files } = parsed;
  if (typeof format === 'number' && format > MANIFEST_FORMAT) {
    return {
      problem: `format ${format} was written by a newer entity-gen (${String(generator)}); upgrade entity-gen`,
    };
  }
  if (format !== MANIFEST_FORMAT) return { problem: `unknown format ${JSON.stringify(format)}` };
  const recorded = invocation === undefined ? undefined : parseInvocation(invocation);
  if (recorded === 'invalid')
    return {
      problem:
        '"invocation" is not {schemas: [paths], restConfig?, access?, runtimeSpec?, driver?}',
    };
  if (typeof schemaHash !== 'string') return { problem: '"schemaHash" is not a string' };
  if (!Array.isArray(schema)) return { problem: '"schema" is not a list' };
  if (!isObject(files)) return { problem: '"files" is not an object' };
  const hashes: Record<string, string> = {};
  for (const [path, hash] of Object.entries(files)) {
    if (!isSafeRelativePath(path) || path === MANIFEST_PATH) {
      return {
        problem: `"files" names ${JSON.stringify(path)}, which is not a path inside the output folder`,
      };
    }
    if (typeof hash !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(hash)) {
      return { problem: `the hash of ${path} is not of the form sha256:<64 hex digits>` };
    }
    hashes[path] = hash;
  }
  return {
    manifest: {
      format: MANIFEST_FORMAT,
      ...(recorded === undefined ? {} : { invocation: recorded }),
      schemaHash,
      schema: schema as JsonValue[],
      files: hashes,
    },
  };
}

/** The recorded invocation, checked: strings where strings belong, at least one schema. */
function parseInvocation(value: unknown): Invocation | 'invalid' {
  if (!isObject(value)) return 'invalid';
  const { schemas, restConfig, access, runtimeSpec, driver } = value;
  if (
    !Array.isArray(schemas) ||
    schemas.length === 0 ||
    !schemas.every((schema) => typeof schema === 'string' && schema !== '')
  )
    return 'invalid';
  const optional = { restConfig, access, runtimeSpec, driver };
  const result: Record<string, unknown> = { schemas: schemas as string[] };
  for (const [key, item] of Object.entries(optional)) {
    if (item === undefined) continue;
    if (typeof item !== 'string' || item === '') return 'invalid';
    result[key] = item;
  }
  return result as unknown as Invocation;
}

/** A `/`-separated relative path without empty, `.` or `..` segments. */
export function isSafeRelativePath(path: string): boolean {
  if (path === '' || path.startsWith('/') || /[\\\0]|^[A-Za-z]:/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Orders paths by UTF-16 code units, the order of every file list entity-gen prints. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
