#!/usr/bin/env node
// The release rehearsal (SPEC §6; `npm run test:release`, run by .ci/run): publishes both packages
// to a real npm registry started here (Verdaccio, on 127.0.0.1, with a temporary storage and the
// configured public registry as the uplink for third-party packages), then does in a fresh git
// repository outside this workspace what a user does: install the CLI, generate, install, build
// and `npm start` the service, write and read a record, check, commit (sources only), regenerate,
// change the schema, regenerate without arguments, rebuild, find the record still there, and see
// only the schema and the service's sources changed. Nothing here uses this workspace's
// node_modules. Every step is logged; any failure exits 1.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();
const children = new Set();
/** Children started in a process group of their own (`npm start`): stopped as a whole tree. */
const groups = new Set();
let step = 0;

/**
 * The files of the generated service that are its sources, as committed: everything else under
 * service/ is dependencies, build output or data, which its .gitignore must keep out of git.
 */
const SERVICE_SOURCE =
  /^service\/(src\/.+|migrations\/.+|README\.md|openapi\.json|package\.json|package-lock\.json|tsconfig\.json|\.entity-gen\/manifest\.json)$/;

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

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}

/**
 * Whether a process of group `pgid` still runs. On Linux the group is read from /proc, so that
 * zombies (which nobody may reap when PID 1 of a container does not) do not count as running.
 */
function groupRuns(pgid) {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/**
 * Stops a child started with `detached: true` and everything it started: SIGTERM to the whole
 * process group (npm exits at once on SIGTERM, so signalling npm alone would orphan the service),
 * then waits until no process of the group runs; SIGKILL and a failure after `graceMs`.
 */
async function stopGroup(child, what, graceMs = 15_000) {
  groups.delete(child);
  const pgid = child.pid;
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupRuns(pgid) || (child.exitCode === null && child.signalCode === null)) {
    if (Date.now() > deadline) {
      signalGroup(pgid, 'SIGKILL');
      fail(`${what} did not stop within ${graceMs / 1000} s of SIGTERM; killed`);
    }
    await sleep(100);
  }
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

/**
 * The environment of every child: no npm_* variables of an outer `npm run`, our user config. One
 * stays: `npm_config_nodedir`, the Node.js headers that native modules (better-sqlite3) compile
 * against, when set; it outranks the user config's `nodedir`, which may be another Node's (CI runs
 * this rehearsal on Node 22 and 24 with that version's headers).
 */
function childEnv(userconfig) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    const name = key.toLowerCase();
    if (!name.startsWith('npm_') || name === 'npm_config_nodedir') env[key] = value;
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
    for (const child of groups) signalGroup(child.pid, 'SIGKILL');
    groups.clear();
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

  // `npm start`, as the user runs it: npm, the shell of the script and the service form a process
  // group of their own, which stop() ends as a whole.
  const start = async () => {
    const servicePort = await freePort();
    const child = spawn(npm, ['start'], {
      cwd: service,
      env: { ...env, PORT: String(servicePort), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    groups.add(child);
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
        await stopGroup(child, 'npm start');
        // The service itself got the signal and shut down in order (its last log line).
        check(
          /"msg":"stopped"/.test(output),
          `the service did not stop cleanly:\n${indent(output)}`,
        );
        log('  npm start: the service and its process tree stopped');
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
  // Exactly the application's own files and the service's sources (with its .gitignore).
  const APP_FILES = ['.gitignore', 'package.json', 'package-lock.json', 'schema.json'];
  const notSources = tracked.filter(
    (path) =>
      !APP_FILES.includes(path) && path !== 'service/.gitignore' && !SERVICE_SOURCE.test(path),
  );
  check(notSources.length === 0, `committed files that are not sources: ${notSources.join(', ')}`);
  for (const path of [
    'schema.json',
    'service/.gitignore',
    'service/package-lock.json',
    'service/.entity-gen/manifest.json',
    'service/src/server.ts',
  ]) {
    check(tracked.includes(path), `${path} is not committed`);
  }

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
  const unexpected = paths.filter((path) => path !== 'schema.json' && !SERVICE_SOURCE.test(path));
  check(
    unexpected.length === 0,
    `changes other than the schema and sources: ${unexpected.join(', ')}`,
  );
  for (const path of ['schema.json', 'service/.entity-gen/manifest.json']) {
    check(paths.includes(path), `${path} is not changed`);
  }
  check(
    paths.some((path) => path.startsWith('service/migrations/')),
    'the schema change wrote no migration',
  );
  check(
    paths.some((path) => path.startsWith('service/src/')),
    'the schema change changed no source file',
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
