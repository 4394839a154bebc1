#!/usr/bin/env node
// A/B of two variants of the generated service of the Platformatic comparison (the ITEM table of
// bench/lib/data.mjs) under the same load: each variant runs on its own copy of one seeded SQLite
// file, and the two take turns (A, B, B, A, A, B, …) so that a slow phase of a shared machine
// falls on both. Prints per-round req/s and server CPU per request, their medians and the median
// of the per-round ratios B ÷ A.
//
//   node bench/ab.mjs [--path=/data/item?available=true&orderBy=-price&limit=100]
//                     [--a-env=NAME=value,…] [--b-env=NAME=value,…]
//                     [--a-service=dir] [--b-service=dir]
//                     [--rounds=8] [--seconds=2] [--warmup=1] [--seed=100000]
//
// A variant is the generated service (bench/output/peer-item, or the folder `--x-service` names:
// another build of it, for example with an older runtime linked into its node_modules) started
// with the environment `--x-env` adds.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { peerRecord, peerSchemaYaml } from './lib/data.mjs';
import { loadRun } from './lib/load.mjs';
import { peerKey } from './lib/platformatic.mjs';
import { killAll, startServer } from './lib/servers.mjs';
import {
  BATCH,
  buildService,
  copyDb,
  DATA,
  ensureBuilt,
  postJson,
  removeDb,
  sqliteUrl,
  writeSchema,
} from './lib/setup.mjs';

const argv = process.argv.slice(2);
const option = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PATH = option('path') ?? '/data/item?available=true&orderBy=-price&limit=100';
const ROUNDS = Number(option('rounds') ?? 8);
const SECONDS = Number(option('seconds') ?? 2);
const WARMUP = Number(option('warmup') ?? 1);
const SEED = Number(option('seed') ?? 100_000);
const log = (...parts) => console.log('[ab]', ...parts);

/** `NAME=value,NAME=value` as an environment object. */
function envOption(text) {
  const env = {};
  for (const pair of (text ?? '').split(',').filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`not NAME=value: ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

try {
  await ensureBuilt({ log });
  const built = await buildService('peer-item', writeSchema('peer-item.yaml', peerSchemaYaml()), {
    log,
  });
  const seeded = join(DATA, `peer-ab-${SEED}.db`);
  if (!existsSync(seeded)) {
    const seeder = await startServer('peer-seed', join(built, 'dist', 'server.js'), {
      DATABASE_URL: sqliteUrl(seeded),
      SQLITE_SYNCHRONOUS: 'NORMAL',
    });
    try {
      for (let from = 0; from < SEED; from += BATCH) {
        const records = [];
        for (let n = from; n < Math.min(SEED, from + BATCH); n++)
          records.push(peerRecord(peerKey(n), n));
        await postJson(`${seeder.url}/data/item`, JSON.stringify({ data: records }));
      }
    } finally {
      await seeder.stop();
    }
    log(`seeded ${SEED} rows into ${seeded} (kept for later runs)`);
  }
  const variants = ['a', 'b'].map((name) => ({
    name: name.toUpperCase(),
    dir: option(`${name}-service`) ?? built,
    env: envOption(option(`${name}-env`)),
    rounds: [],
  }));
  for (const variant of variants) {
    const file = copyDb(seeded, join(DATA, `peer-ab-${variant.name}.db`));
    variant.server = await startServer(
      `variant ${variant.name}`,
      join(variant.dir, 'dist', 'server.js'),
      { DATABASE_URL: sqliteUrl(file), SQLITE_SYNCHRONOUS: 'NORMAL', ...variant.env },
    );
    log(`${variant.name}: ${variant.dir} ${JSON.stringify(variant.env)}`);
  }
  log(`GET ${PATH}: ${ROUNDS} rounds of ${WARMUP} s + ${SECONDS} s per variant, 50 connections`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const run = await loadRun(
        variant.server.url,
        { method: 'GET', path: PATH },
        { connections: 50, seconds: SECONDS, warmupSeconds: WARMUP, pid: variant.server.pid },
      );
      if (run.non2xx > 0 || run.errors > 0) throw new Error(`${variant.name}: failed requests`);
      variant.rounds.push(run);
    }
    const [a, b] = variants.map((variant) => variant.rounds[round]);
    log(
      `round ${round + 1}: A ${Math.round(a.rps)} req/s ${Math.round(a.cpuUsPerRequest)} µs;` +
        ` B ${Math.round(b.rps)} req/s ${Math.round(b.cpuUsPerRequest)} µs`,
    );
  }
  const [a, b] = variants;
  const ratios = (key) => a.rounds.map((run, i) => b.rounds[i][key] / run[key]);
  console.log(`\n| GET ${PATH} | A | B | B ÷ A, median of per-round ratios (min–max) |`);
  console.log('|---|---:|---:|---:|');
  for (const [label, key] of [
    ['req/s, median', 'rps'],
    ['server CPU µs per request, median', 'cpuUsPerRequest'],
  ]) {
    const values = ratios(key);
    console.log(
      `| ${label} | ${Math.round(median(a.rounds.map((r) => r[key])))} | ${Math.round(median(b.rounds.map((r) => r[key])))} | ${median(values).toFixed(3)}× (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}) |`,
    );
  }
  for (const variant of variants) await variant.server.stop();
  for (const variant of variants) removeDb(join(DATA, `peer-ab-${variant.name}.db`));
} catch (error) {
  killAll();
  console.error(error);
  process.exitCode = 1;
}
