/**
 * Global setup of the vitest projects whose tests run the build (see vitest.config.ts): tests that
 * spawn the CLI (`dist/cli/main.js`), compile generated services against the runtime's types
 * (`runtime/dist`) or start the SQLite readers' worker (`runtime/dist/sqlite/reader-worker.js`).
 *
 * Everything else runs from the TypeScript sources, so a full build before every run is wasted
 * time; but a stale build would test old code without a word. So: when any input of the build is
 * newer than what the build made from it, or the templates and sources are not the ones the build
 * fingerprinted (a file added, changed or removed), `npm run build` runs once, here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourcesFingerprint } from '../../cli/generate/fingerprint.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each TypeScript source folder and the folder tsc compiles it into. */
const OUTPUTS: readonly { readonly source: string; readonly output: string }[] = [
  { source: 'runtime/src', output: 'runtime/dist' },
  { source: 'cli', output: 'dist/cli' },
];

/**
 * The build's last output (scripts/precompile-templates.mjs writes it after tsc and the
 * templates): it holds the fingerprint of the templates and sources the build was made from.
 */
export const BUILD_STAMP = 'dist/cli/generate/fingerprint.json';

/** The admin app's page, which its build (runtime/admin/build.mjs) writes after its files. */
const ADMIN_PAGE = 'runtime/dist/admin/index.html';

/** Inputs of the build and of the CLI's output besides the TypeScript sources. */
const OTHER_INPUTS: readonly string[] = [
  'package.json',
  'tsconfig.base.json',
  'tsconfig.build.json',
  'runtime/package.json',
  'runtime/tsconfig.json',
  'scripts/precompile-templates.mjs',
];

function filesUnder(root: string, dir: string, extension: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/**
 * Why the build under `root` is stale, naming the first input found newer than its output (or the
 * output missing), or undefined when the build is current. Inputs: the TypeScript sources of the
 * CLI and the runtime (each against its compiled `.js`), the templates, the package manifests, the
 * TypeScript configurations and the precompile script (against the build stamp); and the content
 * of the templates and sources against the fingerprint the build recorded, which also notices a
 * removed file.
 */
export function staleInput(root: string = ROOT): string | undefined {
  for (const { source, output } of OUTPUTS) {
    for (const file of filesUnder(root, source, '.ts')) {
      if (file.endsWith('.d.ts')) continue;
      const compiled = join(root, output, relative(source, file)).replace(/\.ts$/, '.js');
      if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(join(root, file)).mtimeMs)
        return file;
    }
  }
  // The admin app's sources (runtime/admin, bundled by its build.mjs) against the page it writes
  // last.
  const admin = ['.ts', '.tsx', '.css', '.mjs', '.json'].flatMap((extension) =>
    filesUnder(root, 'runtime/admin', extension),
  );
  const page = join(root, ADMIN_PAGE);
  if (admin.length > 0 && !existsSync(page)) return `${ADMIN_PAGE} (missing)`;
  for (const file of admin)
    if (statSync(join(root, file)).mtimeMs > statSync(page).mtimeMs) return file;
  const stamp = join(root, BUILD_STAMP);
  if (!existsSync(stamp)) return `${BUILD_STAMP} (missing)`;
  const built = statSync(stamp).mtimeMs;
  for (const file of [...filesUnder(root, 'templates', '.hbs'), ...OTHER_INPUTS]) {
    const path = join(root, file);
    if (existsSync(path) && statSync(path).mtimeMs > built) return file;
  }
  const recorded = (JSON.parse(readFileSync(stamp, 'utf8')) as { fingerprint?: unknown })
    .fingerprint;
  if (recorded !== sourcesFingerprint(root))
    return 'the templates or sources (a file added, changed or removed since the build)';
  return undefined;
}

export default function setup(): void {
  const stale = staleInput();
  if (stale === undefined) return;
  console.log(`The build is older than ${stale}: running npm run build once for these tests`);
  const result = spawnSync('npm run build', { cwd: ROOT, stdio: 'inherit', shell: true });
  if (result.status !== 0)
    throw new Error(`npm run build failed (exit ${String(result.status)}); the tests need it`);
}
