/**
 * The build check of the test setup (./build.ts) on a small package tree of its own: it notices a
 * TypeScript source newer than its compiled file, a template or manifest newer than the build, and
 * a template changed or removed without a newer modification time (through the fingerprint).
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sourcesFingerprint } from '../../cli/generate/fingerprint.js';
import { BUILD_STAMP, staleInput } from './build.js';

let root: string;
/** Built an hour ago; the inputs are older still. */
const BUILT = new Date(Date.now() - 3_600_000);
const OLDER = new Date(Date.now() - 7_200_000);
const NEWER = new Date();

function write(file: string, text: string, time: Date): void {
  const path = join(root, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  utimesSync(path, time, time);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'eg-build-check-'));
  write('package.json', '{}', OLDER);
  write('cli/main.ts', 'export {};', OLDER);
  write('runtime/src/index.ts', 'export {};', OLDER);
  write('templates/entity/router.hbs', 'router {{name}}', OLDER);
  write('templates/partials/header.hbs', '// header', OLDER);
  write('dist/cli/main.js', 'export {};', BUILT);
  write('runtime/dist/index.js', 'export {};', BUILT);
  write(BUILD_STAMP, JSON.stringify({ fingerprint: sourcesFingerprint(root) }), BUILT);
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the build check', () => {
  it('finds a current build current', () => {
    expect(staleInput(root)).toBeUndefined();
  });

  it('names a TypeScript source newer than its compiled file, or one never compiled', () => {
    write('cli/main.ts', 'export const x = 1;', NEWER);
    expect(staleInput(root)).toBe(join('cli', 'main.ts'));
    write('cli/main.ts', 'export {};', OLDER);
    write('runtime/src/new.ts', 'export {};', OLDER);
    expect(staleInput(root)).toBe(join('runtime', 'src', 'new.ts'));
  });

  it('names a template edited after the build', () => {
    write('templates/entity/router.hbs', 'router {{name}} changed', NEWER);
    expect(staleInput(root)).toBe(join('templates', 'entity', 'router.hbs'));
  });

  it('names a package manifest changed after the build', () => {
    write('package.json', '{"version":"2.0.0"}', NEWER);
    expect(staleInput(root)).toBe('package.json');
  });

  it('notices a template changed with an old modification time, and a removed one', () => {
    write('templates/entity/router.hbs', 'router {{name}} changed', OLDER);
    expect(staleInput(root)).toMatch(/templates or sources/);
    write('templates/entity/router.hbs', 'router {{name}}', OLDER);
    expect(staleInput(root)).toBeUndefined();
    unlinkSync(join(root, 'templates/partials/header.hbs'));
    expect(staleInput(root)).toMatch(/templates or sources/);
  });

  it('names an admin app source newer than its built page, or a page never built', () => {
    write('runtime/admin/src/main.tsx', 'export {};', OLDER);
    expect(staleInput(root)).toBe('runtime/dist/admin/index.html (missing)');
    write('runtime/dist/admin/index.html', '<!doctype html>', BUILT);
    expect(staleInput(root)).toBeUndefined();
    write('runtime/admin/src/main.tsx', 'export const x = 1;', NEWER);
    expect(staleInput(root)).toBe(join('runtime', 'admin', 'src', 'main.tsx'));
  });

  it('finds a build that never finished stale', () => {
    unlinkSync(join(root, BUILD_STAMP));
    expect(staleInput(root)).toMatch(/fingerprint\.json \(missing\)/);
  });
});
