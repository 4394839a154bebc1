#!/usr/bin/env node
// Precompiles the generator's Handlebars templates (templates/**/*.hbs) into
// dist/cli/generate/precompiled-templates.cjs, so the CLI does not parse and compile them on every
// run; cli/generate/templates.ts uses that file when it is there and compiles the .hbs files
// otherwise (tests run from the sources). Part of `npm run build`.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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
// The templates' fingerprint, made as cli/generate/templates.ts makes it when it compiles the
// sources itself: every template's file name and text in file order, then the helpers' module,
// then the Handlebars release.
const fingerprint = createHash('sha256');
const entries = hbsFiles(templates)
  .sort()
  .map((file) => {
    const text = readFileSync(join(templates, file), 'utf8');
    fingerprint.update(`${file}\0${text}\0`);
    // Partials are inserted where they stand: without the trailing newline of their file.
    const source = file.startsWith('partials/') ? text.trimEnd() : text;
    return `    ${JSON.stringify(file)}: ${Handlebars.precompile(source, OPTIONS)},`;
  });
const helpers = join('cli', 'generate', 'templates.ts');
fingerprint.update(
  `${helpers.split('\\').join('/')}\0${readFileSync(join(root, helpers), 'utf8')}\0`,
);
fingerprint.update(Handlebars.VERSION);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(
  target,
  `// Precompiled from templates/ by scripts/precompile-templates.mjs; do not edit.\n'use strict';\nmodule.exports = {\n  fingerprint: ${JSON.stringify(fingerprint.digest('hex'))},\n  templates: {\n${entries.join('\n')}\n  },\n};\n`,
);
