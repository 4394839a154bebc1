/**
 * The CLI end of the invalid-schema fixtures: `entity-gen generate` on each one prints exactly the
 * expected diagnostics (plus the summary line), exits 1 and writes nothing at all.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OUTPUT, ROOT } from '../helpers/generate.js';

const exec = promisify(execFile);
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const INVALID = join(ROOT, 'fixtures', 'invalid');
const cases = (await readdir(INVALID, { withFileTypes: true }))
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe.concurrent('entity-gen generate on invalid schemas', () => {
  it.each(cases)('%s: exact diagnostics, exit 1, nothing written', async (name) => {
    const dir = join(INVALID, name);
    const schemas = (await readdir(dir)).filter((file) => file !== 'expected.txt').sort();
    const out = join(OUTPUT, 'invalid-cli', name);
    await rm(out, { recursive: true, force: true });
    await mkdir(join(OUTPUT, 'invalid-cli'), { recursive: true });
    const result = await exec(process.execPath, [CLI, 'generate', ...schemas, '-o', out], {
      cwd: dir,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    const expected = (await readFile(join(dir, 'expected.txt'), 'utf8')).trimEnd().split('\n');
    const lines = result.stderr.trimEnd().split('\n');
    expect(result.code).toBe(1);
    expect(lines.slice(0, -1)).toEqual(expected);
    expect(lines.at(-1)).toBe(
      `${expected.length} ${expected.length === 1 ? 'problem' : 'problems'} found; nothing was written.`,
    );
    await expect(readdir(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
