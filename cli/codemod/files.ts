/** The user's TypeScript files of an output folder, as the user-code pass reads them. */
import { readFileSync, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isGeneratedText } from '../header.js';

/** Where the service's TypeScript sources are, relative to the output folder. */
export const SOURCE_DIR = 'src';

/**
 * The user-owned TypeScript files of the service: every `.ts` under `src/` without the generated
 * header, by path relative to the output folder. Files in `read` are taken from there.
 */
export async function readUserFiles(
  outputDir: string,
  read: ReadonlyMap<string, string> = new Map(),
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const path of await typeScriptFiles(outputDir, SOURCE_DIR)) {
    // Synchronously: hundreds of small files are read much faster so than through the thread pool.
    const text = read.get(path) ?? readFileSync(join(outputDir, path), 'utf8');
    if (!isGeneratedText(text)) files.set(path, text);
  }
  return files;
}

/** Every `.ts` file (not `.d.ts`) under `dir`, relative to `root`, sorted. */
export async function typeScriptFiles(root: string, dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(root, dir), { withFileTypes: true });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? error.code : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...(await typeScriptFiles(root, path)));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
      found.push(path);
  }
  return found.sort();
}
