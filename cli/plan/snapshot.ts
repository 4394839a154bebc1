import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_PATH, parseManifest } from '../manifest/index.js';
import { MIGRATIONS_DIR } from './migrations.js';
import type { OutputSnapshot } from './index.js';

/** Where the user's hooks files live. */
const HOOKS_DIR = 'src/hooks';

/**
 * Reads what `planOutput` needs from an output folder: the manifest, the files at `paths` and at
 * every path the manifest lists, and the names in `migrations/` and `src/hooks/`. A folder that does
 * not exist reads as empty.
 */
export async function readOutputSnapshot(
  outputDir: string,
  paths: readonly string[],
): Promise<OutputSnapshot> {
  const manifest = await readIfExists(join(outputDir, MANIFEST_PATH));
  const listed =
    manifest === undefined ? [] : Object.keys(parseManifest(manifest).manifest?.files ?? {});
  const files = new Map<string, string>();
  for (const path of new Set([...paths, ...listed])) {
    const contents = await readIfExists(join(outputDir, path));
    if (contents !== undefined) files.set(path, contents);
  }
  const hooksFiles = (await fileNames(join(outputDir, HOOKS_DIR)))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${HOOKS_DIR}/${name}`);
  return {
    manifest,
    files,
    migrationFiles: await fileNames(join(outputDir, MIGRATIONS_DIR)),
    hooksFiles,
  };
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
