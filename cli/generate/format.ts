/**
 * The format phase: the templates write code text without caring for line breaks, and Biome's
 * formatter lays out every TypeScript file in the repository's own style — line width 100, single
 * quotes, trailing commas, the settings of the repository's biome.json (./formatter.ts runs
 * Biome's binary). A file whose emitted text is the same as at the last generation (its
 * key is in the cache, ./cache.ts) keeps the formatted text it has, so a regeneration formats
 * only what changed; a file with a `madeFrom` key (an entity's files, `openapi.json`) is not even
 * made when its key is the cached one.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { runTask, type TaskRunner } from '../worker/tasks.js';
import type { FormatCache } from './cache.js';
import type { FileOwner } from './emit.js';

/** A file of the output before formatting. */
export interface UnformattedFile {
  readonly path: string;
  /** Its text, or how to make it: a file found in the cache is not made. */
  readonly contents: string | (() => string);
  readonly owner: FileOwner;
  /**
   * What the file is made from, when that is cheaper to hash than the text is to make (an
   * entity's template and view, the JSON Schema a `types.ts` is compiled from): the cache key
   * instead of the emitted text's hash.
   */
  readonly madeFrom?: string;
}

/** A file's text, made if it is made on demand. */
export function textOf(contents: string | (() => string)): string {
  return typeof contents === 'string' ? contents : contents();
}

/**
 * Biome's configuration for the generated code. Its version (package.json pins it exactly, so
 * every teammate formats alike) and this configuration are part of every cache key: a change
 * reformats everything.
 */
export const BIOME_CONFIGURATION = {
  // Generated files may be large (an entity of many fields); Biome skips files over 1 MiB unless told.
  files: { maxSize: 64 * 1024 * 1024 },
  formatter: { indentStyle: 'space', indentWidth: 2, lineWidth: 100, lineEnding: 'lf' },
  javascript: {
    formatter: {
      quoteStyle: 'single',
      trailingCommas: 'all',
      semicolons: 'always',
      arrowParentheses: 'always',
      bracketSpacing: true,
      quoteProperties: 'asNeeded',
    },
  },
} as const;

/**
 * Formats the TypeScript files (the others are only tidied) and returns them with, for each
 * generator file, the key of its emitted text for the cache.
 */
export async function formatFiles(
  files: readonly UnformattedFile[],
  cache: FormatCache,
  run: TaskRunner = runTask,
): Promise<{ files: FormattedFile[]; emitted: Map<string, string> }> {
  const emitted = new Map<string, string>();
  const results = new Map<string, string>();
  const todo: { path: string; contents: string }[] = [];
  for (const file of files) {
    const typeScript = file.path.endsWith('.ts');
    if (!typeScript && file.madeFrom === undefined) {
      results.set(file.path, tidy(textOf(file.contents)));
      continue;
    }
    const text = file.madeFrom === undefined ? textOf(file.contents) : undefined;
    const key = emittedHash(file.madeFrom ?? text!);
    if (file.owner === 'generator') emitted.set(file.path, key);
    const cached = cache.get(file.path);
    if (cached !== undefined && cached.emitted === key) results.set(file.path, cached.formatted);
    else if (typeScript) todo.push({ path: file.path, contents: text ?? textOf(file.contents) });
    else results.set(file.path, tidy(textOf(file.contents)));
  }
  for (const [path, formatted] of await formatTypeScript(todo, run)) results.set(path, formatted);
  return {
    files: files.map(({ path, owner, contents }) => ({
      path,
      owner,
      contents: results.get(path) ?? textOf(contents),
    })),
    emitted,
  };
}

/** A file of the output, formatted. */
export interface FormattedFile {
  readonly path: string;
  readonly contents: string;
  readonly owner: FileOwner;
}

/** The Biome release the generator depends on (exactly). */
const BIOME_VERSION = (
  createRequire(import.meta.url)('@biomejs/biome/package.json') as { version: string }
).version;

/** The cache key of an emitted text: its hash together with the formatter's settings. */
export function emittedHash(contents: string): string {
  const hash = createHash('sha256');
  hash.update(`biome ${BIOME_VERSION} ${JSON.stringify(BIOME_CONFIGURATION)}`);
  hash.update('\0');
  hash.update(contents, 'utf8');
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Up to this many characters of TypeScript are formatted by `run` alone (in the worker thread,
 * which compiled Biome's module while this one built the model); more are shared between it and
 * this thread, which then compiles the module too (about 0.3 s).
 */
const FORMAT_ALONE = 256 * 1024;

/**
 * Formats TypeScript sources with Biome, only when there is something to format: by `run`, and for
 * a large set half here (two Biome processes side by side).
 */
async function formatTypeScript(
  files: readonly { path: string; contents: string }[],
  run: TaskRunner,
): Promise<Map<string, string>> {
  if (files.length === 0) return new Map();
  const total = files.reduce((sum, file) => sum + file.contents.length, 0);
  let there = files;
  let here: typeof files = [];
  // Shared only with another thread: in this one, one Biome process takes them all.
  if (total > FORMAT_ALONE && run !== runTask) {
    let size = 0;
    const half = files.findIndex((file) => {
      size += file.contents.length;
      return size > total / 2;
    });
    there = files.slice(0, half);
    here = files.slice(half);
  }
  const away = run({ kind: 'format', files: there, configuration: BIOME_CONFIGURATION });
  const formatted = new Map<string, string>();
  if (here.length > 0) {
    const { formatWithBiome } = await import('./formatter.js');
    for (const [path, text] of formatWithBiome(here, BIOME_CONFIGURATION))
      formatted.set(path, text);
  }
  for (const [path, text] of await away) formatted.set(path, text);
  return formatted;
}

/** What every file gets, formatted or not: no trailing spaces, no runs of blank lines, one final newline. */
export function tidy(contents: string): string {
  // Most text is tidy already (JSON.stringify's, say): checking is much cheaper than rebuilding it.
  if (!/[^\S\n]\n|\n\n\n/.test(contents) && `${contents.trim()}\n` === contents) return contents;
  const lines = contents.split('\n').map((line) => line.trimEnd());
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
