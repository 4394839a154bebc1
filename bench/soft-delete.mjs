#!/usr/bin/env node
// Soft delete and record history (SPEC §13): reads of an entity with `softDelete: true`, and
// writes of one with `history: true`, against the same entity without it, on a generated service
// over HTTP on loopback.
//
//   node bench/soft-delete.mjs            6 rounds of 200 requests per row, SQLite
//   node bench/soft-delete.mjs --quick    2 rounds of 50 requests (< 1 min)
//   BENCH_DATABASE_URL=postgres://… node bench/soft-delete.mjs   the same on PostgreSQL
//
// Options (override the mode): --records=N --requests=N --rounds=N
//
// Needs `npm run build`. It writes a schema of three entities with the same fields, PLAIN, SOFT
// (with softDelete) and HIST (with history), generates and compiles the service, starts it as a child process on
// 127.0.0.1 (SQLite synchronous FULL, or BENCH_DATABASE_URL), seeds --records records into each
// and soft-deletes every tenth SOFT record, and times sequential requests (one connection,
// keep-alive; p50 over --requests requests per round, then the median over 2 × --rounds rounds),
// the entity measured first alternating from round to round: GET by key, and a page of 100 by
// offset (SOFT against PLAIN); POST of one new record, and PATCH of one field of a record (HIST
// against PLAIN). It prints a markdown table and asserts no timing.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import {
  generateService,
  http,
  log,
  median,
  parseOptions,
  requireBuild,
  startService,
  timePath as timeRequests,
} from './lib/service.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'soft-delete');
const SERVICE = join(OUT, 'service');
const SCHEMA = join(OUT, 'schema.yaml');

const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(
  argv,
  ['records', 'requests', 'rounds'],
  'soft-delete.mjs',
);
const RECORDS = option('records') ?? 10_000;
const REQUESTS = option('requests') ?? (QUICK ? 50 : 200);
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
const WARMUP = QUICK ? 10 : 30;
const DATABASE = process.env['BENCH_DATABASE_URL'];

const entity = (name, extra) => `type: ENTITY
entity:
  name: ${name}
  lk: [code]${extra}
  fields:
    - { name: code, type: STRING, required: true }
    - { name: name, type: STRING, required: true }
    - { name: price, type: DECIMAL }
    - { name: stock, type: INTEGER }
    - { name: tier, type: STRING, index: true }
`;
const SCHEMA_TEXT = `${entity('PLAIN', '')}---\n${entity('SOFT', '\n  softDelete: true')}---\n${entity('HIST', '\n  history: true')}`;

const timePath = (base, path) => timeRequests(base, path, { warmup: WARMUP, requests: REQUESTS });
const fmt = (ms) => (ms < 10 ? `${ms.toFixed(3)} ms` : `${ms.toFixed(1)} ms`);

async function send(base, method, path, data) {
  const response = await http(base, method, path, data === undefined ? undefined : { data });
  if (response.status !== 200)
    throw new Error(`${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`);
}

let server;

async function main() {
  requireBuild();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  writeFileSync(SCHEMA, SCHEMA_TEXT);
  log(`generating ${relative(ROOT, SCHEMA)} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(SCHEMA, SERVICE);
  server = await startService(SERVICE, DATABASE ?? `sqlite:${join(OUT, 'soft-delete.db')}`);
  const { base } = server;

  log(`seeding ${RECORDS} records into PLAIN and SOFT, soft-deleting every tenth SOFT record`);
  for (const name of ['PLAIN', 'SOFT', 'HIST']) {
    for (let first = 0; first < RECORDS; first += 5000) {
      const batch = Array.from({ length: Math.min(5000, RECORDS - first) }, (_, i) => {
        const n = first + i;
        return {
          code: `R${String(n).padStart(6, '0')}`,
          name: `record ${n}`,
          price: `${(n % 997) + 0.99}`,
          stock: n % 100,
          tier: `t${n % 5}`,
        };
      });
      await send(base, 'POST', `/data/${name}`, batch);
    }
  }
  for (let n = 5; n < RECORDS; n += 10)
    await send(base, 'DELETE', `/data/SOFT/R${String(n).padStart(6, '0')}`);

  const rows = [];
  for (const [label, path] of [
    ['GET by key', (name) => `/data/${name}/R000042`],
    ['page of 100 by offset', (name) => `/data/${name}?limit=100&start=500`],
  ]) {
    const plain = [];
    const soft = [];
    // The entity measured first changes every round, so neither gains from going second.
    for (let round = 0; round < 2 * ROUNDS; round++) {
      const first = round % 2 === 0 ? 'PLAIN' : 'SOFT';
      for (const name of first === 'PLAIN' ? ['PLAIN', 'SOFT'] : ['SOFT', 'PLAIN'])
        (name === 'PLAIN' ? plain : soft).push((await timePath(base, path(name))).p50);
    }
    const p = median(plain);
    const s = median(soft);
    rows.push(`| ${label} | ${fmt(s)} | ${fmt(p)} | ${(p / s).toFixed(2)}× | ≥ 0.95× |`);
    log(`  ${label}: softDelete ${fmt(s)}, plain ${fmt(p)}`);
  }

  /** p50 of `REQUESTS` sequential writes `request(i)` (after `WARMUP` untimed ones). */
  const timeWrites = async (request) => {
    for (let i = 0; i < WARMUP; i++) await request(i, false);
    const times = [];
    for (let i = 0; i < REQUESTS; i++) times.push(await request(i, true));
    return median(times);
  };
  const writeRows = [];
  let serial = 0;
  for (const [label, write] of [
    [
      'POST one record',
      async (name) => {
        const code = `W${String(serial++).padStart(7, '0')}`;
        const data = { code, name: `new ${code}`, price: '9.99', stock: 1, tier: 't1' };
        const response = await http(base, 'POST', `/data/${name}`, { data });
        if (response.status !== 200) throw new Error(`POST ${name}: ${response.status}`);
        return response.ms;
      },
    ],
    [
      'PATCH one field',
      async (name) => {
        const data = { stock: serial++ % 1000 };
        const response = await http(base, 'PATCH', `/data/${name}/R000042`, { data });
        if (response.status !== 200) throw new Error(`PATCH ${name}: ${response.status}`);
        return response.ms;
      },
    ],
  ]) {
    const plain = [];
    const hist = [];
    for (let round = 0; round < 2 * ROUNDS; round++) {
      const first = round % 2 === 0 ? 'PLAIN' : 'HIST';
      for (const name of first === 'PLAIN' ? ['PLAIN', 'HIST'] : ['HIST', 'PLAIN'])
        (name === 'PLAIN' ? plain : hist).push(await timeWrites(() => write(name)));
    }
    const p = median(plain);
    const h = median(hist);
    writeRows.push(`| ${label} | ${fmt(h)} | ${fmt(p)} | ${(p / h).toFixed(2)}× | ≥ 0.8× |`);
    log(`  ${label}: history ${fmt(h)}, plain ${fmt(p)}`);
  }

  console.log(
    `\nSoft delete reads, ${DATABASE === undefined ? 'SQLite (synchronous FULL)' : 'PostgreSQL'}, ${RECORDS} records per entity (a tenth of SOFT soft-deleted), p50 of ${REQUESTS} requests, median of ${2 * ROUNDS} rounds; ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}\n`,
  );
  console.log('| measurement | softDelete | plain | speed, softDelete ÷ plain | target |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
  console.log('\nRecord history writes, same service\n');
  console.log('| measurement | history | plain | speed, history ÷ plain | target |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const row of writeRows) console.log(row);
}

try {
  await main();
} finally {
  await server?.stop();
}
