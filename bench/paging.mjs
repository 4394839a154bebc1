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
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  agent,
  generateService,
  getJson,
  log,
  median,
  parseOptions,
  requireBuild,
  seedListingShop,
  startService,
  timePath as timeRequests,
} from './lib/service.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'paging');
const SERVICE = join(OUT, 'service');
const SCHEMA = 'fixtures/shop/shop.yaml';

// --- Options -----------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(
  argv,
  ['records', 'depth', 'limit', 'requests', 'rounds'],
  'paging.mjs',
);
const RECORDS = option('records') ?? (QUICK ? 20_000 : 100_000);
const DEPTH = option('depth') ?? Math.floor(RECORDS * 0.9);
const LIMIT = option('limit') ?? 100;
const REQUESTS = option('requests') ?? (QUICK ? 30 : 100);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const WARMUP = QUICK ? 5 : 20;
const SEED_BATCH = 5_000;
const CATEGORIES = 50;
if (DEPTH + LIMIT > RECORDS) throw new Error('--depth + --limit must not exceed --records');

/** Sort orders measured: query (without paging) and a label. */
const ORDERS = [
  { label: 'key (no orderBy)', query: '' },
  { label: 'orderBy=name (indexed STRING)', query: 'orderBy=name' },
  { label: 'orderBy=-price,name (indexed DECIMAL, ties)', query: 'orderBy=-price,name' },
  { label: 'orderBy=stock (not indexed, ties)', query: 'orderBy=stock' },
];

// --- Helpers -----------------------------------------------------------------------------------
const timePath = (base, path) => timeRequests(base, path, { warmup: WARMUP, requests: REQUESTS });

const fmt = (ms) => (Number.isFinite(ms) ? `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms` : 'n/a');

// --- Main --------------------------------------------------------------------------------------
let server;

async function main() {
  requireBuild();
  const started = performance.now();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });

  log(`generating ${SCHEMA} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(join(ROOT, SCHEMA), SERVICE);

  server = await startService(SERVICE, `sqlite:${join(OUT, 'paging.db')}`);
  const { base } = server;

  log(`seeding ${RECORDS} PRODUCT records in batches of ${SEED_BATCH}`);
  const seedStarted = performance.now();
  await seedListingShop(base, { records: RECORDS, categories: CATEGORIES, batch: SEED_BATCH });
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
  await server?.stop();
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
