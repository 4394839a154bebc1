/**
 * The generator's cache: for each formatted file of the last generation, the key of what it was
 * made from (see `emittedHash` in ./format.ts) and the hash of the text written. A regeneration
 * reuses the text on disk of every file whose key did not change, so it makes and formats only
 * what changed. It is a cache and nothing more: it lives in a git-ignored file of the output
 * folder (under `node_modules/`, which the generated `.gitignore` leaves out), and a missing,
 * broken or stale cache only means more work. The committed manifest holds no cache key, so a new
 * entity-gen release or a change of the generator's code changes no committed file unless the
 * output changes.
 *
 *     {"format": 1, "files": {"<path>": ["<key>", "sha256:<hex of the written text>"], ...}}
 */
import { contentHash } from '../manifest/index.js';

/** Where the cache lives, relative to the output folder. */
export const CACHE_PATH = 'node_modules/.cache/entity-gen/generate.json';

/** The cache format this generator reads and writes; another one is ignored. */
const CACHE_FORMAT = 1;

/** A cache entry: the key of what the file was made from, the hash of the text written. */
export interface CacheEntry {
  readonly key: string;
  readonly hash: string;
}

/**
 * The previous generation's formatted files that may be reused: by path, the key of what the
 * templates emitted then and the formatted text now on disk.
 */
export type FormatCache = ReadonlyMap<
  string,
  { readonly emitted: string; readonly formatted: string }
>;

/** The cache file's entries; none when there is no file or it does not read as a cache. */
export function parseCache(text: string | undefined): Map<string, CacheEntry> {
  const entries = new Map<string, CacheEntry>();
  if (text === undefined) return entries;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return entries;
  }
  if (!isObject(parsed) || parsed['format'] !== CACHE_FORMAT || !isObject(parsed['files']))
    return entries;
  for (const [path, entry] of Object.entries(parsed['files'])) {
    if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string')
      entries.set(path, { key: entry[0], hash: entry[1] });
  }
  return entries;
}

/**
 * What may be reused: the cached files whose text on disk (`files`, by path) is still the text
 * the cache recorded. A file edited, restored from another commit or deleted since is made again.
 */
export function reusableFiles(
  cacheText: string | undefined,
  files: ReadonlyMap<string, string>,
): FormatCache {
  const reusable = new Map<string, { emitted: string; formatted: string }>();
  for (const [path, { key, hash }] of parseCache(cacheText)) {
    const text = files.get(path);
    if (text !== undefined && contentHash(text) === hash)
      reusable.set(path, { emitted: key, formatted: text });
  }
  return reusable;
}

/** The cache file's text for the keys of this generation and the texts it wrote. */
export function renderCache(
  keys: ReadonlyMap<string, string>,
  files: readonly { readonly path: string; readonly contents: string }[],
): string {
  const texts = new Map(files.map((file) => [file.path, file.contents]));
  const entries: Record<string, [string, string]> = {};
  for (const path of [...keys.keys()].sort()) {
    const text = texts.get(path);
    if (text !== undefined) entries[path] = [keys.get(path)!, contentHash(text)];
  }
  return `${JSON.stringify({ format: CACHE_FORMAT, files: entries })}\n`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
