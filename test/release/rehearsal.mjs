#!/usr/bin/env node
// The release rehearsal (SPEC §6; `npm run test:release`, run by .ci/run): publishes both packages
// to a real npm registry started here (Verdaccio, on 127.0.0.1, with a temporary storage and the
// configured public registry as the uplink for third-party packages), then does in a fresh git
// repository outside this workspace what a user does: install the CLI, generate, install, build
// and start the service, write and read a record, check, commit, regenerate, change the schema,
// regenerate without arguments, rebuild, and find the record still there. Nothing here uses this
// workspace's node_modules. Every step is logged; any failure exits 1.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();
const children = new Set();
let step = 0;

function log(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  console.log(`[release ${seconds}s] ${message}`);
}

function fail(message) {
  throw new Error(message);
}

function check(condition, message) {
  if (!condition) fail(message);
}

/** Runs a command to its end; its output is kept and shown when it fails (or always, `show`). */
function run(command, args, { cwd, env, allowFail = false, show = false, timeoutMs = 600_000 }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      const quiet = stderr
        .split('\n')
        .filter((line) => !line.includes('Unknown user config') && line.trim() !== '')
        .join('\n');
      if (show && stdout.trim() !== '') console.log(indent(stdout));
      if (code !== 0 && !allowFail) {
        reject(
          new Error(
            `${command} ${args.join(' ')} (in ${cwd}) exited ${code}\n${indent(stdout)}\n${indent(quiet)}`,
          ),
        );
        return;
      }
      resolve({ code, stdout, stderr: quiet });
    });
  });
}

function indent(text) {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

async function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url, what, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) fail(`${what} did not answer ${url} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function json(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

/** The environment of every child: no npm_* variables of an outer `npm run`, our user config. */
function childEnv(userconfig) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  }
  env.npm_config_userconfig = userconfig;
  env.npm_config_update_notifier = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_audit = 'false';
  return env;
}

function begin(title) {
  step++;
  log(`step ${step}: ${title}`);
}

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'entity-gen-release-'));
  log(`working in ${work}`);
  try {
    await rehearse(work);
  } finally {
    const left = [...children];
    children.clear();
    for (const child of left) child.kill('SIGKILL');
    await rm(work, { recursive: true, force: true });
  }
}

async function rehearse(work) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const upstream = (
    await run(npm, ['config', 'get', 'registry'], { cwd: work, env: process.env })
  ).stdout.trim();

  begin(`start a Verdaccio registry on 127.0.0.1 (uplink ${upstream})`);
  const port = await freePort();
  const registry = `http://127.0.0.1:${port}/`;
  const storage = join(work, 'registry');
  await mkdir(storage, { recursive: true });
  const config = join(storage, 'config.yaml');
  await writeFile(
    config,
    [
      `storage: ${JSON.stringify(join(storage, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(storage, 'htpasswd'))}`,
      '    max_users: 10',
      'uplinks:',
      '  npmjs:',
      `    url: ${JSON.stringify(upstream)}`,
      '    timeout: 120s',
      'packages:',
      "  '@entity-gen/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: npmjs',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const verdaccio = createRequire(join(ROOT, 'package.json')).resolve('verdaccio/bin/verdaccio');
  const server = spawn(
    process.execPath,
    [verdaccio, '--config', config, '--listen', `127.0.0.1:${port}`],
    { cwd: storage, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(server);
  let serverLog = '';
  server.stdout.on('data', (chunk) => (serverLog += chunk));
  server.stderr.on('data', (chunk) => (serverLog += chunk));
  server.on('exit', (code) => {
    if (children.has(server)) log(`Verdaccio exited (${code}):\n${indent(serverLog)}`);
  });
  await waitFor(`${registry}-/ping`, 'Verdaccio');

  begin('create a publisher account and publish @entity-gen/runtime, then @entity-gen/cli');
  const user = await json('PUT', `${registry}-/user/org.couchdb.user:release`, {
    name: 'release',
    password: 'release-rehearsal-password',
    email: 'release@example.test',
    type: 'user',
    roles: [],
    date: new Date().toISOString(),
  });
  check(typeof user.body.token === 'string', `no token from Verdaccio: ${JSON.stringify(user)}`);
  // The user's own npm settings (CA file, node headers for native builds) plus the registry and
  // its token: every npm command below, in the app and in its service, uses this registry.
  const userconfig = join(work, 'npmrc');
  const own = join(homedir(), '.npmrc');
  await writeFile(
    userconfig,
    `${existsSync(own) ? readFileSync(own, 'utf8') : ''}\nregistry=${registry}\n//127.0.0.1:${port}/:_authToken=${user.body.token}\n`,
  );
  const env = childEnv(userconfig);
  for (const dir of [join(ROOT, 'runtime'), ROOT]) {
    const published = await run(npm, ['publish', '--registry', registry], { cwd: dir, env });
    log(`  published ${published.stdout.trim().split('\n').at(-1)}`);
  }
  const meta = await json('GET', `${registry}@entity-gen%2fcli`);
  check(
    meta.body['dist-tags']?.latest === version,
    `@entity-gen/cli ${version} is not on the registry`,
  );

  begin('a fresh application repository outside the workspace: npm install -D @entity-gen/cli');
  const app = join(work, 'app');
  await mkdir(app, { recursive: true });
  await writeFile(join(app, '.gitignore'), 'node_modules/\n');
  await writeFile(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'notes-app', version: '1.0.0', private: true }, null, 2)}\n`,
  );
  await run('git', ['init', '-q'], { cwd: app, env });
  await run(npm, ['install', '-D', '@entity-gen/cli'], { cwd: app, env, timeoutMs: 600_000 });
  check(
    existsSync(join(app, 'node_modules/@entity-gen/cli/dist/cli/main.js')),
    'the CLI is not installed',
  );
  const installed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  log(`  devDependencies: ${JSON.stringify(installed.devDependencies)}`);

  begin(
    "write schema.json and run the card's literal command: npx entity-gen generate schema.json",
  );
  const schema = {
    type: 'ENTITY',
    entity: {
      name: 'NOTE',
      lk: ['id'],
      fields: [
        { name: 'id', type: 'STRING' },
        { name: 'title', type: 'STRING', required: true },
      ],
    },
  };
  await writeFile(join(app, 'schema.json'), `${JSON.stringify(schema, null, 2)}\n`);
  const generated = await run(npx, ['entity-gen', 'generate', 'schema.json'], {
    cwd: app,
    env,
    show: true,
  });
  check(generated.stdout.includes(' in service: '), 'generate does not say it wrote ./service');
  const servicePackage = JSON.parse(readFileSync(join(app, 'service/package.json'), 'utf8'));
  check(
    servicePackage.dependencies['@entity-gen/runtime'] === `^${version}`,
    `the service depends on ${servicePackage.dependencies['@entity-gen/runtime']}, not ^${version}`,
  );

  begin('npm install, npm run build in the service (the runtime comes from the registry)');
  const service = join(app, 'service');
  await run(npm, ['install'], { cwd: service, env, timeoutMs: 900_000 });
  await run(npm, ['run', 'build'], { cwd: service, env });

  const start = async () => {
    const servicePort = await freePort();
    const child = spawn(process.execPath, ['dist/server.js'], {
      cwd: service,
      env: { ...env, PORT: String(servicePort), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const base = `http://127.0.0.1:${servicePort}`;
    try {
      await waitFor(`${base}/health`, 'the service', 30_000);
    } catch (error) {
      fail(`${error.message}\n${indent(output)}`);
    }
    return {
      base,
      stop: async () => {
        children.delete(child);
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      },
    };
  };

  begin('npm start; POST and GET a record');
  let running = await start();
  const posted = await json('POST', `${running.base}/data/note`, {
    data: { id: 'n1', title: 'First' },
  });
  check(posted.status === 200, `POST answered ${posted.status}: ${JSON.stringify(posted.body)}`);
  const read = await json('GET', `${running.base}/data/note/n1`);
  check(read.body.data?.title === 'First', `GET answered ${JSON.stringify(read.body)}`);
  log(`  ${JSON.stringify(read.body)}`);
  await running.stop();

  begin('npx entity-gen check (no arguments): exit 0');
  const clean = await run(npx, ['entity-gen', 'check'], { cwd: app, env, show: true });
  check(clean.code === 0, 'check failed');

  begin('git commit: only sources are committed');
  await run('git', ['add', '-A'], { cwd: app, env });
  const git = ['-c', 'user.name=Release Rehearsal', '-c', 'user.email=release@example.test'];
  await run('git', [...git, 'commit', '-q', '-m', 'Add the notes service'], { cwd: app, env });
  const tracked = (await run('git', ['ls-files'], { cwd: app, env })).stdout.trim().split('\n');
  log(`  ${tracked.length} files committed: ${tracked.join(', ')}`);
  const leaked = tracked.filter((path) =>
    /(^|\/)(node_modules|dist|data)\/|\.db(-wal|-shm)?$/.test(path),
  );
  check(leaked.length === 0, `committed build output or data: ${leaked.join(', ')}`);
  check(tracked.includes('service/package-lock.json'), 'the service lock file is not committed');

  begin('regenerate from inside service/ with -o .: nothing changes');
  await run(npx, ['entity-gen', 'generate', '-o', '.'], { cwd: service, env, show: true });
  const unchanged = (await run('git', ['status', '--porcelain'], { cwd: app, env })).stdout;
  check(unchanged.trim() === '', `git status is not clean:\n${unchanged}`);

  begin('change the schema (a new field): npx entity-gen check exits 1');
  schema.entity.fields.push({ name: 'pinned', type: 'BOOL' });
  await writeFile(join(app, 'schema.json'), `${JSON.stringify(schema, null, 2)}\n`);
  const stale = await run(npx, ['entity-gen', 'check'], {
    cwd: app,
    env,
    allowFail: true,
    show: true,
  });
  check(stale.code === 1, `check exited ${stale.code} on a changed schema`);

  begin('npx entity-gen generate (no arguments), then check: exit 0');
  await run(npx, ['entity-gen', 'generate'], { cwd: app, env, show: true });
  await run(npx, ['entity-gen', 'check'], { cwd: app, env });

  begin('rebuild and restart: the record is still there and the new field works');
  await run(npm, ['run', 'build'], { cwd: service, env });
  running = await start();
  const kept = await json('GET', `${running.base}/data/note/n1`);
  check(kept.body.data?.title === 'First', `the record is gone: ${JSON.stringify(kept.body)}`);
  const patched = await json('PATCH', `${running.base}/data/note/n1`, { data: { pinned: 'true' } });
  check(
    patched.body.data?.pinned === true,
    `the new field does not work: ${JSON.stringify(patched.body)}`,
  );
  log(`  ${JSON.stringify(patched.body.data)}`);
  await running.stop();

  begin('git status shows only the schema and the service sources');
  const status = (
    await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: app, env })
  ).stdout
    .trimEnd()
    .split('\n');
  log(`  ${status.join(' | ')}`);
  const paths = status.map((line) => line.slice(3));
  check(paths.includes('schema.json'), 'the schema change is not in git status');
  const unexpected = paths.filter(
    (path) =>
      path !== 'schema.json' &&
      !(
        path.startsWith('service/') &&
        !/^service\/(node_modules|dist|data)\//.test(path) &&
        !/\.db(-wal|-shm)?$/.test(path)
      ),
  );
  check(unexpected.length === 0, `unexpected changes: ${unexpected.join(', ')}`);
  check(
    paths.some((path) => path.startsWith('service/migrations/')),
    'the schema change wrote no migration',
  );
  log(`rehearsal passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (error) => {
    log(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
