#!/usr/bin/env node
// Change events (SPEC §9): what they cost writers, and how fast they reach subscribers.
//
//   node bench/events.mjs            5 rounds of 2 s per measurement, latency over 10 s
//   node bench/events.mjs --quick    1 round of 0.7 s, latency over 3 s (< 1 minute)
//
// Options: --rounds=N --seconds=S --latency-seconds=S --rate=N (writes/s of the latency run),
// --no-pg (SQLite only), --no-sqlite (PostgreSQL only).
//
// 1. Write throughput with events on vs off: the generated shop service (bench/output/shop, built
//    as by bench/run.mjs), started twice — `EVENTS=on` (default) and `EVENTS=off` — on fresh
//    stores, with autocannon (50 connections) running POST one and PATCH one (a random key of
//    2 000 seeded records), interleaved per round: on, off, on with one subscriber reading
//    /events. The ratio on ÷ off is taken per round, then the median. SQLite files (with
//    SQLITE_SYNCHRONOUS as in the environment, FULL by default) and, when it answers,
//    PostgreSQL (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/test: a database
//    entity_gen_bench_events is created for the run and dropped afterwards, one schema per
//    service).
// 2. Event latency at a fixed write rate: POST one paced at --rate (default 1 000) writes per
//    second for --latency-seconds, 32 requests in flight at most, with 1 and with 20 subscribers;
//    the latency of a change is from the moment its POST was sent to the moment each subscriber
//    parsed its event (both in this process). p50, p99 and max over every (event, subscriber).
//
// It prints the command, the machine and markdown tables, and writes them to
// bench/results/events.md (and events.json). It asserts nothing about speed; it checks that
// every subscriber got every event of the latency run exactly once.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { productCode, productRecord } from './lib/data.mjs';
import { loadRun } from './lib/load.mjs';
import { killAll, startServer } from './lib/servers.mjs';
import {
  BATCH,
  buildService,
  DATA,
  ensureBuilt,
  postJson,
  randomInt,
  removeDb,
  RESULTS,
  ROOT,
  seedCategories,
  shopOperations,
  sqliteUrl,
} from './lib/setup.mjs';
import { fmt, fmtSpread, median, percentile, spread } from './lib/stats.mjs';

// --- Options -----------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const NO_PG = argv.includes('--no-pg');
const NO_SQLITE = argv.includes('--no-sqlite');
const option = (name) => {
  const found = argv.find((a) => a.startsWith(`--${name}=`));
  if (found === undefined) return undefined;
  const value = Number(found.slice(name.length + 3));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
};
for (const arg of argv) {
  if (
    !['--quick', '--no-pg', '--no-sqlite'].includes(arg) &&
    !/^--(rounds|seconds|latency-seconds|rate)=/.test(arg)
  )
    throw new Error(`Unknown option ${arg}; see the header of bench/events.mjs`);
}
const ROUNDS = option('rounds') ?? (QUICK ? 1 : 5);
const SECONDS = option('seconds') ?? (QUICK ? 0.7 : 2);
const WARMUP = QUICK ? 0.3 : 1;
const LATENCY_SECONDS = option('latency-seconds') ?? (QUICK ? 3 : 10);
const RATE = option('rate') ?? 1000;
const SEED = 2000;
const PG_DB = 'entity_gen_bench_events';

const command = `node bench/events.mjs${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`;
const log = (line) => process.stderr.write(`${line}\n`);

// --- A subscriber of /events -------------------------------------------------------------------

/**
 * Reads `/events` of `url` and calls `onChange(data, receivedAt)` for every change event; resolves
 * once the stream is open. `close()` ends it.
 */
async function subscribe(url, onChange) {
  const controller = new AbortController();
  const response = await fetch(`${url}/events`, { signal: controller.signal });
  if (response.status !== 200) throw new Error(`/events answered ${response.status}`);
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let event = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ') && event.startsWith('record.'))
            onChange(JSON.parse(line.slice(6)), performance.now());
          else if (line === '') event = '';
        }
      }
    } catch (error) {
      if (error.name !== 'AbortError') throw error;
    }
  })();
  return {
    close: async () => {
      controller.abort();
      await done;
    },
  };
}

// --- Servers -----------------------------------------------------------------------------------

/** Starts the built shop service with `env` on a store made by `store(name)`. */
async function startShop(shop, name, env, store) {
  return startServer(name, join(shop, 'dist', 'server.js'), { ...(await store(name)), ...env });
}

async function seed(server) {
  await seedCategories(server.url);
  const records = [];
  for (let n = 0; n < SEED; n++) records.push(productRecord(productCode(n), n));
  for (let from = 0; from < SEED; from += BATCH)
    await postJson(
      `${server.url}/data/product`,
      JSON.stringify({ data: records.slice(from, from + BATCH) }),
    );
}

/** SQLite: a fresh file per service. */
const sqliteStore = async (name) => {
  const file = join(DATA, `events-${name}.db`);
  removeDb(file);
  return { DATABASE_URL: sqliteUrl(file) };
};

// --- 1. Throughput on vs off -------------------------------------------------------------------

async function throughput(shop, label, store) {
  log(`${label}: throughput with events on vs off`);
  const on = await startShop(shop, `${label}-on`, {}, store);
  const off = await startShop(shop, `${label}-off`, { EVENTS: 'off' }, store);
  try {
    await seed(on);
    await seed(off);
    const operations = shopOperations(SEED);
    const result = {};
    for (const id of ['post', 'patch']) {
      const runs = { on: [], off: [], subscribed: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const options = { seconds: SECONDS, warmupSeconds: WARMUP };
        runs.on.push(
          await loadRun(on.url, operations[id].request(`on${round}`), { ...options, pid: on.pid }),
        );
        runs.off.push(
          await loadRun(off.url, operations[id].request(`off${round}`), {
            ...options,
            pid: off.pid,
          }),
        );
        // With one subscriber reading every event as it comes.
        let received = 0;
        const subscriber = await subscribe(on.url, () => received++);
        runs.subscribed.push({
          ...(await loadRun(on.url, operations[id].request(`sub${round}`), {
            ...options,
            pid: on.pid,
          })),
          received,
        });
        await subscriber.close();
      }
      const rps = (list) => spread(list.map((run) => run.rps));
      result[id] = {
        label: operations[id].label,
        on: rps(runs.on),
        off: rps(runs.off),
        subscribed: rps(runs.subscribed),
        ratio: spread(runs.on.map((run, i) => run.rps / runs.off[i].rps)),
        ratioSubscribed: spread(runs.subscribed.map((run, i) => run.rps / runs.off[i].rps)),
        p99: { on: median(runs.on.map((r) => r.p99)), off: median(runs.off.map((r) => r.p99)) },
        // The service process only (PostgreSQL's own CPU is not in it).
        cpuUs: {
          on: median(runs.on.map((r) => r.cpuUsPerRequest)),
          off: median(runs.off.map((r) => r.cpuUsPerRequest)),
        },
        errors: [...runs.on, ...runs.off, ...runs.subscribed].reduce(
          (sum, run) => sum + run.non2xx + run.errors + run.timeouts,
          0,
        ),
      };
      log(
        `  ${operations[id].label}: on ${fmt(result[id].on.median)} req/s, off ${fmt(result[id].off.median)} req/s, ratio ${fmt(result[id].ratio.median, 2)}`,
      );
    }
    return result;
  } finally {
    await on.stop();
    await off.stop();
  }
}

// --- 2. Latency at a fixed rate ----------------------------------------------------------------

async function latency(shop, label, store, subscriberCount) {
  log(`${label}: event latency at ${RATE} writes/s with ${subscriberCount} subscriber(s)`);
  const server = await startShop(shop, `${label}-latency-${subscriberCount}`, {}, store);
  await seedCategories(server.url);
  const sent = new Map();
  const latencies = [];
  const counts = Array.from({ length: subscriberCount }, () => new Map());
  const subscribers = [];
  try {
    for (let s = 0; s < subscriberCount; s++) {
      subscribers.push(
        await subscribe(server.url, (data, at) => {
          counts[s].set(data.id, (counts[s].get(data.id) ?? 0) + 1);
          const started = sent.get(data.id);
          if (started !== undefined) latencies.push(at - started);
        }),
      );
    }
    const total = Math.round(RATE * LATENCY_SECONDS);
    const tag = randomInt(1e9);
    const began = performance.now();
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < total; i = next++) {
        const wait = began + (i * 1000) / RATE - performance.now();
        if (wait > 0) await sleep(wait);
        const code = `L${tag}-${i}`;
        sent.set(code, performance.now());
        const response = await fetch(`${server.url}/data/product`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ data: productRecord(code, i) }),
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`POST answered ${response.status}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, writer));
    const seconds = (performance.now() - began) / 1000;
    const deadline = Date.now() + 60_000;
    while (latencies.length < total * subscriberCount && Date.now() < deadline) await sleep(50);
    const exactlyOnce = counts.every(
      (seen) => seen.size === total && [...seen.values()].every((n) => n === 1),
    );
    latencies.sort((a, b) => a - b);
    return {
      subscribers: subscriberCount,
      writes: total,
      writesPerSecond: total / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
      exactlyOnce,
    };
  } finally {
    for (const subscriber of subscribers) await subscriber.close();
    await server.stop();
  }
}

// --- PostgreSQL --------------------------------------------------------------------------------

async function withPostgres(fn) {
  if (NO_PG) return { skipped: '--no-pg' };
  const { default: pg } = await import('pg');
  const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return { skipped: `PostgreSQL does not answer: ${error.message}` };
  }
  const url = new URL(adminUrl);
  url.pathname = `/${PG_DB}`;
  try {
    const version = (await admin.query('SHOW server_version')).rows[0].server_version;
    await admin.query(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${PG_DB}`);
    const store = async (name) => {
      const service = new URL(url);
      service.searchParams.set('schema', name.replace(/[^a-z0-9]/gi, '_'));
      return { DATABASE_URL: service.href };
    };
    return { version, ...(await fn(store)) };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

// --- Report ------------------------------------------------------------------------------------

function throughputTable(result) {
  const lines = [
    '| operation | events off (req/s) | events on (req/s) | on ÷ off | on, 1 subscriber (req/s) | on with subscriber ÷ off | p99 off / on (ms) | service CPU off / on (µs/req) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const id of ['post', 'patch']) {
    const r = result[id];
    lines.push(
      `| ${r.label} | ${fmtSpread(r.off)} | ${fmtSpread(r.on)} | ${fmtSpread(r.ratio, 2)} | ${fmtSpread(r.subscribed)} | ${fmtSpread(r.ratioSubscribed, 2)} | ${fmt(r.p99.off, 1)} / ${fmt(r.p99.on, 1)} | ${fmt(r.cpuUs.off)} / ${fmt(r.cpuUs.on)} |`,
    );
  }
  return lines.join('\n');
}

function latencyTable(runs) {
  const lines = [
    '| subscribers | writes | achieved writes/s | p50 (ms) | p99 (ms) | max (ms) | every event exactly once |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const run of runs)
    lines.push(
      `| ${run.subscribers} | ${fmt(run.writes)} | ${fmt(run.writesPerSecond)} | ${fmt(run.p50, 1)} | ${fmt(run.p99, 1)} | ${fmt(run.max, 1)} | ${run.exactlyOnce ? 'yes' : 'NO'} |`,
    );
  return lines.join('\n');
}

function report(results) {
  const out = [
    '# Change events: benchmark results',
    '',
    `Command: \`${results.command}\` (${results.date})`,
    '',
    `Machine: ${results.machine.cpus} × ${results.machine.cpu}, ${fmt(results.machine.memoryGiB, 1)} GiB, Node ${results.machine.node}, ${results.machine.platform}; SQLITE_SYNCHRONOUS=${results.machine.sqliteSynchronous}.`,
    '',
    `Throughput: ${ROUNDS} round(s) of ${SECONDS} s (after ${WARMUP} s warm-up) per measurement, autocannon with 50 connections; median (min–max) over rounds; ratios per round, then the median.`,
    '',
  ];
  for (const [name, section] of [
    ['SQLite', results.sqlite],
    ['PostgreSQL', results.postgres],
  ]) {
    out.push(`## ${name}`, '');
    if (section.skipped !== undefined) {
      out.push(`Skipped: ${section.skipped}.`, '');
      continue;
    }
    if (section.version !== undefined) out.push(`PostgreSQL ${section.version}.`, '');
    out.push('Write throughput, events on vs off:', '', throughputTable(section.throughput), '');
    out.push(
      `Event latency at ${RATE} writes/s for ${LATENCY_SECONDS} s (POST sent → event parsed by the subscriber):`,
      '',
      latencyTable(section.latency),
      '',
    );
  }
  return out.join('\n');
}

// --- Main --------------------------------------------------------------------------------------

async function main() {
  log(`$ ${command}`);
  await ensureBuilt({ log });
  const shop = await buildService('shop', join(ROOT, 'fixtures', 'shop', 'shop.yaml'), { log });
  const section = async (label, store) => ({
    throughput: await throughput(shop, label, store),
    latency: [await latency(shop, label, store, 1), await latency(shop, label, store, 20)],
  });
  const results = {
    command,
    date: new Date().toISOString().slice(0, 10),
    machine: {
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: os.totalmem() / 2 ** 30,
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
      sqliteSynchronous: process.env.SQLITE_SYNCHRONOUS ?? 'FULL',
    },
    sqlite: NO_SQLITE ? { skipped: '--no-sqlite' } : await section('sqlite', sqliteStore),
    postgres: await withPostgres((store) => section('postgres', store)),
  };
  const markdown = report(results);
  writeFileSync(join(RESULTS, 'events.md'), `${markdown}\n`);
  writeFileSync(join(RESULTS, 'events.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
}

main().catch((error) => {
  killAll();
  console.error(error);
  process.exitCode = 1;
});
