#!/usr/bin/env node
// A/B of two variants of the generated service of the Platformatic comparison (the ITEM table of
// bench/lib/data.mjs) under the same load: each variant runs on its own copy of one seeded SQLite
// file, and the two take turns (A, B, B, A, A, B, …) so that a slow phase of a shared machine
// falls on both. Prints per-round req/s and server CPU per request, their medians and the median
// of the per-round ratios B ÷ A.
//
//   node bench/ab.mjs [--path=/data/item?available=true&orderBy=-price&limit=100]
//                     [--a-env=NAME=value,…] [--b-env=NAME=value,…]
//                     [--a-service=dir] [--b-service=dir] [--a-rev=commit] [--b-rev=commit]
//                     [--rounds=8] [--seconds=2] [--warmup=1] [--seed=100000]
//
// A variant is the generated service (bench/output/peer-item) started with the environment
// `--x-env` adds. `--x-rev` links it to the runtime of another commit instead: that commit's
// runtime/ is compiled into bench/output/rt-<commit> (once) and linked into a copy of the service,
// bench/output/peer-item-<commit> (the service as the current generator writes it, so the
// commit's runtime must still serve it). `--x-service` names a folder of another build of the
// service to run as it is.
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { peerSchemaYaml } from './lib/data.mjs';
import { loadRun } from './lib/load.mjs';
import { peerBatches } from './lib/platformatic.mjs';
import { killAll, runCommand, startServer } from './lib/servers.mjs';
import {
  BATCH,
  buildService,
  copyDb,
  DATA,
  ensureBuilt,
  OUTPUT,
  postJson,
  removeDb,
  ROOT,
  sqliteUrl,
  TSC,
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

/** Runs a command in the repository; its output when it fails. */
async function run(command, args) {
  const result = await runCommand(command, args, { cwd: ROOT });
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout;
}

/** A copy of the service `built` linked to the runtime of commit `rev`, compiled once. */
async function serviceAt(rev, built) {
  const commit = (await run('git', ['rev-parse', '--short=12', `${rev}^{commit}`])).trim();
  const runtime = join(OUTPUT, `rt-${commit}`);
  if (!existsSync(join(runtime, 'dist', 'index.js'))) {
    const source = join(OUTPUT, `src-${commit}`);
    rmSync(source, { recursive: true, force: true });
    mkdirSync(source, { recursive: true });
    await run('sh', [
      '-c',
      `git archive ${commit} runtime tsconfig.base.json | tar -x -C "${source}"`,
    ]);
    symlinkSync(join(ROOT, 'node_modules'), join(source, 'runtime', 'node_modules'));
    await run(process.execPath, [TSC, '-p', join(source, 'runtime', 'tsconfig.json')]);
    rmSync(runtime, { recursive: true, force: true });
    // The admin app's files come from the current build (the compile does not make them).
    cpSync(join(ROOT, 'runtime', 'dist'), join(runtime, 'dist'), { recursive: true });
    cpSync(join(source, 'runtime', 'dist'), join(runtime, 'dist'), { recursive: true });
    cpSync(join(source, 'runtime', 'package.json'), join(runtime, 'package.json'));
    rmSync(source, { recursive: true, force: true });
    log(`compiled the runtime of ${commit} into ${runtime}`);
  }
  const service = join(OUTPUT, `peer-item-${commit}`);
  rmSync(service, { recursive: true, force: true });
  cpSync(built, service, {
    recursive: true,
    filter: (path) => !path.startsWith(join(built, 'node_modules')),
  });
  const scope = join(service, 'node_modules', '@entity-gen');
  mkdirSync(scope, { recursive: true });
  symlinkSync(relative(scope, runtime), join(scope, 'runtime'));
  return service;
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
      for (const records of peerBatches(SEED, BATCH))
        await postJson(`${seeder.url}/data/item`, JSON.stringify({ data: records }));
    } finally {
      await seeder.stop();
    }
    log(`seeded ${SEED} rows into ${seeded} (kept for later runs)`);
  }
  const variants = [];
  for (const name of ['a', 'b']) {
    const rev = option(`${name}-rev`);
    variants.push({
      name: name.toUpperCase(),
      dir: rev === undefined ? (option(`${name}-service`) ?? built) : await serviceAt(rev, built),
      env: envOption(option(`${name}-env`)),
      rounds: [],
    });
  }
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
