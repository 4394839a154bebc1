#!/usr/bin/env node
// Single-record writes straight through the PostgreSQL driver (no HTTP), with change events on
// and off: what the outbox costs concurrent writers, without the service's own CPU in the way.
//
//   node bench/pg-writes.mjs [--rounds=N] [--seconds=S] [--writers=N] [--runtime=DIR]
//
// Each round runs inserts of one record (--writers concurrent loops, default 32; the driver's
// pool of 10 connections) for --seconds (default 2) with events on, then off, each on a fresh
// schema of a database created for the run (BENCH_PG_URL, default
// postgres://postgres@127.0.0.1:5432/test; the database entity_gen_bench_writes is dropped
// afterwards). --runtime: another build of the runtime (its dist folder's parent) to compare
// with. Prints writes/s per round, the median and the per-round ratio on ÷ off, and the CPU per
// write of this process and of the database (its server processes, read from /proc: the server
// must run on this machine).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { median } from './lib/stats.mjs';
import { ROOT } from './lib/setup.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const found = argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
for (const arg of argv)
  if (!/^--(rounds|seconds|writers|runtime)=/.test(arg))
    throw new Error(`Unknown option ${arg}; see the header of bench/pg-writes.mjs`);
const ROUNDS = Number(option('rounds', '3'));
const SECONDS = Number(option('seconds', '2'));
const WRITERS = Number(option('writers', '32'));
const RUNTIME = resolve(option('runtime', join(ROOT, 'runtime')));
const DB = 'entity_gen_bench_writes';

const { PostgresDriver } = await import(
  pathToFileURL(join(RUNTIME, 'dist', 'postgres', 'index.js')).href
);
const column = (name, kind, fieldType) => ({
  name,
  kind,
  fieldType,
  required: false,
  indexed: false,
});
const TABLE = {
  entity: 'ITEM',
  table: 'item',
  key: ['id'],
  columns: [
    { ...column('id', 'text', 'STRING'), required: true },
    column('name', 'text', 'STRING'),
    column('qty', 'integer', 'INTEGER'),
    column('doc', 'json', 'OBJECT'),
  ],
};

const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${DB}`);
const url = new URL(adminUrl);
url.pathname = `/${DB}`;

/**
 * CPU time (ms) the server processes of the run's database have used so far, from /proc (the
 * server runs on this machine): what the database spends per write, which the load of other
 * processes disturbs far less than writes/s. NaN when /proc cannot be read.
 */
async function databaseCpuMs() {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [DB]);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return rows.length === 0 ? NaN : ticks * 10;
}

async function run(events, round) {
  const driver = new PostgresDriver({
    url: url.href,
    env: {},
    schema: `w_${events ? 'on' : 'off'}_${round}`,
  });
  await driver.open([TABLE], { events });
  let written = 0;
  let n = 0;
  const end = performance.now() + SECONDS * 1000;
  const cpu = process.cpuUsage();
  const dbBefore = await databaseCpuMs();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (performance.now() < end) {
        const i = n++;
        await driver.insert(
          TABLE,
          [{ id: `r${i}`, name: `record ${i}`, qty: i, doc: { i } }],
          Date.now(),
        );
        written++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const dbUs = ((await databaseCpuMs()) - dbBefore) * 1000;
  await driver.close();
  return {
    rps: written / seconds,
    cpuUs: (used.user + used.system) / written,
    dbUs: dbUs / written,
  };
}

const runs = { on: [], off: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const events of [true, false]) {
      const result = await run(events, round);
      runs[events ? 'on' : 'off'].push(result);
      process.stderr.write(
        `round ${round + 1} events ${events ? 'on ' : 'off'}: ${result.rps.toFixed(0)} writes/s, ${result.cpuUs.toFixed(0)} µs CPU per write (this process), ${result.dbUs.toFixed(0)} µs (database)\n`,
      );
    }
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
const ratios = runs.on.map((r, i) => r.rps / runs.off[i].rps).sort((a, b) => a - b);
console.log(
  `runtime ${RUNTIME}: ${WRITERS} writers, ${ROUNDS} × ${SECONDS} s; events on ${median(runs.on.map((r) => r.rps)).toFixed(0)} writes/s, off ${median(runs.off.map((r) => r.rps)).toFixed(0)} writes/s; on ÷ off ${median(ratios).toFixed(2)} (${ratios[0].toFixed(2)}–${ratios.at(-1).toFixed(2)}); CPU per write, driver process on ${median(runs.on.map((r) => r.cpuUs)).toFixed(0)} / off ${median(runs.off.map((r) => r.cpuUs)).toFixed(0)} µs, database on ${median(runs.on.map((r) => r.dbUs)).toFixed(0)} / off ${median(runs.off.map((r) => r.dbUs)).toFixed(0)} µs`,
);
