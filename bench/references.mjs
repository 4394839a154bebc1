#!/usr/bin/env node
// References (SPEC §11): the cost of `expand=` and of an EMPTY cascade, on a generated service
// over HTTP on loopback, SQLite (synchronous FULL).
//
//   node bench/references.mjs            3 rounds of 200 requests per row
//   node bench/references.mjs --quick    1 round of 50 requests (< 1 min)
//
// Options (override the mode): --products=N --requests=N --rounds=N
//
// Needs `npm run build`. It writes a two-entity schema (CATEGORY; PRODUCT with an indexed
// `category` reference, onDelete: EMPTY) into bench/output/references, generates and compiles the
// service, starts it as a child process on 127.0.0.1, seeds 50 categories and --products
// products, and times sequential requests (one connection, keep-alive; latency includes reading
// the body; p50 over --requests requests per round, then the median over rounds):
// - a page of 100 PRODUCT records with `expand=category` against the same page without it;
// - GET by key with `expand=category` against the plain GET by key (the plain one is answered by
//   the fast path; an expansion takes the Koa route);
// - DELETE of a CATEGORY that 10 000 products reference (EMPTY: each product is rewritten, with
//   its change event, in the delete's transaction), once per round on freshly inserted products.
// It prints a markdown table and asserts no timing.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
  startService,
  timePath as timeRequests,
} from './lib/service.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'references');
const SERVICE = join(OUT, 'service');
const SCHEMA = join(OUT, 'schema.yaml');

const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(
  argv,
  ['products', 'requests', 'rounds'],
  'references.mjs',
);
const PRODUCTS = option('products') ?? 10_000;
const REQUESTS = option('requests') ?? (QUICK ? 50 : 200);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const WARMUP = QUICK ? 10 : 30;
const CASCADE = 10_000;

const SCHEMA_TEXT = `type: ENTITY
entity:
  name: CATEGORY
  lk: [name]
  fields:
    - { name: name, type: STRING, required: true }
    - { name: title, type: STRING }
---
type: ENTITY
entity:
  name: PRODUCT
  lk: [code]
  fields:
    - { name: code, type: STRING, required: true }
    - { name: name, type: STRING, required: true }
    - { name: price, type: DECIMAL }
    - { name: stock, type: INTEGER }
    - name: category
      type: ENTITY_REF
      index: true
      entityRef: { entity: CATEGORY, onDelete: EMPTY }
`;

// --- Helpers -----------------------------------------------------------------------------------
const timePath = (base, path) => timeRequests(base, path, { warmup: WARMUP, requests: REQUESTS });

const fmt = (ms) => (ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`);

let server;

async function post(base, path, data) {
  const response = await http(base, 'POST', path, { data });
  if (response.status !== 200)
    throw new Error(`POST ${path}: ${response.status} ${response.text.slice(0, 300)}`);
}

function products(prefix, count, category) {
  return Array.from({ length: count }, (_, n) => ({
    code: `${prefix}${String(n).padStart(6, '0')}`,
    name: `product ${n}`,
    price: `${(n % 997) + 0.99}`,
    stock: n % 100,
    category: category(n),
  }));
}

async function main() {
  requireBuild();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  writeFileSync(SCHEMA, SCHEMA_TEXT);
  log(`generating ${relative(ROOT, SCHEMA)} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(SCHEMA, SERVICE);

  server = await startService(SERVICE, `sqlite:${join(OUT, 'references.db')}`);
  const { base } = server;

  log(`seeding 50 categories and ${PRODUCTS} products`);
  await post(
    base,
    '/data/CATEGORY',
    Array.from({ length: 50 }, (_, n) => ({ name: `cat-${n}`, title: `Category ${n}` })),
  );
  for (let first = 0; first < PRODUCTS; first += 5000) {
    const batch = products(
      'P',
      Math.min(5000, PRODUCTS - first),
      (n) => `cat-${(first + n) % 50}`,
    ).map((p, i) => ({ ...p, code: `P${String(first + i).padStart(6, '0')}` }));
    await post(base, '/data/PRODUCT', batch);
  }

  const pairs = [
    [
      'page of 100 PRODUCT',
      '/data/PRODUCT?limit=100&start=500',
      '/data/PRODUCT?limit=100&start=500&expand=category',
    ],
    ['GET by key', '/data/PRODUCT/P000042', '/data/PRODUCT/P000042?expand=category'],
  ];
  const rows = [];
  for (const [label, plainPath, expandPath] of pairs) {
    const plain = [];
    const expanded = [];
    for (let round = 0; round < ROUNDS; round++) {
      plain.push((await timePath(base, plainPath)).p50);
      expanded.push((await timePath(base, expandPath)).p50);
    }
    const p = median(plain);
    const e = median(expanded);
    rows.push(
      `| ${label}: \`expand=category\` vs plain | ${fmt(e)} | ${fmt(p)} | ${(p / e).toFixed(2)}× |`,
    );
    log(`  ${label}: expand ${fmt(e)}, plain ${fmt(p)}`);
  }

  const deletes = [];
  for (let round = 0; round < ROUNDS; round++) {
    const name = `big-${round}`;
    await post(base, '/data/CATEGORY', { name });
    for (let first = 0; first < CASCADE; first += 5000)
      await post(
        base,
        '/data/PRODUCT',
        products(`R${round}-${first}-`, Math.min(5000, CASCADE - first), () => name),
      );
    const response = await http(base, 'DELETE', `/data/CATEGORY/${name}`);
    if (response.status !== 200)
      throw new Error(`DELETE: ${response.status} ${response.text.slice(0, 300)}`);
    deletes.push(response.ms);
    const left = await getJson(base, `/entity/PRODUCT/recordCounts?category=${name}`);
    if (left.data.count !== 0)
      throw new Error(`${left.data.count} products still reference ${name}`);
  }
  const cascade = median(deletes);
  log(`  CATEGORY delete over ${CASCADE} products (EMPTY): ${fmt(cascade)}`);

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const out = [
    `## References (${PRODUCTS.toLocaleString('en-US')} products; median of ${ROUNDS} round(s) of ${REQUESTS} sequential requests)`,
    '',
    `Machine: ${cpu} × ${os.cpus().length}, Node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
    '',
    '| measurement | with expand | plain | speed, expand ÷ plain |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
    '| measurement | time (median) | rounds |',
    '| --- | --- | --- |',
    `| DELETE of a CATEGORY referenced by ${CASCADE.toLocaleString('en-US')} products (EMPTY), one request | ${fmt(cascade)} | ${deletes.map(fmt).join(', ')} |`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    agent.destroy();
    await server?.stop();
  });
