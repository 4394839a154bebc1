#!/usr/bin/env node
// Precompiles the generator's Handlebars templates (templates/**/*.hbs) into
// dist/cli/generate/precompiled-templates.cjs, so the CLI does not parse and compile them on every
// run; cli/generate/templates.ts uses that file when it is there and compiles the .hbs files
// otherwise (tests run from the sources). Also records the generator's fingerprint
// (cli/generate/fingerprint.ts) in dist/cli/generate/fingerprint.json. Part of `npm run build`.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Handlebars from 'handlebars';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const templates = join(root, 'templates');
const target = join(root, 'dist', 'cli', 'generate', 'precompiled-templates.cjs');

/** Every .hbs file under `dir`, as paths relative to the templates folder. */
function hbsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return hbsFiles(path);
    return entry.name.endsWith('.hbs') ? [relative(templates, path).split('\\').join('/')] : [];
  });
}

// The same options as cli/generate/templates.ts compiles with.
const OPTIONS = { noEscape: true, strict: true };
const entries = hbsFiles(templates)
  .sort()
  .map((file) => {
    const text = readFileSync(join(templates, file), 'utf8');
    // Partials are inserted where they stand: without the trailing newline of their file.
    const source = file.startsWith('partials/') ? text.trimEnd() : text;
    return `  ${JSON.stringify(file)}: ${Handlebars.precompile(source, OPTIONS)},`;
  });
mkdirSync(dirname(target), { recursive: true });
writeFileSync(
  target,
  `// Precompiled from templates/ by scripts/precompile-templates.mjs; do not edit.\n'use strict';\nmodule.exports = {\n${entries.join('\n')}\n};\n`,
);

// The generator's fingerprint (cli/generate/fingerprint.ts), computed from these sources once.
const { sourcesFingerprint } = await import(
  pathToFileURL(join(root, 'dist', 'cli', 'generate', 'fingerprint.js')).href
);
writeFileSync(
  join(dirname(target), 'fingerprint.json'),
  `${JSON.stringify({ fingerprint: sourcesFingerprint(root) })}\n`,
);
