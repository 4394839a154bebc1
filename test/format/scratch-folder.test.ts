/**
 * Where the formatter's private folder is made (cli/generate/formatter.ts): the folder `TMPDIR`
 * names when the user set one, else Linux's memory-backed /dev/shm when it is writable, else the
 * system's temporary folder.
 */
import { accessSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { scratchRoot } from '../../cli/generate/formatter.js';

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

describe('the formatter’s scratch folder', () => {
  it('is the temporary folder when TMPDIR is set', () => {
    expect(scratchRoot({ TMPDIR: tmpdir() })).toBe(tmpdir());
  });

  it('is /dev/shm on Linux when it is writable, the temporary folder otherwise', () => {
    const memory = process.platform === 'linux' && writable('/dev/shm');
    expect(scratchRoot({})).toBe(memory ? '/dev/shm' : tmpdir());
  });
});
