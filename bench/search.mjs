#!/usr/bin/env node
// Full-text search (SPEC §17): `q=` throughput over the shop's PRODUCT (search: [name]) on SQLite,
// on a generated service over HTTP on loopback.
//
//   node bench/search.mjs            100 000 PRODUCT records, 3 rounds
//   node bench/search.mjs --quick    20 000 records, 1 round
//
// Options (override the mode): --records=N --seconds=N --rounds=N --connections=N
//
// Needs `npm run build`. It generates the shop fixture into bench/output/search/service, seeds a
// fresh SQLite file (50 categories, then the products through POST /data/PRODUCT: names of two
// of ten words and two numbers, `listingProduct`), starts the service as a child process and
// loads it with autocannon, each request a random search, pages of 20 in relevance order:
//
// - selective: a word and the first three digits of a number, as one types (`harbor 417`);
// - broad: one word, which about a fifth of all products hold (`harbor`), ranked in full (on 2
//   connections: each takes long enough that 16 would queue past QUERY_TIMEOUT_MS);
// - the same page without q, `orderBy=name&limit=20`, for scale.
//
// req/s and p50/p99 per round, then the median over rounds. It asserts no timing, only that every
// answer is a 200 and that the searches find what a scan of the seeded names finds.
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { loadRun } from './lib/load.mjs';
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
} from './lib/service.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'search');
const SERVICE = join(OUT, 'service');
const SCHEMA = 'fixtures/shop/shop.yaml';
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

const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(
  argv,
  ['records', 'seconds', 'rounds', 'connections'],
  'search.mjs',
);
const RECORDS = option('records') ?? (QUICK ? 20_000 : 100_000);
const SECONDS = option('seconds') ?? (QUICK ? 3 : 5);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const CONNECTIONS = option('connections') ?? 16;

let server;

/** A request that searches for a random `q` of `make(random)` each time. */
function searching(make) {
  let state = 7;
  const random = () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
  return {
    method: 'GET',
    setupRequest: (request) => ({
      ...request,
      path: `/data/PRODUCT?q=${encodeURIComponent(make(random))}&limit=20`,
    }),
  };
}

async function main() {
  requireBuild();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  log(`generating ${SCHEMA} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(join(ROOT, SCHEMA), SERVICE);
  server = await startService(SERVICE, `sqlite:${join(OUT, 'search.db')}`);
  const { base } = server;
  log(`seeding 50 categories and ${RECORDS} products`);
  await seedListingShop(base, { records: RECORDS, categories: 50, batch: 5_000 });

  // Checks, not timings: the search finds what the names say.
  const counted = await getJson(base, '/entity/PRODUCT/recordCounts?q=harbor%20iris');
  const scanned = await getJson(
    base,
    '/entity/PRODUCT/recordCounts?name[CONTAINS]=harbor&filter=' +
      encodeURIComponent('name ~ "iris"'),
  );
  if (counted.data.count !== scanned.data.count || counted.data.count === 0)
    throw new Error(`q=harbor iris counts ${counted.data.count}, the names ${scanned.data.count}`);
  const page = await getJson(base, '/data/PRODUCT?q=harbor%2041&limit=20');
  for (const product of page.data)
    if (!/\bharbor\b/.test(product.name) || !/\b41\d*\b/.test(product.name))
      throw new Error(`q=harbor 41 found ${product.name}`);

  const pick = (random) => WORDS[Math.floor(random() * WORDS.length)];
  const cases = [
    {
      label: 'q = a word and a 3-digit prefix (`harbor 417`), limit=20',
      request: searching((random) => `${pick(random)} ${100 + Math.floor(random() * 900)}`),
    },
    {
      // Every match is ranked: with many connections the queue outgrows QUERY_TIMEOUT_MS.
      label: 'q = one word (~19 % of products match), limit=20, 2 connections',
      request: searching((random) => pick(random)),
      connections: 2,
    },
    {
      label: 'no q: orderBy=name&limit=20',
      request: { method: 'GET', path: '/data/PRODUCT?orderBy=name&limit=20' },
    },
  ];
  const results = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [index, item] of cases.entries()) {
      const result = await loadRun(`${base}/`, item.request, {
        connections: item.connections ?? CONNECTIONS,
        seconds: SECONDS,
        warmupSeconds: 1,
      });
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${item.label}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      results[index].push(result);
    }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const fmt = (ms) => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`;
  const out = [
    `## Full-text search: q= over ${RECORDS.toLocaleString('en-US')} products (SQLite)`,
    '',
    `Generated shop service on SQLite (file, WAL), autocannon with ${CONNECTIONS} connections on loopback, ` +
      `${SECONDS} s per run after 1 s of warm-up, median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}. ` +
      `Node ${process.version}, ${cpu}, ${os.cpus().length} CPUs.`,
    '',
    '| request | req/s | p50 | p99 |',
    '|---|---:|---:|---:|',
    ...cases.map((item, index) => {
      const runs = results[index];
      return `| ${item.label} | ${Math.round(median(runs.map((r) => r.rps)))} | ${fmt(median(runs.map((r) => r.p50)))} | ${fmt(median(runs.map((r) => r.p99)))} |`;
    }),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await server?.stop();
    agent.destroy();
  });
