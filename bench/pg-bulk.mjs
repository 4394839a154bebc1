#!/usr/bin/env node
// 10 000 five-field records in one POST to a generated service on PostgreSQL, with change events
// on and off: the SPEC §15 bulk target (≥ 50 000 records/s), end to end (parse, validate, store,
// events). Also times the driver's insert alone in the service's process via the CPU it used.
//
//   node bench/pg-bulk.mjs [--rounds=N]
//
// Needs `npm run build`. BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test) is the
// administrative connection; a database entity_gen_bench_bulk is created and dropped afterwards.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { fiveFieldRecord, fiveFieldSchemaYaml } from './lib/data.mjs';
import { cpuMs, killAll, startServer } from './lib/servers.mjs';
import { BATCH, buildService, ensureBuilt, postJson, writeSchema } from './lib/setup.mjs';
import { median } from './lib/stats.mjs';

const argv = process.argv.slice(2);
for (const arg of argv)
  if (!/^--rounds=\d+$/.test(arg))
    throw new Error(`Unknown option ${arg}; see the header of bench/pg-bulk.mjs`);
const ROUNDS = Number(argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? '5');
const DB = 'entity_gen_bench_bulk';

await ensureBuilt();
const dir = await buildService('five-field', writeSchema('five-field.yaml', fiveFieldSchemaYaml()));
const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${DB}`);
const serviceUrl = new URL(adminUrl);
serviceUrl.pathname = `/${DB}`;

const body = (tag) => {
  const records = [];
  for (let i = 0; i < BATCH; i++)
    records.push(fiveFieldRecord(`${tag}-${String(i).padStart(5, '0')}`, i));
  return JSON.stringify({ data: records });
};

const results = {};
try {
  for (const events of ['on', 'off']) {
    const server = await startServer(`five-field-${events}`, join(dir, 'dist', 'server.js'), {
      DATABASE_URL: `${serviceUrl.href}?schema=bulk_events_${events}`,
      EVENTS: events,
    });
    const rates = [];
    const cpus = [];
    try {
      await postJson(`${server.url}/data/item`, body(`${events}-warm`));
      for (let round = 0; round < ROUNDS; round++) {
        const text = body(`${events}-${round}`);
        const cpuBefore = cpuMs(server.pid);
        const start = performance.now();
        await postJson(`${server.url}/data/item`, text);
        const ms = performance.now() - start;
        cpus.push(cpuMs(server.pid) - cpuBefore);
        rates.push((BATCH / ms) * 1000);
        console.log(
          `events ${events} round ${round + 1}: ${Math.round(rates.at(-1))} records/s, ${ms.toFixed(0)} ms, service CPU ${cpus.at(-1)} ms`,
        );
      }
    } finally {
      await server.stop();
    }
    results[events] = {
      rate: median(rates),
      min: Math.min(...rates),
      max: Math.max(...rates),
      cpu: median(cpus),
    };
  }
} finally {
  killAll();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
for (const [events, r] of Object.entries(results))
  console.log(
    `10 000 five-field records in one POST, events ${events}: ${Math.round(r.rate)} records/s (${Math.round(r.min)}–${Math.round(r.max)}), service CPU ${r.cpu} ms (median)`,
  );
