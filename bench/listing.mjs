#!/usr/bin/env node
// Listing, round 2 (SPEC §17): what `fields=` saves and what `count=true` costs, on a generated
// service over HTTP on loopback.
//
//   node bench/listing.mjs            100 000 PRODUCT records, 3 rounds
//   node bench/listing.mjs --quick    20 000 records, 1 round
//
// Options (override the mode): --records=N --requests=N --rounds=N
//
// Needs `npm run build`. It generates the shop fixture into bench/output/listing/service, seeds a
// fresh SQLite file (50 categories, then the products through POST /data/PRODUCT), starts the
// service as a child process and times sequential GET requests (one keep-alive connection):
//
// - a page of 100 products, every field, against the same page with `fields=code,name,price`;
// - the page `category=cat-7&orderBy=-price&limit=100` (served by the shop's composite index
//   [category, -price]) without and with `count=true`.
//
// p50/p99 per request including reading the body, over --requests requests per round, and the
// server's CPU per request (from /proc), then the median over rounds. It prints a markdown table; it asserts no timing, only that the selected
// page holds the same records and that meta.count is the number of records of the category.
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import {
  agent,
  generateService,
  getJson,
  http,
  log,
  median,
  parseOptions,
  requireBuild,
  seedListingShop,
  startService,
  timePath as timeRequests,
} from './lib/service.mjs';
import { cpuMs } from './lib/servers.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'listing');
const SERVICE = join(OUT, 'service');
const SCHEMA = 'fixtures/shop/shop.yaml';

const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(
  argv,
  ['records', 'requests', 'rounds'],
  'listing.mjs',
);
const RECORDS = option('records') ?? (QUICK ? 20_000 : 100_000);
const REQUESTS = option('requests') ?? (QUICK ? 50 : 200);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const WARMUP = QUICK ? 10 : 30;
const SEED_BATCH = 5_000;
const CATEGORIES = 50;

/**
 * Times a path and measures the server's CPU per request meanwhile (utime + stime of its process,
 * its reader threads included, from /proc; 10 ms ticks, so over 200 requests ±5 %).
 */
async function timePath(base, path) {
  for (let i = 0; i < WARMUP; i++) await getJson(base, path);
  const before = cpuMs(server.pid);
  const timed = await timeRequests(base, path, { warmup: 0, requests: REQUESTS });
  return { ...timed, cpuUs: ((cpuMs(server.pid) - before) * 1000) / REQUESTS };
}

const fmt = (ms) => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`;

let server;

async function main() {
  requireBuild();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  log(`generating ${SCHEMA} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(join(ROOT, SCHEMA), SERVICE);
  server = await startService(SERVICE, `sqlite:${join(OUT, 'listing.db')}`);
  const { base } = server;

  log(`seeding ${CATEGORIES} categories and ${RECORDS} products`);
  await seedListingShop(base, { records: RECORDS, categories: CATEGORIES, batch: SEED_BATCH });

  const full = '/data/PRODUCT?orderBy=name&limit=100';
  const selected = `${full}&fields=code,name,price`;
  const filtered = '/data/PRODUCT?category=cat-7&orderBy=-price&limit=100';
  const counted = `${filtered}&count=true`;

  // Checks, not timings: the same records, and the right count.
  const fullPage = await getJson(base, full);
  const selectedPage = await getJson(base, selected);
  const same =
    JSON.stringify(fullPage.data.map((r) => [r.code, r.name, r.price])) ===
    JSON.stringify(selectedPage.data.map((r) => [r.code, r.name, r.price]));
  if (!same) throw new Error('the fields= page differs from the full page');
  const expectedCount = Math.ceil((RECORDS - 7) / CATEGORIES);
  const countedPage = await getJson(base, counted);
  if (countedPage.meta.count !== expectedCount)
    throw new Error(`meta.count is ${countedPage.meta.count}, expected ${expectedCount}`);
  const bytes = async (path) => (await http(base, 'GET', path)).text.length;

  const cases = [
    { label: 'page of 100, every field', path: full },
    { label: 'page of 100, fields=code,name,price', path: selected },
    { label: 'category=cat-7&orderBy=-price&limit=100', path: filtered },
    { label: '… &count=true', path: counted },
  ];
  const rounds = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [index, item] of cases.entries())
      rounds[index].push(await timePath(base, item.path));
  const rows = [];
  for (const [index, item] of cases.entries()) {
    rows.push({
      ...item,
      bytes: await bytes(item.path),
      p50: median(rounds[index].map((r) => r.p50)),
      p99: median(rounds[index].map((r) => r.p99)),
      cpuUs: median(rounds[index].map((r) => r.cpuUs)),
      cpuRange: [
        Math.min(...rounds[index].map((r) => r.cpuUs)),
        Math.max(...rounds[index].map((r) => r.cpuUs)),
      ],
    });
  }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const out = [
    `## Listing round 2: fields= and count=true (${RECORDS.toLocaleString('en-US')} products)`,
    '',
    `Generated shop service on SQLite (file, WAL), HTTP/1.1 keep-alive on loopback, one request at a time. ` +
      `p50/p99 over ${REQUESTS} requests, median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}. ` +
      `Node ${process.version}, ${cpu}, ${os.cpus().length} CPUs.`,
    '',
    '| request | body bytes | p50 | p99 | server CPU µs/request (min–max) |',
    '|---|---:|---:|---:|---|',
    ...rows.map(
      (row) =>
        `| ${row.label} | ${row.bytes} | ${fmt(row.p50)} | ${fmt(row.p99)} | ${Math.round(row.cpuUs)} (${row.cpuRange.map(Math.round).join('–')}) |`,
    ),
    '',
    `fields= speed-up (p50): ${(rows[0].p50 / rows[1].p50).toFixed(2)}×, in server CPU per request: ${(rows[0].cpuUs / rows[1].cpuUs).toFixed(2)}×; count=true adds ${(((rows[3].p50 - rows[2].p50) / rows[2].p50) * 100).toFixed(0)}% (p50).`,
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
