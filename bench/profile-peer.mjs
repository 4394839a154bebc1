#!/usr/bin/env node
// Where a request's CPU goes in the generated service of the Platformatic comparison (the ITEM
// table of bench/lib/data.mjs): seeds a fresh SQLite file through the bulk POST, runs one load
// run against one URL with the server under `--cpu-prof`, and prints µs per request by area (the
// area's share of the sampled CPU × the server's measured CPU per request) and the top functions.
//
//   node bench/profile-peer.mjs [--path=/data/item?available=true&orderBy=-price&limit=100]
//                               [--seed=100000] [--seconds=4] [--warmup=1]
//                               [--service=dir: another build of the service, as bench/ab.mjs]
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { profileMarkdown, summarizeProfile } from './lib/cpuprofile.mjs';
import { peerSchemaYaml } from './lib/data.mjs';
import { loadRun } from './lib/load.mjs';
import { peerBatches } from './lib/platformatic.mjs';
import { killAll, startServer } from './lib/servers.mjs';
import {
  BATCH,
  buildService,
  DATA,
  ensureBuilt,
  OUTPUT,
  postJson,
  removeDb,
  sqliteUrl,
  writeSchema,
} from './lib/setup.mjs';

const argv = process.argv.slice(2);
const option = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PATH = option('path') ?? '/data/item?available=true&orderBy=-price&limit=100';
const SEED = Number(option('seed') ?? 100_000);
const SECONDS = Number(option('seconds') ?? 4);
const WARMUP = Number(option('warmup') ?? 1);
const PROFILES = join(OUTPUT, 'profiles', 'peer');
const log = (...parts) => console.log('[profile-peer]', ...parts);

/**
 * Areas by the function a sample's self time is in, matched on `name where` (first match wins).
 */
const AREAS = [
  [
    'SQL statement (better-sqlite3, in listTexts/list/count)',
    /^(listTexts|listTextsNow|list|count|all|get) /,
  ],
  ['record JSON texts (recordText, canonicalJson)', /^(recordText|rowTexts|canonicalJson) /],
  ['page envelope (listRecords, textPageBody)', /^(listRecords|textPageBody|pageMeta) /],
  ['cursor signing (HMAC)', /^(encodeCursor|Hmac|digest|update|createHmac) /],
  ['query parsing + SQL text', /^(buildListSql|buildCountSql|parse\w*|buildFilterSql|cached) /],
  ['socket writes', /^(writev|writevGeneric|writeGeneric|_storeHeader|end|write) /],
  [
    'Koa, its router and the middleware (koa, @koa/router, koa-compose, errors, routes)',
    / ((koa|@koa\/router|koa-compose)\/|runtime\/dist\/(http\/errors|routes|service)\.js)/,
  ],
  ['the fast path (http/fast-get.js)', / runtime\/dist\/http\/fast-get\.js/],
  ['garbage collector', /^\(garbage collector\)/],
];

try {
  await ensureBuilt({ log });
  const dir = await buildService('peer-item', writeSchema('peer-item.yaml', peerSchemaYaml()), {
    log,
  });
  const file = join(DATA, 'peer-profile.db');
  removeDb(file);
  rmSync(PROFILES, { recursive: true, force: true });
  mkdirSync(PROFILES, { recursive: true });
  const env = { DATABASE_URL: sqliteUrl(file), SQLITE_SYNCHRONOUS: 'NORMAL' };
  const seeder = await startServer('peer-seed', join(dir, 'dist', 'server.js'), env);
  try {
    for (const records of peerBatches(SEED, BATCH))
      await postJson(`${seeder.url}/data/item`, JSON.stringify({ data: records }));
  } finally {
    await seeder.stop();
  }
  log(`seeded ${SEED} rows; profiling GET ${PATH}`);
  const served = option('service') ?? dir;
  const server = await startServer('peer-profiled', join(served, 'dist', 'server.js'), env, {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`],
  });
  let run;
  try {
    run = await loadRun(
      server.url,
      { method: 'GET', path: PATH },
      { connections: 50, seconds: SECONDS, warmupSeconds: WARMUP, pid: server.pid },
    );
  } finally {
    await server.stop();
  }
  const profile = readdirSync(PROFILES).find((name) => name.endsWith('.cpuprofile'));
  const summary = summarizeProfile(join(PROFILES, profile));
  const perRequest = run.cpuUsPerRequest;
  console.log(
    `\nGET ${PATH}: ${Math.round(run.rps)} req/s, server CPU ${Math.round(perRequest)} µs per request (measured window); ${SEED} rows\n`,
  );
  console.log('| area | share of sampled CPU | µs per request |', '\n|---|---:|---:|');
  let covered = 0;
  const claimed = new Set();
  for (const [label, pattern] of AREAS) {
    let ms = 0;
    for (const f of summary.functions) {
      const key = `${f.name} ${f.where}`;
      if (claimed.has(key) || !pattern.test(key)) continue;
      claimed.add(key);
      ms += f.selfMs;
    }
    covered += ms;
    const share = ms / summary.totalMs;
    console.log(`| ${label} | ${(share * 100).toFixed(1)}% | ${Math.round(share * perRequest)} |`);
  }
  const rest = 1 - covered / summary.totalMs;
  console.log(
    `| everything else (Node's HTTP server and parser, start-up) | ${(rest * 100).toFixed(1)}% | ${Math.round(rest * perRequest)} |`,
  );
  console.log(`\n${profileMarkdown(summary, { top: 20 })}`);
} catch (error) {
  killAll();
  console.error(error);
  process.exitCode = 1;
}
