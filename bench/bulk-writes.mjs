#!/usr/bin/env node
// Writes beyond one record (SPEC §12) on a generated service over HTTP on loopback, SQLite
// (synchronous FULL) or PostgreSQL:
// - a 10 000-record upsert (`POST ?onConflict=replace`), half of whose keys exist (changed
//   prices: 5 000 updates, 5 000 inserts), against a plain 10 000-record insert (one POST);
// - a PATCH by filter of 10 000 records (`?lot=<lot>&maxAffected=10000`), then a DELETE by filter
//   of the upsert's 10 000 records.
//
//   node bench/bulk-writes.mjs            3 rounds
//   node bench/bulk-writes.mjs --quick    1 round
//   DATABASE_URL=postgres://… node bench/bulk-writes.mjs   the same on PostgreSQL, in a database
//                                                          created afresh on that server for the
//                                                          run (entity_gen_bench_upsert; dropped
//                                                          at the end)
//
// Options (override the mode): --records=N --rounds=N
//
// Needs `npm run build`. Each round works on fresh keys; each figure is the median over rounds of
// one request's time (until its body was read), and of the service's CPU time meanwhile (its
// process with its threads, from /proc). It prints a markdown table and asserts no timing.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
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
} from './lib/service.mjs';
import { cpuMs } from './lib/servers.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'bulk-writes');
const SERVICE = join(OUT, 'service');
const SCHEMA = join(OUT, 'schema.yaml');

const argv = process.argv.slice(2);
const { quick: QUICK, option } = parseOptions(argv, ['records', 'rounds'], 'bulk-writes.mjs');
const RECORDS = option('records') ?? 10_000;
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 3);
/** SQLite (a fresh file), or the PostgreSQL server of DATABASE_URL (a database made for the run). */
const DATABASE_URL = process.env.DATABASE_URL ?? `sqlite:${join(OUT, 'bulk.db')}`;
const POSTGRES = DATABASE_URL.startsWith('postgres');
/**
 * The database of a PostgreSQL run: created afresh, so that no earlier run's rows and events (a
 * kept database grew to a million products and 3.7 million events) slow this one down.
 */
const PG_DB = 'entity_gen_bench_upsert';
/** Keys and lots of this run. */
const RUN = randomBytes(3).toString('hex');

const SCHEMA_TEXT = `type: ENTITY
entity:
  name: PRODUCT
  lk: [code]
  fields:
    - { name: code, type: STRING, required: true }
    - { name: name, type: STRING, required: true }
    - { name: price, type: DECIMAL }
    - { name: stock, type: INTEGER }
    - { name: lot, type: STRING, index: true }
`;

const fmt = (ms) => (ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`);

let server;

function products(prefix, count, lot, price = (n) => `${(n % 997) + 0.99}`) {
  return Array.from({ length: count }, (_, n) => ({
    code: `${prefix}${String(n).padStart(6, '0')}`,
    name: `product ${n}`,
    price: price(n),
    stock: n % 100,
    lot,
  }));
}

/** One request, with the service's CPU time meanwhile (its process, threads included, /proc). */
async function timed(base, method, path, body) {
  const before = cpuMs(server.pid);
  const response = await http(base, method, path, body);
  if (response.status !== 200)
    throw new Error(`${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return { ...response, cpu: cpuMs(server.pid) - before };
}

async function main() {
  requireBuild();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  writeFileSync(SCHEMA, SCHEMA_TEXT);
  log(`generating ${relative(ROOT, SCHEMA)} into ${relative(ROOT, SERVICE)} and compiling it`);
  await generateService(SCHEMA, SERVICE);
  let serviceUrl = DATABASE_URL;
  if (POSTGRES) {
    await adminQuery(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${PG_DB}`);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${PG_DB}`;
    serviceUrl = url.toString();
  }
  server = await startService(SERVICE, serviceUrl);
  const { base } = server;
  // Warm-up: small rounds of each request as measured (the upsert's: half its keys exist, with
  // changed prices, so that its creates and updates run before the first measured round too).
  for (let round = 0; round < 3; round++) {
    await timed(base, 'POST', '/data/PRODUCT', {
      data: products(`W${RUN}${round}-`, 1000, `w${RUN}`),
    });
    await timed(base, 'POST', '/data/PRODUCT?onConflict=replace', {
      data: products(`W${RUN}${round}-`, 2000, `w${RUN}`, (n) => `${n + 1000}.5`),
    });
    await timed(base, 'PATCH', `/data/PRODUCT?lot=w${RUN}&maxAffected=10000`, {
      data: { stock: round },
    });
  }

  const inserts = [];
  const upserts = [];
  const deletes = [];
  const insertCpu = [];
  const upsertCpu = [];
  const patches = [];
  const half = Math.floor(RECORDS / 2);
  for (let round = 0; round < ROUNDS; round++) {
    const insert = await timed(base, 'POST', '/data/PRODUCT', {
      data: products(`I${RUN}${round}-`, RECORDS, `i${RUN}${round}`),
    });
    inserts.push(insert.ms);
    insertCpu.push(insert.cpu);
    // Half of the upsert's keys exist beforehand; the upsert changes their price.
    await timed(base, 'POST', '/data/PRODUCT', {
      data: products(`U${RUN}${round}-`, half, `u${RUN}${round}`),
    });
    const upsert = await timed(base, 'POST', '/data/PRODUCT?onConflict=replace', {
      data: products(`U${RUN}${round}-`, RECORDS, `u${RUN}${round}`, (n) => `${n + 1000}.5`),
    });
    const meta = JSON.parse(upsert.text).meta;
    if (meta.created !== RECORDS - half || meta.updated !== half)
      throw new Error(`upsert meta ${JSON.stringify(meta)}`);
    upserts.push(upsert.ms);
    upsertCpu.push(upsert.cpu);
    const patch = await timed(
      base,
      'PATCH',
      `/data/PRODUCT?lot=i${RUN}${round}&maxAffected=10000`,
      {
        data: { stock: 7 },
      },
    );
    if (JSON.parse(patch.text).meta.count !== RECORDS) throw new Error('PATCH missed records');
    patches.push(patch.ms);
    // The upsert's records, all of them: a DELETE by filter of as many.
    const removed = await timed(
      base,
      'DELETE',
      `/data/PRODUCT?lot=u${RUN}${round}&maxAffected=10000`,
    );
    if (JSON.parse(removed.text).meta.count !== RECORDS) throw new Error('DELETE missed records');
    deletes.push(removed.ms);
    log(
      `  round ${round + 1}: insert ${fmt(insert.ms)}, upsert ${fmt(upsert.ms)}, PATCH by filter ${fmt(patch.ms)}, DELETE by filter ${fmt(removed.ms)}`,
    );
  }
  const left = await getJson(base, `/entity/PRODUCT/recordCounts?lot=i${RUN}0&stock[NOT_EQUALS]=7`);
  if (left.data.count !== 0) throw new Error(`${left.data.count} records were not patched`);
  const insert = median(inserts);
  const upsert = median(upserts);
  const patch = median(patches);
  const cpuRatio = median(insertCpu) / median(upsertCpu);
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const driver = POSTGRES
    ? 'PostgreSQL (a database created for the run)'
    : 'SQLite (synchronous FULL)';
  const n = RECORDS.toLocaleString('en-US');
  const out = [
    `## Upsert and PATCH by filter (${n} records; median of ${ROUNDS} round(s), one request each)`,
    '',
    `${driver}. Machine: ${cpu} × ${os.cpus().length}, Node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
    '',
    '| measurement | time (median) | rounds | target |',
    '| --- | --- | --- | --- |',
    `| plain insert of ${n} records (one POST) | ${fmt(insert)} | ${inserts.map(fmt).join(', ')} | |`,
    `| upsert of ${n} records, half existing (\`onConflict=replace\`) | ${fmt(upsert)} | ${upserts.map(fmt).join(', ')} | speed ≥ 0.7× the insert: **${(insert / upsert).toFixed(2)}×** |`,
    `| PATCH by filter of ${n} records | ${fmt(patch)} | ${patches.map(fmt).join(', ')} | < 1 s |`,
    `| DELETE by filter of ${n} records | ${fmt(median(deletes))} | ${deletes.map(fmt).join(', ')} | |`,
    '',
    `Service CPU per request (10 ms ticks, from /proc; the wall time above also holds the commit's`,
    `fsync and, on a shared machine, time taken by other guests): insert ${fmt(median(insertCpu))}, upsert`,
    `${fmt(median(upsertCpu))}; upsert ÷ insert in CPU: **${cpuRatio.toFixed(2)}×**.`,
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
    if (POSTGRES)
      await adminQuery(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`).catch(() => undefined);
  });

/** Runs a statement on the PostgreSQL server of DATABASE_URL (its own database), for set-up. */
async function adminQuery(text) {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}
