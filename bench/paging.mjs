#!/usr/bin/env node
// Deep paging: offset (`?orderBy=…&start=90000&limit=100`) vs keyset cursor (`?cursor=<meta.next>`)
// on a generated service over HTTP on loopback.
//
//   node bench/paging.mjs            100 000 PRODUCT records, page at depth 90 000, 3 rounds
//   node bench/paging.mjs --quick    20 000 records, depth 18 000, 1 round (< 30 s)
//
// Options (override the mode): --records=N --depth=N --limit=N --requests=N --rounds=N
//
// Needs `npm run build` (runtime/dist and dist/cli). It generates the shop fixture into
// bench/output/paging/service, compiles it with tsc, seeds a fresh SQLite file through
// POST /data/PRODUCT, starts the service as a child process on 127.0.0.1 and times sequential
// GET requests (one connection, keep-alive). For each sort order it times the first page
// (start=0), the offset page at the depth, and the cursor page at the same depth (reached by
// following meta.next). Latency is per request including reading the body; p50/p99 over
// --requests requests per round, then the median over rounds. It prints a markdown table; it
// asserts no timing, only that the cursor page holds the same records as the offset page.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'bench', 'output', 'paging');
const SERVICE = join(OUT, 'service');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const RUNTIME = join(ROOT, 'runtime', 'dist', 'index.js');
const SCHEMA = 'fixtures/shop/shop.yaml';

// --- Options -----------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const option = (name) => {
  const found = argv.find((a) => a.startsWith(`--${name}=`));
  if (found === undefined) return undefined;
  const value = Number(found.slice(name.length + 3));
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`--${name} needs a positive integer`);
  return value;
};
for (const arg of argv) {
  if (arg !== '--quick' && !/^--(records|depth|limit|requests|rounds)=/.test(arg)) {
    throw new Error(`Unknown option ${arg}; see the header of bench/paging.mjs`);
  }
}
const RECORDS = option('records') ?? (QUICK ? 20_000 : 100_000);
const DEPTH = option('depth') ?? Math.floor(RECORDS * 0.9);
const LIMIT = option('limit') ?? 100;
const REQUESTS = option('requests') ?? (QUICK ? 30 : 100);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const WARMUP = QUICK ? 5 : 20;
const SEED_BATCH = 5_000;
if (DEPTH + LIMIT > RECORDS) throw new Error('--depth + --limit must not exceed --records');

/** Sort orders measured: query (without paging) and a label. */
const ORDERS = [
  { label: 'key (no orderBy)', query: '' },
  { label: 'orderBy=name (indexed STRING)', query: 'orderBy=name' },
  { label: 'orderBy=-price,name (indexed DECIMAL, ties)', query: 'orderBy=-price,name' },
  { label: 'orderBy=stock (not indexed, ties)', query: 'orderBy=stock' },
];

// --- Helpers -----------------------------------------------------------------------------------
const log = (text) => process.stderr.write(`${text}\n`);

function run(command, args) {
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

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One HTTP request; resolves `{status, body, ms}` with the time until the body was read. */
function http(base, method, path, body) {
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

async function getJson(base, path) {
  const response = await http(base, 'GET', path);
  if (response.status !== 200)
    throw new Error(`GET ${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return JSON.parse(response.text);
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Times `requests` sequential GETs of `path` (after a warm-up); returns `{p50, p99}` in ms. */
async function timePath(base, path) {
  for (let i = 0; i < WARMUP; i++) await getJson(base, path);
  const times = [];
  for (let i = 0; i < REQUESTS; i++) {
    const response = await http(base, 'GET', path);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    times.push(response.ms);
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** A deterministic PRNG (mulberry32). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
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

/** The n-th PRODUCT record: a plausible size, with ties on price and stock. */
function product(n, random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  return {
    code: `P${String(n).padStart(7, '0')}`,
    name: `${pick(WORDS)} ${pick(WORDS)} ${Math.floor(random() * 1_000_000)}`,
    category: `cat-${n % 50}`,
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
    tags: [pick(WORDS), pick(WORDS)],
  };
}

const fmt = (ms) => (Number.isFinite(ms) ? `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms` : 'n/a');

// --- Main --------------------------------------------------------------------------------------
let server;

async function main() {
  for (const [file, hint] of [
    [CLI, 'dist/cli'],
    [RUNTIME, 'runtime/dist'],
  ]) {
    if (!existsSync(file)) throw new Error(`${hint} is missing: run \`npm run build\` first`);
  }
  const started = performance.now();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });

  log(`generating ${SCHEMA} into ${relative(ROOT, SERVICE)} and compiling it`);
  await run(process.execPath, [CLI, 'generate', SCHEMA, '-o', relative(ROOT, SERVICE)]);
  await run(process.execPath, [TSC, '-p', SERVICE, '--noCheck']);

  const database = join(OUT, 'paging.db');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [join(SERVICE, 'dist', 'server.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${database}`,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serverErr = '';
  server.stderr.on('data', (chunk) => (serverErr = (serverErr + chunk).slice(-4000)));
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

  log(`seeding ${RECORDS} PRODUCT records in batches of ${SEED_BATCH}`);
  const seedStarted = performance.now();
  const random = prng(42);
  for (let first = 0; first < RECORDS; first += SEED_BATCH) {
    const batch = [];
    for (let n = first; n < Math.min(RECORDS, first + SEED_BATCH); n++)
      batch.push(product(n, random));
    const response = await http(base, 'POST', '/data/PRODUCT', { data: batch });
    if (response.status !== 200)
      throw new Error(`seeding failed: ${response.status} ${response.text.slice(0, 300)}`);
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const count = (await getJson(base, '/entity/PRODUCT/recordCounts')).data.count;
  if (count !== RECORDS) throw new Error(`expected ${RECORDS} records, found ${count}`);

  const rows = [];
  for (const order of ORDERS) {
    const sep = order.query === '' ? '' : '&';
    const offsetPath = `/data/PRODUCT?${order.query}${sep}start=${DEPTH}&limit=${LIMIT}`;
    const firstPath = `/data/PRODUCT?${order.query}${sep}start=0&limit=${LIMIT}`;

    // Follow meta.next to the depth (big pages to get there quickly; the cursor carries the
    // position, and a request's own limit overrides the page size).
    const walkStarted = performance.now();
    const step = 1000;
    let position = 0;
    let page = await getJson(
      base,
      `/data/PRODUCT?${order.query}${sep}limit=${Math.min(step, DEPTH)}`,
    );
    position += page.data.length;
    while (position < DEPTH) {
      const size = Math.min(step, DEPTH - position);
      page = await getJson(
        base,
        `/data/PRODUCT?${order.query}${sep}limit=${size}&cursor=${encodeURIComponent(page.meta.next)}`,
      );
      position += page.data.length;
    }
    const walkSeconds = (performance.now() - walkStarted) / 1000;
    const cursorPath = `/data/PRODUCT?${order.query}${sep}limit=${LIMIT}&cursor=${encodeURIComponent(page.meta.next)}`;

    const byOffset = (await getJson(base, offsetPath)).data.map((r) => r.code);
    const byCursor = (await getJson(base, cursorPath)).data.map((r) => r.code);
    const same = byOffset.length === LIMIT && JSON.stringify(byOffset) === JSON.stringify(byCursor);
    if (!same) log(`  WARNING ${order.label}: the cursor page differs from the offset page`);

    const rounds = { first: [], offset: [], cursor: [] };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.first.push(await timePath(base, firstPath));
      rounds.offset.push(await timePath(base, offsetPath));
      rounds.cursor.push(await timePath(base, cursorPath));
    }
    const summary = (list) => ({
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
    });
    const row = {
      ...order,
      walkSeconds,
      same,
      first: summary(rounds.first),
      offset: summary(rounds.offset),
      cursor: summary(rounds.cursor),
    };
    rows.push(row);
    log(`  ${order.label}: offset p50 ${fmt(row.offset.p50)}, cursor p50 ${fmt(row.cursor.p50)}`);
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const out = [
    `## Deep paging: offset vs cursor (${RECORDS.toLocaleString('en-US')} records, page of ${LIMIT} at depth ${DEPTH.toLocaleString('en-US')})`,
    '',
    `Generated shop service, PRODUCT on SQLite (file, WAL), HTTP/1.1 keep-alive on loopback, one request at a time. ` +
      `p50/p99 over ${REQUESTS} requests, median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}. ` +
      `Node ${process.version}, ${cpu}, ${os.cpus().length} CPUs. Seeding took ${seedSeconds.toFixed(1)} s.`,
    '',
    `| order | start=0 p50 | offset start=${DEPTH} p50 | offset p99 | cursor p50 | cursor p99 | offset ÷ cursor (p50) | same records |`,
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${fmt(r.first.p50)} | ${fmt(r.offset.p50)} | ${fmt(r.offset.p99)} | ${fmt(r.cursor.p50)} | ${fmt(r.cursor.p99)} | ${(r.offset.p50 / r.cursor.p50).toFixed(1)}× | ${r.same ? 'yes' : 'NO'} |`,
    ),
    '',
    `Command: \`node bench/paging.mjs${argv.length > 0 ? ` ${argv.join(' ')}` : ''}\` (total ${((performance.now() - started) / 1000).toFixed(1)} s).`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

async function stopServer() {
  if (server === undefined || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

process.once('SIGINT', () => {
  void stopServer().finally(() => process.exit(130));
});

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
} finally {
  agent.destroy();
  await stopServer();
}
