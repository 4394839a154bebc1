import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { GeneratedFile } from './generate/index.js';

/** What a write did to each file. */
export interface WriteSummary {
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
}

/** Compares generated files with the output folder without writing anything. */
export async function planWrite(
  outputDir: string,
  files: readonly GeneratedFile[],
): Promise<WriteSummary> {
  const created: string[] = [];
  const updated: string[] = [];
  const unchanged: string[] = [];
  for (const file of files) {
    const current = await readIfExists(join(outputDir, file.path));
    if (current === undefined) created.push(file.path);
    else if (current === file.contents) unchanged.push(file.path);
    else updated.push(file.path);
  }
  return { created, updated, unchanged };
}

/**
 * Writes the files that differ from what is on disk. Every new content is first staged next to its
 * target; only when all are staged are they renamed into place, so a failure while writing (disk
 * full, permissions) leaves the output folder as it was.
 */
export async function writeFiles(
  outputDir: string,
  files: readonly GeneratedFile[],
): Promise<WriteSummary> {
  const summary = await planWrite(outputDir, files);
  const changed = new Set([...summary.created, ...summary.updated]);
  const suffix = `.entity-gen-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const staged: { temp: string; target: string }[] = [];
  const createdDirs: string[] = [];
  try {
    for (const file of files) {
      if (!changed.has(file.path)) continue;
      const target = join(outputDir, file.path);
      const made = await mkdir(dirname(target), { recursive: true });
      if (made !== undefined) createdDirs.push(made);
      const temp = `${target}${suffix}`;
      staged.push({ temp, target });
      await writeFile(temp, file.contents, 'utf8');
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    for (const dir of createdDirs.reverse()) await rm(dir, { recursive: true, force: true });
    throw error;
  }
  for (const { temp, target } of staged) await rename(temp, target);
  return summary;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isNodeError(error) && (error.code === 'ENOENT' || error.code === 'ENOTDIR'))
      return undefined;
    throw error;
  }
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
