import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_FS, type WriteFileSystem } from '../../cli/run/write.js';

/** Every file and folder under `dir` with its contents, so any change shows up. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const result: Record<string, string> = {};
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name).slice(dir.length + 1);
    result[path] = entry.isFile() ? await readFile(join(dir, path), 'utf8') : '<dir>';
  }
  return result;
}

/** The real file system, except that call number `failAt` of `operation` throws. */
export function failing(operation: keyof WriteFileSystem, failAt: number): WriteFileSystem {
  let calls = 0;
  const fail = (): never => {
    throw Object.assign(new Error(`injected ${operation} failure`), { code: 'EIO' });
  };
  return {
    ...NODE_FS,
    [operation]: (...args: never[]) => {
      calls++;
      if (calls === failAt) fail();
      return (NODE_FS[operation] as (...a: never[]) => Promise<unknown>)(...args);
    },
  };
}
