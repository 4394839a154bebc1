#!/usr/bin/env node
// `npm run demo`: the user's workflow from the packed packages, as it will be from the registry.
// Packs @entity-gen/runtime and @entity-gen/cli into demo/, makes demo/app an application that
// installs the CLI from that tarball, generates a service from fixtures/shop/shop.yaml there
// (`npx entity-gen generate`), installs, builds and starts it on SQLite at http://localhost:8080
// (PORT overrides). Ctrl-C stops it. Run `npm ci` first.
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO = join(ROOT, 'demo');
const APP = join(DEMO, 'app');
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

function run(command, args, cwd) {
  console.log(`\n$ ${command} ${args.join(' ')}    (in ${cwd.slice(ROOT.length + 1) || '.'})`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
}

await rm(DEMO, { recursive: true, force: true });
await mkdir(APP, { recursive: true });
await run(npm, ['pack', '--pack-destination', DEMO], join(ROOT, 'runtime'));
await run(npm, ['pack', '--pack-destination', DEMO], ROOT);
await writeFile(
  join(APP, 'package.json'),
  `${JSON.stringify({ name: 'shop-app', version: '1.0.0', private: true }, null, 2)}\n`,
);
// While unpublished, the runtime the CLI depends on comes from its tarball too.
const runtimeTarball = `entity-gen-runtime-${version}.tgz`;
await run(npm, ['install', '-D', `../entity-gen-cli-${version}.tgz`, `../${runtimeTarball}`], APP);
await run(
  npx,
  [
    'entity-gen',
    'generate',
    '../../fixtures/shop/shop.yaml',
    '--runtime-spec',
    `file:../../${runtimeTarball}`,
    '--driver',
    'sqlite',
  ],
  APP,
);
const service = join(APP, 'service');
await run(npm, ['install'], service);
await run(npm, ['run', 'build'], service);
await run(npm, ['start'], service);
