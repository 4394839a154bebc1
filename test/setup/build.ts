/**
 * Global setup of the vitest projects whose tests run the build (see vitest.config.ts): tests that
 * spawn the CLI (`dist/cli/main.js`), compile generated services against the runtime's types
 * (`runtime/dist`) or start the SQLite readers' worker (`runtime/dist/sqlite/reader-worker.js`).
 *
 * Everything else runs from the TypeScript sources, so a full build before every run is wasted
 * time; but a stale build would test old code without a word. So: when a source file is newer
 * than its compiled output (or that output is missing), `npm run build` runs once, here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each TypeScript source folder and the folder tsc compiles it into. */
const OUTPUTS: readonly { readonly source: string; readonly output: string }[] = [
  { source: 'runtime/src', output: 'runtime/dist' },
  { source: 'cli', output: 'dist/cli' },
];

/** The first source file whose compiled `.js` is missing or older than it, if any. */
export function staleSource(): string | undefined {
  for (const { source, output } of OUTPUTS) {
    const entries = readdirSync(join(ROOT, source), { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      const compiled = join(ROOT, output, relative(join(ROOT, source), file)).replace(
        /\.ts$/,
        '.js',
      );
      if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(file).mtimeMs)
        return relative(ROOT, file);
    }
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  console.log(`The build is older than ${stale}: running npm run build once for these tests`);
  const result = spawnSync('npm run build', { cwd: ROOT, stdio: 'inherit', shell: true });
  if (result.status !== 0)
    throw new Error(`npm run build failed (exit ${String(result.status)}); the tests need it`);
}
