/**
 * The format step: the templates write code text without caring for line breaks, and one pass of
 * Biome's formatter lays out every TypeScript file in the project's style — printWidth 100, single
 * quotes, trailing commas, as `.prettierrc.json` says for this repository (./formatter.ts runs
 * Biome). A file whose emitted text is the same as at the last generation (its hash is in the
 * manifest) keeps the formatted text it has, so a regeneration formats only what changed; a file
 * with a `madeFrom` key (an entity's files, `openapi.json`) is not even made when its key is the
 * recorded one.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
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
 * The previous generation's formatted files that may be reused: by path, the hash of the text
 * the templates emitted then and the formatted text now on disk.
 */
export type FormatCache = ReadonlyMap<
  string,
  { readonly emitted: string; readonly formatted: string }
>;

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
 * formatted file, the hash of its emitted text for the manifest.
 */
export async function formatFiles(
  files: readonly UnformattedFile[],
  cache: FormatCache,
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
  for (const [path, formatted] of await formatTypeScript(todo)) results.set(path, formatted);
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

/** Formats TypeScript sources with Biome, loaded only when there is something to format. */
async function formatTypeScript(
  files: readonly { path: string; contents: string }[],
): Promise<Map<string, string>> {
  if (files.length === 0) return new Map();
  const { formatWithBiome } = await import('./formatter.js');
  return formatWithBiome(files, BIOME_CONFIGURATION, process.env);
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
