/**
 * The generator's fingerprint: a hash of everything that turns a model into text besides the
 * model itself — the templates, the generator's and the runtime's source code, the Handlebars
 * release. With the JSON of what a file is made from, it keys the cache of generated files: a
 * file made from the same model part by the same generator is neither made nor formatted again
 * (./format.ts). Any change to the generator, a comment included, changes it.
 *
 * The build records it in `fingerprint.json` next to this module in `dist/`
 * (scripts/precompile-templates.mjs, with `sourcesFingerprint`); running from the sources, it is
 * computed the same way, so both key the cache alike. The key is kept in the git-ignored cache
 * file (./cache.ts), never in the manifest: a change of the fingerprint alone changes no committed file.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from './paths.js';

/** The folders whose files make the fingerprint, and which of their files count. */
const SOURCES: readonly { readonly dir: string; readonly extension: string }[] = [
  { dir: 'templates', extension: '.hbs' },
  { dir: 'cli', extension: '.ts' },
  { dir: 'runtime/src', extension: '.ts' },
];

let cached: string | undefined;

/** The fingerprint of the running generator. */
export function generatorFingerprint(): string {
  if (cached !== undefined) return cached;
  const built = fileURLToPath(new URL('./fingerprint.json', import.meta.url));
  cached = existsSync(built)
    ? (JSON.parse(readFileSync(built, 'utf8')) as { fingerprint: string }).fingerprint
    : sourcesFingerprint(packageRoot());
  return cached;
}

/**
 * The fingerprint of the sources under `root` (the package folder): every file of `SOURCES`, by
 * its `/`-separated path in sorted order, name and text; then the Handlebars release.
 */
export function sourcesFingerprint(root: string): string {
  const files = SOURCES.flatMap(({ dir, extension }) =>
    readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/')),
  ).sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file}\0${readFileSync(join(root, file), 'utf8')}\0`);
  const handlebars = createRequire(import.meta.url)('handlebars/package.json') as {
    version: string;
  };
  hash.update(`handlebars ${handlebars.version}`);
  return hash.digest('hex');
}
