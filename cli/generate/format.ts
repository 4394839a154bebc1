/**
 * The format step: the templates write code text without caring for line breaks, and one pass of
 * Biome's formatter (its JS API, the WebAssembly build: no native binary, no child process) lays
 * out every TypeScript file in the project's style — printWidth 100, single quotes, trailing
 * commas, as `.prettierrc.json` says for this repository. Biome is loaded only when some file has
 * to be formatted: a file whose emitted text is the same as last time (its hash is in the
 * manifest) keeps the formatted text it has.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FileOwner } from './emit.js';

/** A file of the output before formatting. */
export interface UnformattedFile {
  readonly path: string;
  readonly contents: string;
  readonly owner: FileOwner;
}

/**
 * The previous generation's formatted files that may be reused: by path, the hash of the text
 * the templates emitted then and the formatted text now on disk.
 */
export type FormatCache = ReadonlyMap<
  string,
  { readonly emitted: string; readonly formatted: string }
>;

/** The formatter's settings; also part of every cache key, so a change reformats everything. */
export const FORMAT_OPTIONS = {
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

/** Below this many files, one formatter is quicker than starting workers. */
const FILES_PER_WORKER = 150;

/**
 * Formats the TypeScript files (the others are only tidied) and returns them with, for each
 * formatted file, the hash of its emitted text for the manifest.
 */
export async function formatFiles(
  files: readonly UnformattedFile[],
  cache: FormatCache,
): Promise<{ files: UnformattedFile[]; emitted: Map<string, string> }> {
  const emitted = new Map<string, string>();
  const results = new Map<string, string>();
  const todo: { path: string; contents: string }[] = [];
  for (const file of files) {
    if (!file.path.endsWith('.ts')) {
      results.set(file.path, tidy(file.contents));
      continue;
    }
    const key = emittedHash(file.contents);
    if (file.owner === 'generator') emitted.set(file.path, key);
    const cached = cache.get(file.path);
    if (cached !== undefined && cached.emitted === key) results.set(file.path, cached.formatted);
    else todo.push({ path: file.path, contents: file.contents });
  }
  for (const [path, formatted] of await formatTypeScript(todo)) results.set(path, formatted);
  return {
    files: files.map((file) => ({ ...file, contents: results.get(file.path) ?? file.contents })),
    emitted,
  };
}

/** The cache key of an emitted text: its hash together with the formatter's settings. */
function emittedHash(contents: string): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(FORMAT_OPTIONS));
  hash.update('\0');
  hash.update(contents, 'utf8');
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Formats TypeScript sources with Biome; with many files, in worker threads (one Biome each),
 * since formatting is most of a large generation's time.
 */
async function formatTypeScript(
  files: readonly { path: string; contents: string }[],
): Promise<Map<string, string>> {
  if (files.length === 0) return new Map();
  const workers = Math.min(
    Math.floor(files.length / FILES_PER_WORKER),
    Math.max(availableParallelism() - 1, 1),
  );
  if (workers <= 1) {
    const { createFormatter } = await import('./formatter.js');
    const format = await createFormatter();
    return new Map(files.map((file) => [file.path, format(file.path, file.contents)]));
  }
  // Round robin keeps the shares even whatever the order of paths.
  const shares = Array.from({ length: workers }, (_, index) =>
    files.filter((_file, position) => position % workers === index),
  );
  const done = await Promise.all(shares.map(formatInWorker));
  return new Map(done.flat());
}

/** Formats files in a worker thread (./format-worker.ts). */
function formatInWorker(
  files: readonly { path: string; contents: string }[],
): Promise<[string, string][]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./format-worker.js', import.meta.url), {
      workerData: files,
    });
    worker.once('message', (message: { formatted?: [string, string][]; error?: string }) => {
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.formatted ?? []);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the formatter's worker stopped with exit code ${code}`));
    });
  });
}

/** What every file gets, formatted or not: no trailing spaces, no runs of blank lines, one final newline. */
export function tidy(contents: string): string {
  const lines = contents.split('\n').map((line) => line.trimEnd());
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
