/**
 * A generated service as users run it: generated, compiled with tsc and started as
 * `node dist/server.js` in a child process (as in test/e2e/server.test.ts), with request helpers
 * whose every wait is bounded.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { fixtureNamed, generateFixtureInto, OUTPUT, ROOT } from './generate.js';
import type { JsonResponse } from './http.js';
import { freePort } from './private-postgres.js';

const exec = promisify(execFile);

/**
 * Generates `fixture` into `test/output/<folder>` and compiles it with tsc; returns the folder.
 *
 * The compiled `dist/` is shared between the test files of a run (and the runs after it) through
 * `test/output/.build-cache/<key>/`, where the key is a hash of everything tsc reads: the
 * generated files (tsconfig.json included), the runtime's declarations in `runtime/dist`, the
 * installed packages (package-lock.json) and the TypeScript release. The first file to need a
 * build runs tsc and stores its output; the others copy it. A build is what tsc makes of these
 * inputs, so a copy is the same as a fresh compile, without its seconds of CPU.
 */
export async function buildFixtureService(fixture: string, folder: string): Promise<string> {
  const dir = await generateFixtureInto(fixtureNamed(fixture), folder);
  const cached = join(BUILD_CACHE, await buildKey(dir));
  if (!existsSync(join(cached, DONE)) && (await claim(cached))) {
    try {
      await compile(dir);
      const staging = `${cached}.${process.pid}.tmp`;
      await rm(staging, { recursive: true, force: true });
      await cp(join(dir, 'dist'), join(staging, 'dist'), { recursive: true });
      await writeFile(join(staging, DONE), '');
      await rm(cached, { recursive: true, force: true });
      await rename(staging, cached);
    } finally {
      await rm(`${cached}.lock`, { recursive: true, force: true });
    }
    return dir;
  }
  if (!existsSync(join(cached, DONE))) {
    // Another test file's build failed or was abandoned: compile here.
    await compile(dir);
    return dir;
  }
  await cp(join(cached, 'dist'), join(dir, 'dist'), { recursive: true });
  return dir;
}

/** Where compiled services are kept between test files and runs (git-ignored with test/output). */
const BUILD_CACHE = join(OUTPUT, '.build-cache');
/** The marker of a complete entry of the build cache. */
const DONE = 'complete';

async function compile(dir: string): Promise<void> {
  await exec(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
    { cwd: dir, timeout: 120_000 },
  );
}

/**
 * Takes the right to build the entry `cached` (true), or waits, at most two minutes, for the test
 * file that holds it to finish (false): files running in parallel build each service once.
 */
async function claim(cached: string): Promise<boolean> {
  await mkdir(BUILD_CACHE, { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(`${cached}.lock`);
      return true;
    } catch {
      // Held by another test file.
    }
    if (existsSync(join(cached, DONE)) || Date.now() - started > 120_000) return false;
    await sleep(100);
  }
}

/** The hash of every input of tsc's build of the service in `dir` (see buildFixtureService). */
async function buildKey(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const add = async (label: string, root: string, files: readonly string[]): Promise<void> => {
    for (const file of [...files].sort()) {
      hash.update(`${label}/${file}\0`);
      hash.update(await readFile(join(root, file)));
      hash.update('\0');
    }
  };
  await add('service', dir, await filesUnder(dir, (name) => !name.startsWith('node_modules')));
  const runtimeDist = join(ROOT, 'runtime', 'dist');
  await add(
    'runtime',
    runtimeDist,
    await filesUnder(runtimeDist, (name) => name.endsWith('.d.ts')),
  );
  await add('root', ROOT, ['package-lock.json', 'node_modules/typescript/package.json']);
  return hash.digest('hex').slice(0, 32);
}

async function filesUnder(dir: string, keep: (path: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter(keep);
}

/** Sends one request with a JSON body (if any) and parses the JSON answer; gives up after `timeoutMs`. */
export async function requestJson(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; timeoutMs?: number } = {},
): Promise<JsonResponse> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    ...(options.body === undefined
      ? {}
      : { body: JSON.stringify(options.body), headers: { 'content-type': 'application/json' } }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** A running `node dist/server.js`. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  readonly logs: string[];
  request(
    method: string,
    path: string,
    options?: { body?: unknown; timeoutMs?: number },
  ): Promise<JsonResponse>;
  /** True while the process has not exited. */
  alive(): boolean;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with the exit code (null when killed). */
  stop(timeoutMs?: number): Promise<number | null>;
}

/**
 * Starts `node dist/server.js` in `dir` on a free port of 127.0.0.1 with `env` added to the
 * environment, and waits (at most `timeoutMs`) for its "listening on" log line.
 */
export async function startServiceProcess(
  dir: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    });
  });
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));

  const service: ServiceProcess = {
    child,
    port,
    url,
    logs,
    request: (method, path, options) => requestJson(url, method, path, options),
    alive: () => exitCode === undefined,
    async stop(stopTimeoutMs = 15_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  const started = Date.now();
  for (;;) {
    if (logs.join('').includes('listening on')) return service;
    if (exitCode !== undefined) {
      throw new Error(`the service exited with ${exitCode} before listening:\n${logs.join('')}`);
    }
    if (Date.now() - started > timeoutMs) {
      await service.stop(1000);
      throw new Error(`the service did not listen within ${timeoutMs} ms:\n${logs.join('')}`);
    }
    await sleep(25);
  }
}

/** Polls `check` every `intervalMs` until it returns true; throws after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
