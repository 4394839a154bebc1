/**
 * `entity-gen generate --driver sqlite|postgres|both` decides which database clients the generated
 * package.json depends on (the default is both, so DATABASE_URL alone can choose at run time).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT, ROOT } from '../helpers/generate.js';

const exec = promisify(execFile);
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const WORK = join(OUTPUT, 'cli-driver');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], {
      cwd: WORK,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

interface Manifest {
  dependencies: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}

async function generateWith(folder: string, ...flags: string[]): Promise<Manifest> {
  const result = await cli('generate', 'shop.yaml', '-o', folder, ...flags);
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(await readFile(join(WORK, folder, 'package.json'), 'utf8')) as Manifest;
}

beforeAll(async () => {
  await rm(WORK, { recursive: true, force: true });
  await mkdir(WORK, { recursive: true });
  await writeFile(join(WORK, 'shop.yaml'), await readFile(join(ROOT, 'fixtures/shop/shop.yaml')));
});

describe('entity-gen generate --driver', () => {
  it('depends on both clients by default', async () => {
    const manifest = await generateWith('default');
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      '@entity-gen/runtime',
      'better-sqlite3',
      'pg',
    ]);
    // swagger-ui-dist's usage reporter is denied its install script in every service; tsx's
    // esbuild runs its own (it checks its binary), so npm install warns about no script.
    expect(manifest.allowScripts).toEqual({
      '@scarf/scarf': false,
      'better-sqlite3': true,
      esbuild: true,
    });
  });

  it.each([
    ['both', ['@entity-gen/runtime', 'better-sqlite3', 'pg']],
    ['sqlite', ['@entity-gen/runtime', 'better-sqlite3']],
    ['postgres', ['@entity-gen/runtime', 'pg']],
  ])('--driver %s → dependencies %j', async (driver, expected) => {
    const manifest = await generateWith(`svc-${driver}`, '--driver', driver);
    expect(Object.keys(manifest.dependencies).sort()).toEqual(expected);
    for (const name of expected) expect(manifest.dependencies[name]).toMatch(/\S/);
    // better-sqlite3 has a native install script; it is allowed only where it is a dependency.
    if (expected.includes('better-sqlite3')) {
      expect(manifest.allowScripts).toEqual({
        '@scarf/scarf': false,
        'better-sqlite3': true,
        esbuild: true,
      });
    } else {
      expect(manifest.allowScripts).toEqual({ '@scarf/scarf': false, esbuild: true });
    }
    // The manifest remembers the choice for the next generation without options.
    const recorded = JSON.parse(
      await readFile(join(WORK, `svc-${driver}`, '.entity-gen', 'manifest.json'), 'utf8'),
    ) as { invocation: { driver: string } };
    expect(recorded.invocation.driver).toBe(driver);
  });

  it('refuses any other driver as a usage error (exit 2) and writes nothing', async () => {
    const result = await cli('generate', 'shop.yaml', '-o', 'svc-mysql', '--driver', 'mysql');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/mysql/);
    expect(result.stderr).toMatch(/sqlite, postgres, both|"sqlite", "postgres", "both"/);
    await expect(readFile(join(WORK, 'svc-mysql', 'package.json'), 'utf8')).rejects.toThrow();
  });
});
