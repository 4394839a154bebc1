import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { applyChanges, type FileChanges } from '../../cli/run/write.js';
import { OUTPUT } from '../helpers/generate.js';
import { failing, snapshot } from '../helpers/write.js';

const DIR = join(OUTPUT, 'regen-write');

const CHANGES: FileChanges = {
  writes: [
    { path: 'a.ts', contents: 'new a\n' },
    { path: 'new/deep/b.ts', contents: 'new b\n' },
    { path: 'src/c.ts', contents: 'new c\n' },
    { path: '.entity-gen/manifest.json', contents: '{}\n' },
  ],
  deletes: ['old/stale.ts', 'src/gone.ts'],
};

beforeEach(async () => {
  await rm(DIR, { recursive: true, force: true });
  await mkdir(join(DIR, 'src'), { recursive: true });
  await mkdir(join(DIR, 'old'), { recursive: true });
  await writeFile(join(DIR, 'a.ts'), 'old a\n');
  await writeFile(join(DIR, 'src/c.ts'), 'old c\n');
  await writeFile(join(DIR, 'src/gone.ts'), 'gone\n');
  await writeFile(join(DIR, 'src/keep.ts'), 'keep\n');
  await writeFile(join(DIR, 'old/stale.ts'), 'stale\n');
});

describe('applyChanges', () => {
  it('writes, deletes, removes emptied folders and leaves no temporary file', async () => {
    await applyChanges(DIR, CHANGES);
    expect(await snapshot(DIR)).toEqual({
      '.entity-gen': '<dir>',
      '.entity-gen/manifest.json': '{}\n',
      'a.ts': 'new a\n',
      new: '<dir>',
      'new/deep': '<dir>',
      'new/deep/b.ts': 'new b\n',
      src: '<dir>',
      'src/c.ts': 'new c\n',
      'src/keep.ts': 'keep\n',
    });
  });

  it('creates the output folder itself when it does not exist', async () => {
    await rm(DIR, { recursive: true, force: true });
    await applyChanges(DIR, { writes: [{ path: 'x/y.ts', contents: 'y\n' }], deletes: [] });
    expect(await readFile(join(DIR, 'x/y.ts'), 'utf8')).toBe('y\n');
  });

  // Each injected failure hits a different phase: staging (mkdir, writeFile) or the commit
  // (copyFile: keeping a copy of a file to replace or delete; rm: deleting; rename: a staged file
  // into place).
  it.each([
    ['creating a folder', 'mkdir', 2],
    ['the first staged write', 'writeFile', 1],
    ['the last staged write', 'writeFile', 4],
    ['copying the first file to delete', 'copyFile', 1],
    ['deleting the second stale file', 'rm', 2],
    ['copying a file to replace', 'copyFile', 3],
    ['renaming the first staged file into place', 'rename', 1],
    ['renaming the last staged file into place', 'rename', 4],
  ] as const)('leaves the folder unchanged when %s fails', async (_name, operation, failAt) => {
    const before = await snapshot(DIR);
    await expect(applyChanges(DIR, CHANGES, failing(operation, failAt))).rejects.toThrow(
      `injected ${operation} failure`,
    );
    expect(await snapshot(DIR)).toEqual(before);
  });

  it('leaves the folder unchanged when a file stands where a new folder must go', async () => {
    await writeFile(join(DIR, 'new'), 'a file, not a folder\n');
    const before = await snapshot(DIR);
    await expect(applyChanges(DIR, CHANGES)).rejects.toThrow();
    expect(await snapshot(DIR)).toEqual(before);
  });

  it('leaves the folder unchanged when a folder stands where a file must be written', async () => {
    await mkdir(join(DIR, '.entity-gen', 'manifest.json'), { recursive: true });
    await writeFile(join(DIR, '.entity-gen', 'manifest.json', 'inside'), 'x\n');
    const before = await snapshot(DIR);
    await expect(applyChanges(DIR, CHANGES)).rejects.toThrow();
    expect(await snapshot(DIR)).toEqual(before);
    expect((await stat(join(DIR, 'a.ts'))).isFile()).toBe(true);
  });
});
