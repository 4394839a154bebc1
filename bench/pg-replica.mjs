#!/usr/bin/env node
// Reads through a PostgreSQL streaming replica (SPEC §15): the generated five-field service on a
// private primary, and the same with DATABASE_READ_URL naming a streaming replica of it, both on
// this machine. Measures GET by key (random key of 10 000 records, autocannon, 50 connections)
// against the primary alone, through the replica, and through the replica with an X-Read-After
// token (of a write made before the run, so already replayed: the cost of the check).
//
//   node bench/pg-replica.mjs [--rounds=N] [--seconds=S]
//
// Needs `npm run build` and the PostgreSQL server binaries (initdb, pg_basebackup, pg_ctl; PG_BIN_DIR
// or /usr/lib/postgresql/<version>/bin). As root the clusters run as the user postgres (runuser).
// Both clusters live in temporary folders and are removed afterwards.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fiveFieldRecord, fiveFieldSchemaYaml } from './lib/data.mjs';
import { loadRun } from './lib/load.mjs';
import { freePort, killAll, startServer } from './lib/servers.mjs';
import { BATCH, buildService, ensureBuilt, postJson, writeSchema } from './lib/setup.mjs';
import { median } from './lib/stats.mjs';

const argv = process.argv.slice(2);
for (const arg of argv)
  if (!/^--(rounds|seconds)=\d+$/.test(arg))
    throw new Error(`Unknown option ${arg}; see the header of bench/pg-replica.mjs`);
const option = (name, fallback) =>
  Number(argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const ROUNDS = option('rounds', 3);
const SECONDS = option('seconds', 3);

const bin =
  process.env.PG_BIN_DIR ??
  readdirSync('/usr/lib/postgresql')
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => b - a)
    .map((v) => `/usr/lib/postgresql/${v}/bin`)[0];
const root = process.getuid?.() === 0;
const owner = root
  ? {
      uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout),
      gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout),
    }
  : undefined;
const run = (tool, args) => {
  const [command, argsAs] = root
    ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
    : [join(bin, tool), args];
  const result = spawnSync(command, argsAs, { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr}${result.stdout}`);
};
const cluster = async (name) => {
  const dir = mkdtempSync(join(tmpdir(), `eg-bench-${name}-`));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  return { dir, data: join(dir, 'data'), port: await freePort() };
};
const start = (c) =>
  run('pg_ctl', [
    '-D',
    c.data,
    '-l',
    join(c.dir, 'log'),
    '-w',
    '-o',
    `-p ${c.port} -k ${c.dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c hot_standby_feedback=on`,
    'start',
  ]);
const url = (c) => `postgres://postgres@127.0.0.1:${c.port}/postgres?schema=bench`;

await ensureBuilt();
const dir = await buildService('five-field', writeSchema('five-field.yaml', fiveFieldSchemaYaml()));
const primary = await cluster('primary');
const replica = await cluster('replica');
const results = {};
try {
  run('initdb', [
    '-D',
    primary.data,
    '-U',
    'postgres',
    '--auth=trust',
    '--locale=C',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  start(primary);
  run('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    replica.data,
    '-R',
    '-X',
    'stream',
  ]);
  start(replica);
  const servers = [
    { id: 'primary', label: 'primary only', env: { DATABASE_URL: url(primary) } },
    {
      id: 'replica',
      label: 'DATABASE_READ_URL = the replica',
      env: { DATABASE_URL: url(primary), DATABASE_READ_URL: url(replica) },
    },
  ];
  let token;
  for (const server of servers) {
    Object.assign(server, await startServer(server.id, join(dir, 'dist', 'server.js'), server.env));
    if (server.id === 'primary') {
      const records = [];
      for (let i = 0; i < BATCH; i++)
        records.push(fiveFieldRecord(`R${String(i).padStart(5, '0')}`, i));
      await postJson(`${server.url}/data/item`, JSON.stringify({ data: records }));
    } else {
      const answer = await fetch(`${server.url}/data/item/R00001`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ data: { qty: 1 } }),
      });
      token = answer.headers.get('x-read-after');
      await answer.arrayBuffer();
      if (token === null)
        throw new Error('a write behind DATABASE_READ_URL answered without X-Read-After');
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const get = (headers = {}) => ({
    method: 'GET',
    headers,
    setupRequest: (request) => ({
      ...request,
      path: `/data/item/R${String(Math.floor(Math.random() * BATCH)).padStart(5, '0')}`,
    }),
  });
  const cases = [
    ['primary only', servers[0], get()],
    ['through the replica', servers[1], get()],
    ['through the replica, with a token', servers[1], get({ 'X-Read-After': token })],
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, server, request] of cases) {
      const r = await loadRun(server.url, request, {
        seconds: SECONDS,
        warmupSeconds: 1,
        pid: server.pid,
      });
      results[label] ??= [];
      results[label].push(r);
      console.log(
        `round ${round + 1} ${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
    }
  }
} finally {
  killAll();
  for (const c of [replica, primary]) {
    if (existsSync(join(c.data, 'postmaster.pid'))) {
      try {
        run('pg_ctl', ['-D', c.data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already down
      }
    }
    rmSync(c.dir, { recursive: true, force: true });
  }
}
console.log(
  '\n| GET by key (five-field entity, 10 000 records) | req/s (median) | p50 (ms) | p99 (ms) |',
);
console.log('| --- | ---: | ---: | ---: |');
for (const [label, runs] of Object.entries(results))
  console.log(
    `| ${label} | ${Math.round(median(runs.map((r) => r.rps)))} | ${median(runs.map((r) => r.p50)).toFixed(2)} | ${median(runs.map((r) => r.p99)).toFixed(2)} |`,
  );
