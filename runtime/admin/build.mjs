/**
 * Builds the admin web app (docs/admin.md) into dist/admin/: one script and one style sheet, each
 * named with a hash of its content (and its gzip-compressed copy), and the page that loads them. Run by the runtime's build.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const OUT = fileURLToPath(new URL('../dist/admin/', import.meta.url));

const result = await build({
  entryPoints: [`${HERE}src/main.tsx`],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  write: false,
  outdir: OUT,
  entryNames: 'app',
  logLevel: 'warning',
});

await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
const names = {};
for (const file of result.outputFiles) {
  const extension = file.path.slice(file.path.lastIndexOf('.') + 1);
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  const name = `app-${hash}.${extension}`;
  names[extension] = name;
  await writeFile(`${OUT}${name}`, file.contents);
  // Served instead to browsers that accept gzip (all of them): the service compresses nothing.
  await writeFile(`${OUT}${name}.gz`, gzipSync(file.contents, { level: 9 }));
}
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Admin</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="/admin/${names.css}" />
    <script type="module" src="/admin/${names.js}"></script>
  </head>
  <body>
    <div id="app"><p>Loading…</p></div>
    <noscript>The admin app needs JavaScript.</noscript>
  </body>
</html>
`;
await writeFile(`${OUT}index.html`, page);
console.log(`admin app: ${(await readdir(OUT)).join(', ')}`);
