// Shared parts of the single-service scripts (references.mjs, paging.mjs): generating and
// compiling a service, starting it as a child process on 127.0.0.1, and timing sequential
// requests over one keep-alive connection.
import { Buffer } from 'node:buffer';
import { prng } from './data.mjs';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { freePort, sleep } from './servers.mjs';
import { CLI, ROOT, TSC } from './setup.mjs';

const RUNTIME = join(ROOT, 'runtime', 'dist', 'index.js');

export const log = (text) => process.stderr.write(`${text}\n`);

/** Runs `command args` in the repository root; resolves its output, rejects with it on failure. */
export function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} failed (${code}):\n${output}`)),
    );
  });
}

/** Throws unless dist/cli and runtime/dist are built. */
export function requireBuild() {
  for (const [file, hint] of [
    [CLI, 'dist/cli'],
    [RUNTIME, 'runtime/dist'],
  ]) {
    if (!existsSync(file)) throw new Error(`${hint} is missing: run \`npm run build\` first`);
  }
}

/** Generates `schema` (a path) into `service` and compiles it with tsc (no type check). */
export async function generateService(schema, service) {
  await run(process.execPath, [
    CLI,
    'generate',
    relative(ROOT, schema),
    '-o',
    relative(ROOT, service),
  ]);
  await run(process.execPath, [TSC, '-p', service, '--noCheck']);
}

export const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One HTTP request; resolves `{status, text, ms}` with the time until the body was read. */
export function http(base, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const started = performance.now();
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode, text, ms });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export async function getJson(base, path) {
  const response = await http(base, 'GET', path);
  if (response.status !== 200)
    throw new Error(`GET ${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return JSON.parse(response.text);
}

/**
 * Starts `<service>/dist/server.js` on a free port of 127.0.0.1 with `DATABASE_URL` and waits
 * until GET /health answers 200. Returns `{ base, stop() }`; `stop` ends the process (SIGTERM,
 * SIGKILL after 10 s) and resolves once it has exited.
 */
export async function startService(service, databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [join(service, 'dist', 'server.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stop = async () => {
    if (server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  let serverErr = '';
  server.stderr.on('data', (chunk) => (serverErr = (serverErr + chunk).slice(-4000)));
  try {
    for (let attempt = 0; ; attempt++) {
      if (server.exitCode !== null) throw new Error(`the service exited:\n${serverErr}`);
      try {
        if ((await http(base, 'GET', '/health')).status === 200) break;
      } catch {
        // not listening yet
      }
      if (attempt > 300) throw new Error(`the service did not start:\n${serverErr}`);
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { base, pid: server.pid, stop };
}

/** The q-quantile (0–1) of sorted values, nearest rank. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index];
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Times `requests` sequential GETs of `path` after `warmup` untimed ones; returns `{p50, p99}` in
 * ms.
 */
export async function timePath(base, path, { warmup, requests }) {
  for (let i = 0; i < warmup; i++) await getJson(base, path);
  const times = [];
  for (let i = 0; i < requests; i++) {
    const response = await http(base, 'GET', path);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    times.push(response.ms);
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** Parses `--name=N` options (positive integers) and `--quick`; other arguments throw. */
export function parseOptions(argv, names, script) {
  const pattern = new RegExp(`^--(${names.join('|')})=`);
  for (const arg of argv) {
    if (arg !== '--quick' && !pattern.test(arg)) {
      throw new Error(`Unknown option ${arg}; see the header of bench/${script}`);
    }
  }
  const option = (name) => {
    const found = argv.find((a) => a.startsWith(`--${name}=`));
    if (found === undefined) return undefined;
    const value = Number(found.slice(name.length + 3));
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`--${name} needs a positive integer`);
    return value;
  };
  return { quick: argv.includes('--quick'), option };
}

const LISTING_WORDS = [
  'alpha',
  'bravo',
  'cedar',
  'delta',
  'ember',
  'fjord',
  'gamma',
  'harbor',
  'iris',
  'jade',
];

/**
 * The n-th shop PRODUCT of the listing and paging benchmarks: a plausible size, with ties on price
 * and stock, in one of `categories` categories (`cat-0`…). Its name is unique within its category
 * (the shop's unique [category, name]): `n` ends it.
 */
export function listingProduct(n, random, categories) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  return {
    code: `P${String(n).padStart(7, '0')}`,
    name: `${pick(LISTING_WORDS)} ${pick(LISTING_WORDS)} ${Math.floor(random() * 1_000_000)} ${n}`,
    category: `cat-${n % categories}`,
    price: (100 + Math.floor(random() * 20_000)) / 100,
    stock: Math.floor(random() * 1000),
    weightKg: Math.floor(random() * 10_000) / 1000,
    available: random() < 0.7,
    releaseDate: `20${10 + Math.floor(random() * 15)}-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}`,
    status: pick(['DRAFT', 'ACTIVE', 'RETIRED']),
    size: pick(['S', 'M', 'L']),
    dimensions: {
      width: 1 + Math.floor(random() * 100),
      height: 1 + Math.floor(random() * 100),
      unit: 'cm',
    },
    tags: [pick(LISTING_WORDS), pick(LISTING_WORDS)],
  };
}

/**
 * Seeds a shop service at `base` through its API: the `categories` CATEGORY records first
 * (PRODUCT.category has onDelete: RESTRICT), then `records` products (`listingProduct`, seed 42)
 * in POSTs of `batch`.
 */
export async function seedListingShop(base, { records, categories = 50, batch = 5_000 }) {
  const created = await http(base, 'POST', '/data/CATEGORY', {
    data: Array.from({ length: categories }, (_, n) => ({ name: `cat-${n}` })),
  });
  if (created.status !== 200)
    throw new Error(`seeding categories failed: ${created.status} ${created.text.slice(0, 300)}`);
  const random = prng(42);
  for (let first = 0; first < records; first += batch) {
    const list = [];
    for (let n = first; n < Math.min(records, first + batch); n++)
      list.push(listingProduct(n, random, categories));
    const response = await http(base, 'POST', '/data/PRODUCT', { data: list });
    if (response.status !== 200)
      throw new Error(`seeding failed: ${response.status} ${response.text.slice(0, 300)}`);
  }
}
