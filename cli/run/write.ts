/**
 * The write step, the only part of generation that touches the disk: applies the computed file
 * changes to the output folder all or nothing.
 */
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/** The file operations the write step uses; tests pass a copy that fails on purpose. */
export interface WriteFileSystem {
  mkdir(path: string, options: { recursive: true }): Promise<string | undefined>;
  writeFile(path: string, contents: string, encoding: 'utf8'): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  copyFile(from: string, to: string): Promise<void>;
  rm(path: string, options: { force: true; recursive?: boolean }): Promise<void>;
  rmdir(path: string): Promise<void>;
}

/** The real file system. */
export const NODE_FS: WriteFileSystem = {
  mkdir: (path, options) => nodeFs.mkdir(path, options),
  writeFile: (path, contents, encoding) => nodeFs.writeFile(path, contents, encoding),
  rename: (from, to) => nodeFs.rename(from, to),
  copyFile: (from, to) => nodeFs.copyFile(from, to),
  rm: (path, options) => nodeFs.rm(path, options),
  rmdir: (path) => nodeFs.rmdir(path),
};

/** What a run writes and deletes, with paths relative to the output folder. */
export interface FileChanges {
  readonly writes: readonly { readonly path: string; readonly contents: string }[];
  readonly deletes: readonly string[];
}

/**
 * Applies file changes to the output folder all or nothing. Every new content is first staged
 * next to its target; then, in a journaled commit, files to replace or delete are copied aside and
 * the staged files renamed into place. If anything fails (disk full, permissions, a file where a
 * folder should be) the journal is undone, so the folder is left as it was. Folders emptied by
 * deletions are removed.
 */
export async function applyChanges(
  outputDir: string,
  changes: FileChanges,
  fs: WriteFileSystem = NODE_FS,
): Promise<void> {
  const tag = `.entity-gen-${process.pid}-${randomBytes(4).toString('hex')}`;
  const createdDirs: string[] = [];
  const staged: { temp: string; target: string }[] = [];
  const cleanUp = async (): Promise<void> => {
    await Promise.all(
      staged.map(({ temp }) => fs.rm(temp, { force: true }).catch(() => undefined)),
    );
    for (const dir of [...createdDirs].reverse())
      await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  };

  try {
    const dirs = [...new Set(changes.writes.map((file) => dirname(join(outputDir, file.path))))];
    for (const dir of dirs) {
      const made = await fs.mkdir(dir, { recursive: true });
      if (made !== undefined) createdDirs.push(made);
    }
    for (const file of changes.writes) {
      const target = join(outputDir, file.path);
      staged.push({ temp: `${target}${tag}.tmp`, target });
    }
    await settleAll(changes.writes, (file, index) =>
      fs.writeFile((staged[index] as { temp: string }).temp, file.contents, 'utf8'),
    );
  } catch (error) {
    await cleanUp();
    throw error;
  }

  // The commit keeps a copy of every file it replaces or deletes, so it can be undone; a staged
  // file replaces its target with one atomic rename.
  const undo: (() => Promise<void>)[] = [];
  const backups: string[] = [];
  const backUp = async (target: string): Promise<boolean> => {
    const backup = `${target}${tag}.bak`;
    try {
      await fs.copyFile(target, backup);
    } catch (error) {
      if (isNodeError(error) && error.code === 'ENOENT') return false;
      throw error;
    }
    backups.push(backup);
    undo.push(() => fs.rename(backup, target));
    return true;
  };
  try {
    await settleAll(changes.deletes, async (path) => {
      const target = join(outputDir, path);
      if (await backUp(target)) await fs.rm(target, { force: true });
    });
    await settleAll(staged, async ({ temp, target }) => {
      const replaced = await backUp(target);
      await fs.rename(temp, target);
      if (!replaced) undo.push(() => fs.rm(target, { force: true }));
    });
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    await cleanUp();
    throw error;
  }

  // Committed. What follows only tidies up; a failure there leaves a stray backup at worst.
  await settleAll(backups, (backup) => fs.rm(backup, { force: true }).catch(() => undefined));
  for (const path of changes.deletes)
    await removeEmptyParents(outputDir, join(outputDir, path), fs);
}

/** File operations in flight at once: enough to keep the disk busy, few enough for any fd limit. */
const CONCURRENCY = 16;

/**
 * Runs `task` over `items`, a few at a time, and waits for every started task to finish before
 * it rejects with the first error: the undo journal is complete when the caller rolls back.
 */
async function settleAll<T>(
  items: readonly T[],
  task: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        await task(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/** Removes the folders above `file` that are now empty, up to (not including) `root`. */
async function removeEmptyParents(root: string, file: string, fs: WriteFileSystem): Promise<void> {
  let dir = dirname(file);
  while (isStrictlyInside(root, dir)) {
    try {
      await fs.rmdir(dir);
    } catch {
      return; // not empty (or not ours to remove)
    }
    dir = dirname(dir);
  }
}

function isStrictlyInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
