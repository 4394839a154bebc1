#!/usr/bin/env node
// entity-gen benchmark runner: `npm run bench` (full) or `npm run bench -- --quick` (smoke run).
// Writes bench/results/latest.md + latest.json (full) or latest-quick.md + latest-quick.json.
//
// Options:
//   --quick            1 short round, 10 000 seeded rows, small synthetic schemas (< 1 minute)
//   --only=a,b         run only these sections: http, bulk, platformatic, scaling, generate, pg,
//                      paging (platformatic: the Platformatic DB peer, installed on demand)
//   --skip=a,b         skip these sections
//   --ops=a,b          http section: run only these operations (get, list, count, patch, post)
//   --paging           also run bench/paging.mjs (deep paging: offset vs cursor; off by default)
//   --no-build         do not rebuild runtime/dist and dist/cli when the sources are newer
//   --rounds=N --seconds=S --warmup=S --seed=N   override the mode's settings
//
// The servers under test are child processes on 127.0.0.1; autocannon runs in this process.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, relative } from 'node:path';
import {
  categoryName,
  fiveFieldRecord,
  fiveFieldSchemaYaml,
  peerRecord,
  peerSchemaYaml,
  productCode,
  productRecord,
  syntheticEntityName,
  syntheticRecord,
  syntheticSchemaYaml,
} from './lib/data.mjs';
import { loadRun, timedRequest } from './lib/load.mjs';
import {
  bulkAnswerError,
  bulkRequest,
  ensurePlatformatic,
  PLATFORMATIC_SERVER,
  peerBatches,
  peerKey,
  peerOperations,
  platformaticVersion,
} from './lib/platformatic.mjs';
import { cpuMs, killAll, runCommand, sampleRss, startServer } from './lib/servers.mjs';
import {
  BATCH,
  BENCH,
  buildService as buildServiceOnce,
  CLI,
  copyDb,
  DATA,
  ensureBuilt,
  OUTPUT,
  postJson,
  randomInt,
  removeDb,
  RESULTS,
  ROOT,
  seedCategories,
  seedShopDb,
  shopOperations,
  sqliteUrl,
  TSC,
  writeSchema,
} from './lib/setup.mjs';
import { fmt, fmtSpread, spread } from './lib/stats.mjs';
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';

const SECTIONS = ['http', 'bulk', 'platformatic', 'scaling', 'generate', 'pg', 'paging'];

// --- Options ---------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const option = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const QUICK = flag('quick');
const only = option('only')?.split(',');
const skip = new Set(option('skip')?.split(',') ?? []);
for (const name of [...(only ?? []), ...skip]) {
  if (!SECTIONS.includes(name))
    throw new Error(`Unknown section ${name}; sections: ${SECTIONS.join(', ')}`);
}
const HTTP_OPERATIONS = ['get', 'list', 'count', 'patch', 'post'];
const httpOps = option('ops')?.split(',') ?? HTTP_OPERATIONS;
for (const name of httpOps) {
  if (!HTTP_OPERATIONS.includes(name))
    throw new Error(`Unknown operation ${name}; operations: ${HTTP_OPERATIONS.join(', ')}`);
}
const enabled = (section) =>
  section === 'paging'
    ? (flag('paging') || only?.includes('paging') === true) && !skip.has(section)
    : (only === undefined || only.includes(section)) && !skip.has(section);

const MODE = QUICK
  ? {
      name: 'quick',
      rounds: 1,
      // The warm-up must let the JIT optimize the handlers: 0.3 s was too short for the
      // generated service (more code to warm up) and biased quick ratios against it. autocannon
      // runs last whole seconds, so warm-up + measured = 1 s.
      warmupSeconds: 0.5,
      seconds: 0.5,
      seedCount: 10_000,
      bulkBatches: 1,
      scalingEntities: 20,
      scalingSeed: 2_000,
      generateSizes: [10],
      generateRepeats: 1,
      typecheckEntities: undefined,
      regenerateEntities: undefined,
      pgSeedCount: 10_000,
    }
  : {
      name: 'full',
      rounds: 5,
      warmupSeconds: 1,
      seconds: 2,
      seedCount: 100_000,
      bulkBatches: 1,
      scalingEntities: 200,
      scalingSeed: 10_000,
      generateSizes: [10, 100, 1000],
      generateRepeats: 3,
      typecheckEntities: 100,
      regenerateEntities: 100,
      pgSeedCount: 100_000,
    };
if (option('rounds') !== undefined) MODE.rounds = Number(option('rounds'));
if (option('seconds') !== undefined) MODE.seconds = Number(option('seconds'));
if (option('warmup') !== undefined) MODE.warmupSeconds = Number(option('warmup'));
if (option('seed') !== undefined) MODE.seedCount = Number(option('seed'));
const CONNECTIONS = 50;
/** Generation of the largest schema is stopped after this long (reported as "> limit"). */
const GENERATE_TIMEOUT_MS = 60_000;
const PG_BENCH_DB = 'entity_gen_bench';

const started = performance.now();
const results = {
  mode: MODE.name,
  settings: { ...MODE, connections: CONNECTIONS, batch: BATCH },
  machine: {},
  notes: [],
  sections: {},
};
/** Builds each generated service at most once per run (others may rebuild dist/cli meanwhile). */
const built = new Map();
function buildService(name, schemaFile, options) {
  if (!built.has(name)) built.set(name, buildServiceOnce(name, schemaFile, options));
  return built.get(name);
}

/** Time spent outside measurements (build, generate + compile of services, seeding). */
async function setupStep(what, fn) {
  const t = performance.now();
  try {
    return await fn();
  } finally {
    const seconds = (performance.now() - t) / 1000;
    if (seconds >= 0.05) {
      results.setup ??= [];
      results.setup.push({ what, seconds });
    }
  }
}
const log = (...parts) =>
  console.log(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s]`, ...parts);

process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});

async function main() {
  mkdirSync(DATA, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  await setupStep('npm run build (only when the sources changed)', async () => {
    const state = await ensureBuilt({ build: !flag('no-build'), log });
    if (state === 'stale')
      results.notes.push(
        'runtime/dist or dist/cli is older than its sources (--no-build given): measured the built code.',
      );
  });
  results.machine = machineInfo();
  log(
    `mode ${MODE.name}: ${MODE.rounds} round(s) × ${MODE.seconds}s (+${MODE.warmupSeconds}s warm-up), ${CONNECTIONS} connections, ${fmt(MODE.seedCount)} seeded rows`,
  );

  if (enabled('http') || enabled('bulk')) await sqliteSection();
  if (enabled('platformatic')) await platformaticSection();
  if (enabled('scaling')) await scalingSection();
  if (enabled('generate')) await generateSection();
  if (enabled('pg')) await pgSection();
  if (enabled('paging')) await pagingSection();

  results.machine.loadAverageEnd = os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
  results.totalSeconds = (performance.now() - started) / 1000;
  const base = QUICK ? 'latest-quick' : 'latest';
  writeFileSync(join(RESULTS, `${base}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(RESULTS, `${base}.md`), renderMarkdown(results));
  log(
    `done in ${results.totalSeconds.toFixed(1)} s; wrote ${relative(ROOT, join(RESULTS, `${base}.md`))}`,
  );
  console.log(`\n${renderMarkdown(results)}`);
}

/**
 * Measures `operation` on every server, interleaved: for each round, A B C … each with its own
 * warm-up. `onRun(server, phase)` may return a finisher (e.g. an RSS sampler) for the measured run.
 */
async function interleave(servers, operation, { rounds, sample } = {}) {
  const runs = Object.fromEntries(servers.map((s) => [s.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) {
      const request = operation.request(`${server.id}${round}x`, server);
      const sampler = sample?.(server);
      const run = await loadRun(server.url, request, {
        connections: CONNECTIONS,
        seconds: MODE.seconds,
        warmupSeconds: MODE.warmupSeconds,
        pid: server.pid,
      });
      if (sampler !== undefined) run.rssBytes = sampler.stop();
      runs[server.id].push(run);
      log(
        `  ${operation.label} · ${server.label} · round ${round + 1}: ${fmt(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms, server CPU ${fmt(run.cpuUsPerRequest)} µs/req (${fmt(run.cpuShare * 100)}% busy)${run.non2xx + run.errors > 0 ? `, ${run.non2xx} non-2xx, ${run.errors} errors` : ''}`,
      );
    }
  }
  return runs;
}

/** Per-round ratios of a metric between two servers' runs. */
function ratios(a, b, metric = 'rps') {
  return a.map((run, i) => run[metric] / b[i][metric]);
}

/**
 * Per-round CPU-time ratio as a throughput-equivalent: b's server CPU per request ÷ a's (above 1
 * when a needs less CPU per request than b). Robust against other load on the machine.
 */
function cpuRatios(a, b) {
  return a.map((run, i) => b[i].cpuUsPerRequest / run.cpuUsPerRequest);
}

function summarizeRuns(runs) {
  return {
    rps: spread(runs.map((r) => r.rps)),
    p50: spread(runs.map((r) => r.p50)),
    p99: spread(runs.map((r) => r.p99)),
    cpuUs: spread(runs.map((r) => r.cpuUsPerRequest)),
    cpuShare: spread(runs.map((r) => r.cpuShare)),
    failures: runs.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
    rssBytes: runs.some((r) => r.rssBytes !== undefined)
      ? Math.max(...runs.map((r) => r.rssBytes ?? 0))
      : undefined,
    runs,
  };
}

// --- Sections ---------------------------------------------------------------------------------------

/** Envelope check: the three servers must answer the same requests with the same JSON. */
async function envelopeCheck(servers, seedCount) {
  const problems = [];
  const key = productCode(Math.min(42, seedCount - 1));
  const compare = async (what, request, pick) => {
    const answers = [];
    for (const server of servers) {
      const response = await timedRequest(`${server.url}${request.path}`, request);
      let body;
      try {
        body = JSON.parse(response.text);
      } catch {
        body = response.text;
      }
      answers.push({
        server,
        status: response.status,
        etag: response.headers.get('etag'),
        value: JSON.stringify(pick(body)),
      });
    }
    const [first, ...rest] = answers;
    for (const other of rest) {
      if (
        other.status !== first.status ||
        other.value !== first.value ||
        other.etag !== first.etag
      ) {
        problems.push(
          `${what}: ${other.server.label} differs from ${first.server.label} (status ${other.status}/${first.status}, ETag ${other.etag}/${first.etag})`,
        );
      }
    }
  };
  await compare('GET by key', { path: `/data/product/${key}` }, (b) => b);
  await compare(
    'GET page',
    { path: `/data/product?category=${categoryName(7)}&orderBy=-price&limit=100` },
    (b) => [b.status, b.data, b.meta?.start, b.meta?.limit],
  );
  await compare(
    'count',
    { path: `/entity/product/recordCounts?category=${categoryName(7)}` },
    (b) => b,
  );
  const record = productRecord('CHECK-1', 1);
  await compare(
    'POST one',
    { path: '/data/product', method: 'POST', body: JSON.stringify({ data: record }) },
    (b) => [b.status, b.data, typeof b.meta?.lastUpdateTimeUnix],
  );
  await compare(
    'PATCH one',
    { path: `/data/product/${key}`, method: 'PATCH', body: JSON.stringify({ data: { stock: 7 } }) },
    (b) => [b.status, b.data],
  );
  await compare(
    'POST invalid',
    {
      path: '/data/product',
      method: 'POST',
      body: JSON.stringify({ data: { ...record, code: 'CHECK-2', price: 'abc' } }),
    },
    (b) => b.status,
  );
  await compare('GET missing', { path: '/data/product/NOPE' }, (b) => b.status);
  return problems;
}

async function sqliteSection() {
  log('SQLite: shop service vs hand-written Koa vs raw node:http');
  const shop = await setupStep('generate + tsc shop (cached)', () =>
    buildService('shop', join(ROOT, 'fixtures', 'shop', 'shop.yaml'), { log }),
  );
  const seedDb = await seedShopDb(shop, MODE.seedCount, {
    log,
    onSeeded: (seconds) => {
      results.setup ??= [];
      results.setup.push({ what: `seed ${fmt(MODE.seedCount)} SQLite rows (cached)`, seconds });
    },
  });
  const files = {};
  for (const id of ['gen', 'koa', 'raw']) {
    files[id] = copyDb(seedDb, join(DATA, `${id}.db`));
  }
  const sync = process.env.SQLITE_SYNCHRONOUS;
  const syncEnv = sync === undefined ? {} : { SQLITE_SYNCHRONOUS: sync };
  const servers = [];
  try {
    servers.push(
      {
        id: 'gen',
        label: 'generated (entity-gen)',
        ...(await startServer('generated', join(shop, 'dist', 'server.js'), {
          DATABASE_URL: sqliteUrl(files.gen),
          ...syncEnv,
        })),
      },
      {
        id: 'koa',
        label: 'hand-written Koa',
        ...(await startServer('koa', join(BENCH, 'baselines', 'koa-sqlite.mjs'), {
          DATABASE_FILE: files.koa,
          ...syncEnv,
        })),
      },
      {
        id: 'raw',
        label: 'raw node:http',
        ...(await startServer('raw', join(BENCH, 'baselines', 'raw-sqlite.mjs'), {
          DATABASE_FILE: files.raw,
          ...syncEnv,
        })),
      },
    );
    const problems = await envelopeCheck(servers, MODE.seedCount);
    results.sections.envelope = problems;
    log(
      problems.length === 0
        ? 'envelope check: identical answers'
        : `envelope check: ${problems.join('; ')}`,
    );

    if (enabled('http')) {
      const operations = shopOperations(MODE.seedCount);
      const http = {};
      for (const id of httpOps) {
        const runs = await interleave(servers, operations[id], {
          rounds: MODE.rounds,
          // The page's peak RSS shows what the readers' page caches (SQLITE_CACHE_SIZE) add.
          sample: id === 'get' || id === 'list' ? (server) => sampleRss(server.pid) : undefined,
        });
        http[id] = {
          label: operations[id].label,
          servers: Object.fromEntries(servers.map((s) => [s.id, summarizeRuns(runs[s.id])])),
          genVsKoa: spread(ratios(runs.gen, runs.koa)),
          genVsRaw: spread(ratios(runs.gen, runs.raw)),
          koaVsRaw: spread(ratios(runs.koa, runs.raw)),
          cpuGenVsKoa: spread(cpuRatios(runs.gen, runs.koa)),
          cpuGenVsRaw: spread(cpuRatios(runs.gen, runs.raw)),
        };
      }
      results.sections.http = http;
    }
    if (enabled('bulk')) results.sections.bulk = await bulkSection(servers, files.gen);
  } finally {
    for (const server of servers) await server.stop();
  }
}

/**
 * POST of 10 000 records in one request, end to end, interleaved across the servers; then the
 * storage floor (the same rows inserted by better-sqlite3 directly), and the same for the
 * five-field entity. `genFile` is the generated service's SQLite file; without it (PostgreSQL)
 * only the POSTs are measured.
 */
async function bulkSection(servers, genFile, label = 'bulk') {
  log(`${label}: ${fmt(BATCH)} records in one POST`);
  const perServer = Object.fromEntries(servers.map((s) => [s.id, []]));
  const floor = [];
  const body = (tag) => {
    const records = [];
    for (let i = 0; i < BATCH; i++)
      records.push(productRecord(`B${tag}-${String(i).padStart(5, '0')}`, i));
    return JSON.stringify({ data: records });
  };
  let bodyBytes = 0;
  for (let round = 0; round < MODE.rounds; round++) {
    for (const server of servers) {
      const warm = body(`${server.id}${round}w`);
      bodyBytes = Buffer.byteLength(warm);
      await postJson(`${server.url}/data/product`, warm);
      perServer[server.id].push(
        await bulkRun(server, '/data/product', (b) => body(`${server.id}${round}b${b}`), label),
      );
    }
    if (genFile === undefined) continue;
    floor.push(storageFloor(genFile, 'product', 'code', `Bgen${round}b0-`, `F${round}-`));
    log(`  bulk · storage floor (better-sqlite3) · round ${round + 1}: ${floorText(floor.at(-1))}`);
  }
  const product = bulkSummary(servers, perServer, floor);
  if (genFile === undefined) return { bodyBytes, ...product };
  const five = await fiveFieldBulk();
  return { bodyBytes, ...product, five };
}

/** One measured bulk POST (or `MODE.bulkBatches` of them) on `server`. */
async function bulkRun(server, path, bodyOf, label = 'bulk') {
  const times = [];
  const cpu = [];
  for (let b = 0; b < MODE.bulkBatches; b++) {
    const text = bodyOf(b);
    const cpuBefore = cpuMs(server.pid);
    times.push((await postJson(`${server.url}${path}`, text)).ms);
    cpu.push(cpuMs(server.pid) - cpuBefore);
  }
  const ms = times.reduce((a, b) => a + b, 0) / times.length;
  const cpuPerRequest = cpu.reduce((a, b) => a + b, 0) / cpu.length;
  log(
    `  ${label} · ${server.label} · ${ms.toFixed(0)} ms per request (server CPU ${cpuPerRequest.toFixed(0)} ms), ${fmt((BATCH * 1000) / ms)} records/s`,
  );
  return { ms, recordsPerSecond: (BATCH * 1000) / ms, cpuMs: cpuPerRequest };
}

function floorText(run) {
  return `${run.ms.toFixed(0)} ms (CPU ${run.cpuMs.toFixed(0)} ms) for ${fmt(run.rows)} rows, ${fmt(run.recordsPerSecond)} records/s`;
}

/**
 * The storage floor: the rows the generated service stored under `fromPrefix` (its last bulk
 * POST), re-keyed to `toPrefix` and inserted by better-sqlite3 directly into the same table of
 * the same database file, in one transaction with one prepared statement, with the service's
 * `synchronous` setting. No JSON, no validation, no outbox: what SQLite itself needs.
 */
function storageFloor(file, table, keyColumn, fromPrefix, toPrefix) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const db = new Database(file, { timeout: 10_000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS ?? 'FULL'}`);
    const columns = db
      .prepare(`SELECT name FROM pragma_table_info(?) ORDER BY cid`)
      .pluck()
      .all(table);
    const keyIndex = columns.indexOf(keyColumn);
    const rows = db
      .prepare(`SELECT * FROM "${table}" WHERE "${keyColumn}" >= ? AND "${keyColumn}" < ?`)
      .raw(true)
      .all(fromPrefix, `${fromPrefix}\uffff`);
    // The shop's PRODUCT name is unique within its category: the copies get names of their own.
    const nameIndex = columns.indexOf('name');
    for (const row of rows) {
      row[keyIndex] = toPrefix + String(row[keyIndex]).slice(fromPrefix.length);
      if (nameIndex >= 0 && typeof row[nameIndex] === 'string')
        row[nameIndex] = toPrefix + row[nameIndex];
    }
    const insert = db.prepare(
      `INSERT INTO "${table}" VALUES (${columns.map(() => '?').join(', ')})`,
    );
    const insertAll = db.transaction((list) => {
      for (const row of list) insert.run(row);
    });
    const t = performance.now();
    const cpu = process.cpuUsage();
    insertAll.immediate(rows);
    const ms = performance.now() - t;
    const used = process.cpuUsage(cpu);
    return {
      ms,
      cpuMs: (used.user + used.system) / 1000,
      rows: rows.length,
      recordsPerSecond: (rows.length * 1000) / ms,
    };
  } finally {
    db.close();
  }
}

function bulkSummary(servers, perServer, floor) {
  const rate = (id) => perServer[id].map((r) => r.recordsPerSecond);
  const floorRate = floor.map((r) => r.recordsPerSecond);
  const ratio = (a, b) => spread(a.map((v, i) => v / b[i]));
  const out = {
    servers: Object.fromEntries(
      servers.map((s) => [
        s.id,
        {
          recordsPerSecond: spread(rate(s.id)),
          ms: spread(perServer[s.id].map((r) => r.ms)),
          cpuMs: spread(perServer[s.id].map((r) => r.cpuMs)),
        },
      ]),
    ),
  };
  if (floor.length > 0) {
    out.floor = {
      recordsPerSecond: spread(floorRate),
      ms: spread(floor.map((r) => r.ms)),
      cpuMs: spread(floor.map((r) => r.cpuMs)),
    };
    out.genVsFloor = ratio(rate('gen'), floorRate);
    // CPU view: the floor's CPU time per batch ÷ the generated server's.
    out.cpuGenVsFloor = spread(perServer.gen.map((r, i) => floor[i].cpuMs / r.cpuMs));
  }
  if (perServer.koa !== undefined) out.genVsKoa = ratio(rate('gen'), rate('koa'));
  if (perServer.raw !== undefined) out.genVsRaw = ratio(rate('gen'), rate('raw'));
  return out;
}

/** The bulk POST on a generated service of one five-field entity (empty table), and its floor. */
async function fiveFieldBulk() {
  const dir = await setupStep('generate + tsc five-field (cached)', () =>
    buildService('five-field', writeSchema('five-field.yaml', fiveFieldSchemaYaml()), { log }),
  );
  const file = join(DATA, 'five-field.db');
  removeDb(file);
  const sync = process.env.SQLITE_SYNCHRONOUS;
  const server = {
    id: 'gen',
    label: 'five-field entity, generated',
    ...(await startServer('five-field', join(dir, 'dist', 'server.js'), {
      DATABASE_URL: sqliteUrl(file),
      ...(sync === undefined ? {} : { SQLITE_SYNCHRONOUS: sync }),
    })),
  };
  const body = (tag) => {
    const records = [];
    for (let i = 0; i < BATCH; i++)
      records.push(fiveFieldRecord(`I${tag}-${String(i).padStart(5, '0')}`, i));
    return JSON.stringify({ data: records });
  };
  const runs = [];
  const floor = [];
  try {
    for (let round = 0; round < MODE.rounds; round++) {
      await postJson(`${server.url}/data/item`, body(`${round}w`));
      runs.push(await bulkRun(server, '/data/item', (b) => body(`${round}b${b}`)));
      floor.push(storageFloor(file, 'item', 'id', `I${round}b0-`, `F${round}-`));
      log(`  bulk · five-field storage floor · round ${round + 1}: ${floorText(floor.at(-1))}`);
    }
  } finally {
    await server.stop();
  }
  return bulkSummary([server], { gen: runs }, floor);
}

/**
 * The peer: Platformatic DB (bench/baselines/platformatic, installed on demand) against a
 * generated service of the same five-field ITEM table with the same composite index, both seeded
 * through their own bulk request with the same rows, both on SQLite in WAL with the same
 * `synchronous` (NORMAL unless SQLITE_SYNCHRONOUS says otherwise).
 */
async function platformaticSection() {
  const version = platformaticVersion();
  log(`Platformatic DB ${version} vs the generated service: the ITEM table`);
  const installed = await setupStep('npm ci of the Platformatic baseline (cached)', () =>
    ensurePlatformatic({ log }),
  );
  log(
    installed === 'cached'
      ? 'Platformatic baseline: installed copy matches its lock file (bench/baselines/platformatic)'
      : 'Platformatic baseline: installed from its lock file (bench/baselines/platformatic)',
  );
  const dir = await setupStep('generate + tsc peer ITEM (cached)', () =>
    buildService('peer-item', writeSchema('peer-item.yaml', peerSchemaYaml()), { log }),
  );
  const sync = (process.env.SQLITE_SYNCHRONOUS ?? 'NORMAL').toUpperCase();
  const files = { gen: join(DATA, 'peer-gen.db'), plt: join(DATA, 'peer-plt.db') };
  for (const file of Object.values(files)) removeDb(file);
  const servers = [];
  const section = { version, synchronous: sync, seedCount: MODE.seedCount };
  try {
    servers.push(
      {
        id: 'gen',
        label: 'generated (entity-gen)',
        ...(await startServer('peer-generated', join(dir, 'dist', 'server.js'), {
          DATABASE_URL: sqliteUrl(files.gen),
          SQLITE_SYNCHRONOUS: sync,
        })),
      },
      {
        id: 'plt',
        label: `Platformatic DB ${version}`,
        ...(await startServer('platformatic', PLATFORMATIC_SERVER, {
          DATABASE_FILE: files.plt,
          SQLITE_SYNCHRONOUS: sync,
        })),
      },
    );
    const [gen, plt] = servers;
    // The durability each server runs with: Platformatic reports its connection's PRAGMAs; the
    // generated service's journal mode is read from its file, its synchronous is its setting.
    const pltHealth = JSON.parse((await timedRequest(`${plt.url}/health`)).text);
    section.durability = {
      gen: { journalMode: journalMode(files.gen), synchronous: `${sync} (SQLITE_SYNCHRONOUS)` },
      plt: { journalMode: pltHealth.journalMode, synchronous: `${pltHealth.synchronous} (PRAGMA)` },
    };
    log(
      `SQLite durability: generated journal_mode=${section.durability.gen.journalMode} synchronous=${section.durability.gen.synchronous}; Platformatic journal_mode=${section.durability.plt.journalMode} synchronous=${section.durability.plt.synchronous}`,
    );
    if (pltHealth.synchronous !== sync)
      throw new Error(`Platformatic runs with synchronous=${pltHealth.synchronous}, not ${sync}`);

    // Seed both with the same rows, in bulk requests of BATCH records each.
    const seedMs = { gen: 0, plt: 0 };
    await setupStep(`seed ${fmt(MODE.seedCount)} ITEM rows into both (bulk requests)`, async () => {
      for (const records of peerBatches(MODE.seedCount, BATCH))
        for (const server of servers) seedMs[server.id] += await peerBulk(server, records);
    });
    section.seedMs = seedMs;
    section.storage = {
      gen: dbFileStats(files.gen),
      plt: dbFileStats(files.plt),
    };
    section.storage.ratio = section.storage.gen.bytes / section.storage.plt.bytes;
    log(
      `database files after ${fmt(MODE.seedCount)} bulk-inserted rows: generated ${fmt(section.storage.gen.bytes / MB, 1)} MB, Platformatic ${fmt(section.storage.plt.bytes / MB, 1)} MB (${section.storage.ratio.toFixed(2)}×)`,
    );
    section.check = await peerCheck(gen, plt);
    log(
      section.check.length === 0
        ? 'peer check: same record by key, same page of 100, same count'
        : `peer check: ${section.check.join('; ')}`,
    );

    const operations = peerOperations(MODE.seedCount, peerRecord);
    const http = {};
    for (const id of ['get', 'list', 'count', 'post']) {
      const runs = await interleave(servers, operations[id], {
        rounds: MODE.rounds,
        sample: (server) => sampleRss(server.pid),
      });
      http[id] = {
        label: operations[id].label,
        servers: Object.fromEntries(servers.map((s) => [s.id, summarizeRuns(runs[s.id])])),
        genVsPlt: spread(ratios(runs.gen, runs.plt)),
        cpuGenOverPlt: spread(
          runs.gen.map((run, i) => run.cpuUsPerRequest / runs.plt[i].cpuUsPerRequest),
        ),
        p99GenOverPlt: spread(runs.gen.map((run, i) => run.p99 / runs.plt[i].p99)),
      };
    }
    section.http = http;

    log(`platformatic: ${fmt(BATCH)} records in one request`);
    const bulk = { gen: [], plt: [] };
    const batch = (tag) => {
      const records = [];
      for (let i = 0; i < BATCH; i++)
        records.push(peerRecord(`B${tag}-${String(i).padStart(5, '0')}`, i));
      return records;
    };
    // A warm-up request each (not in quick mode, a smoke run: Platformatic's takes seconds).
    if (!QUICK) for (const server of servers) await peerBulk(server, batch(`${server.id}w`));
    for (let round = 0; round < MODE.rounds; round++) {
      for (const server of servers) {
        const records = batch(`${server.id}${round}`);
        const cpuBefore = cpuMs(server.pid);
        const ms = await peerBulk(server, records);
        const cpu = cpuMs(server.pid) - cpuBefore;
        bulk[server.id].push({ ms, cpuMs: cpu });
        log(
          `  bulk · ${server.label} · round ${round + 1}: ${ms.toFixed(0)} ms (server CPU ${cpu.toFixed(0)} ms)`,
        );
      }
    }
    section.bulk = {
      servers: Object.fromEntries(
        servers.map((s) => [
          s.id,
          {
            ms: spread(bulk[s.id].map((r) => r.ms)),
            cpuMs: spread(bulk[s.id].map((r) => r.cpuMs)),
          },
        ]),
      ),
      // How many times faster: Platformatic's time ÷ the generated service's, per round.
      speedup: spread(bulk.gen.map((r, i) => bulk.plt[i].ms / r.ms)),
      cpuGenOverPlt: spread(bulk.gen.map((r, i) => r.cpuMs / bulk.plt[i].cpuMs)),
    };
  } finally {
    for (const server of servers) await server.stop();
    results.sections.platformatic = section;
  }
}

/** One bulk insert of `records` on a peer server; resolves its wall time in ms. */
async function peerBulk(server, records) {
  const { path, body } = bulkRequest(server, records);
  const response = await postJson(`${server.url}${path}`, body);
  const error = bulkAnswerError(server, response.text);
  if (error !== undefined) throw new Error(`${server.label} bulk insert failed: ${error}`);
  return response.ms;
}

/** Both peers must hold the same rows: same record by key, same page, same count. */
async function peerCheck(gen, plt) {
  const problems = [];
  const get = async (server, path, init) =>
    JSON.parse((await timedRequest(`${server.url}${path}`, init)).text);
  const key = peerKey(Math.min(42, MODE.seedCount - 1));
  const a = (await get(gen, `/data/item/${key}`)).data;
  const b = await get(plt, `/items/${key}`);
  if (JSON.stringify(a) !== JSON.stringify(b))
    problems.push(`GET ${key}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  const pageA = (await get(gen, '/data/item?available=true&orderBy=-price&limit=100')).data;
  const pageB = await get(plt, '/items?where.available.eq=true&orderby.price=desc&limit=100');
  if (JSON.stringify(pageA) !== JSON.stringify(pageB))
    problems.push('the pages of 100 differ (records or order)');
  const countA = (await get(gen, '/entity/item/recordCounts?available=true')).data.count;
  const countB = (
    await get(plt, '/graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: '{ countItems(where: { available: { eq: true } }) { total } }',
      }),
    })
  ).data.countItems.total;
  if (countA !== countB) problems.push(`count ${countA} vs ${countB}`);
  return problems;
}

function openDb(file) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  return new Database(file, { timeout: 10_000 });
}

function journalMode(file) {
  const db = openDb(file);
  try {
    return String(db.pragma('journal_mode', { simple: true })).toUpperCase();
  } finally {
    db.close();
  }
}

/**
 * Size of a SQLite database after a checkpoint (main file + what is left in the WAL), with the
 * bytes of each table and index (dbstat).
 */
function dbFileStats(file) {
  const db = openDb(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    let objects;
    try {
      objects = db
        .prepare(
          'SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC, name',
        )
        .all();
    } catch {
      objects = undefined; // SQLite built without dbstat
    }
    const size = (f) => (existsSync(f) ? statSync(f).size : 0);
    return { bytes: size(file) + size(`${file}-wal`), objects };
  } finally {
    db.close();
  }
}

/** GET by key on a 1-entity service and on an N-entity service (same entity, same data). */
async function scalingSection() {
  const count = MODE.scalingEntities;
  log(`scaling: GET by key, 1 entity vs ${count} entities`);
  const one = await setupStep('generate + tsc synthetic-1 (cached)', () =>
    buildService('synthetic-1', writeSchema('synthetic-1.yaml', syntheticSchemaYaml(1)), {
      check: false,
      log,
    }),
  );
  const many = await setupStep(`generate + tsc synthetic-${count} (cached)`, () =>
    buildService(
      `synthetic-${count}`,
      writeSchema(`synthetic-${count}.yaml`, syntheticSchemaYaml(count)),
      { check: false, log },
    ),
  );
  const seed = MODE.scalingSeed;
  const others = 20;
  const servers = [];
  try {
    for (const [id, dir] of [
      ['one', one],
      ['many', many],
    ]) {
      const file = join(DATA, `scale-${id}.db`);
      removeDb(file);
      const server = await startServer(id, join(dir, 'dist', 'server.js'), {
        DATABASE_URL: sqliteUrl(file),
      });
      servers.push({
        id,
        label: id === 'one' ? '1 entity, E0000' : `${count} entities, E0000`,
        ...server,
      });
      for (let from = 0; from < seed; from += BATCH) {
        const records = [];
        for (let n = from; n < Math.min(seed, from + BATCH); n++)
          records.push(syntheticRecord(0, n));
        await postJson(`${server.url}/data/e0000`, JSON.stringify({ data: records }));
      }
      if (id === 'many') {
        for (let e = 1; e < count; e++) {
          const records = Array.from({ length: others }, (_, n) => syntheticRecord(e, n));
          await postJson(
            `${server.url}/data/${syntheticEntityName(e).toLowerCase()}`,
            JSON.stringify({ data: records }),
          );
        }
      }
    }
    const manyServer = servers[1];
    const targets = [
      servers[0],
      manyServer,
      { ...manyServer, id: 'spread', label: `${count} entities, random entity` },
    ];
    const operation = {
      label: 'GET by key',
      request: () => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: `/data/e0000/r${String(randomInt(seed)).padStart(7, '0')}`,
        }),
      }),
    };
    const spreadOperation = {
      label: 'GET by key',
      request: () => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: `/data/${syntheticEntityName(1 + randomInt(count - 1)).toLowerCase()}/r${String(randomInt(others)).padStart(7, '0')}`,
        }),
      }),
    };
    const runs = { one: [], many: [], spread: [] };
    for (let round = 0; round < MODE.rounds; round++) {
      for (const target of targets) {
        const op = target.id === 'spread' ? spreadOperation : operation;
        const request = op.request();
        const sampler = sampleRss(target.pid);
        const run = await loadRun(target.url, request, {
          connections: CONNECTIONS,
          seconds: MODE.seconds,
          warmupSeconds: MODE.warmupSeconds,
          pid: target.pid,
        });
        run.rssBytes = sampler.stop();
        runs[target.id].push(run);
        log(
          `  scaling · ${target.label} · round ${round + 1}: ${fmt(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, server CPU ${fmt(run.cpuUsPerRequest)} µs/req`,
        );
      }
    }
    results.sections.scaling = {
      entities: count,
      seed,
      servers: Object.fromEntries(
        targets.map((t) => [t.id, { label: t.label, ...summarizeRuns(runs[t.id]) }]),
      ),
      manyVsOne: spread(ratios(runs.many, runs.one)),
      spreadVsOne: spread(ratios(runs.spread, runs.one)),
      cpuManyVsOne: spread(cpuRatios(runs.many, runs.one)),
      cpuSpreadVsOne: spread(cpuRatios(runs.spread, runs.one)),
    };
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** Cold `entity-gen generate` wall time on synthetic schemas, and tsc on one output. */
async function generateSection() {
  log('generator: cold generate and typecheck');
  const rows = [];
  for (const size of MODE.generateSizes) {
    const schema = writeSchema(`synthetic-${size}.yaml`, syntheticSchemaYaml(size));
    const out = join(OUTPUT, `gen-timing-${size}`);
    const repeats = size >= 1000 ? 1 : MODE.generateRepeats;
    const times = [];
    let files = 0;
    let timedOut = false;
    for (let i = 0; i < repeats; i++) {
      rmSync(out, { recursive: true, force: true });
      const run = await runCommand(
        process.execPath,
        [CLI, 'generate', relative(ROOT, schema), '-o', relative(ROOT, out)],
        {
          cwd: ROOT,
          timeoutMs: GENERATE_TIMEOUT_MS,
        },
      );
      if (run.timedOut) {
        timedOut = true;
        log(`  generate ${size} entities: stopped after ${GENERATE_TIMEOUT_MS / 1000} s`);
        break;
      }
      if (run.code !== 0) throw new Error(`generate ${size} failed:\n${run.stderr}`);
      files = Number(/Generated (\d+) files/.exec(run.stdout)?.[1] ?? 0);
      times.push(run.ms / 1000);
      log(`  generate ${size} entities: ${(run.ms / 1000).toFixed(2)} s`);
    }
    const lines = timedOut ? 0 : countLines(out);
    rows.push({
      entities: size,
      seconds: spread(times),
      timedOut,
      limitSeconds: GENERATE_TIMEOUT_MS / 1000,
      files,
      lines,
    });
  }
  const regenerate = await regenerateOneEntity();
  let typecheck;
  if (MODE.typecheckEntities !== undefined) {
    const size = MODE.typecheckEntities;
    const out = join(OUTPUT, `gen-timing-${size}`);
    if (!existsSync(join(out, 'tsconfig.json'))) {
      const schema = writeSchema(`synthetic-${size}.yaml`, syntheticSchemaYaml(size));
      await runCommand(
        process.execPath,
        [CLI, 'generate', relative(ROOT, schema), '-o', relative(ROOT, out)],
        { cwd: ROOT },
      );
    }
    const run = await runCommand(process.execPath, [TSC, '-p', out, '--noEmit'], {
      cwd: ROOT,
      timeoutMs: 300_000,
    });
    typecheck = {
      entities: size,
      seconds: run.ms / 1000,
      ok: run.code === 0,
      output: run.code === 0 ? '' : run.stdout.slice(0, 2000),
    };
    log(
      `  tsc --noEmit on ${size} entities: ${(run.ms / 1000).toFixed(2)} s${run.code === 0 ? '' : ' (errors!)'}`,
    );
  }
  results.sections.generate = { rows, typecheck, regenerate };
}

/**
 * `entity-gen generate` with no arguments on a generated service after one entity of its schema
 * changed (a field added or removed, alternately): what a developer waits for on each edit.
 */
async function regenerateOneEntity() {
  const size = MODE.regenerateEntities;
  if (size === undefined) return undefined;
  const original = syntheticSchemaYaml(size);
  const name = syntheticEntityName(Math.floor(size / 2));
  const at = original.indexOf('  fields:\n', original.indexOf(`name: ${name}\n`));
  const changed = `${original.slice(0, at)}  fields:\n    - name: extra\n      type: STRING\n${original.slice(at + '  fields:\n'.length)}`;
  const schema = writeSchema(`regenerate-${size}.yaml`, original);
  const out = join(OUTPUT, `regenerate-${size}`);
  rmSync(out, { recursive: true, force: true });
  const first = await runCommand(
    process.execPath,
    [CLI, 'generate', relative(ROOT, schema), '-o', relative(ROOT, out), '--allow-data-loss'],
    { cwd: ROOT },
  );
  if (first.code !== 0) throw new Error(`generate ${size} failed:\n${first.stderr}`);
  const times = [];
  for (let i = 0; i < MODE.generateRepeats * 2; i++) {
    writeSchema(`regenerate-${size}.yaml`, i % 2 === 0 ? changed : original);
    const run = await runCommand(
      process.execPath,
      [CLI, 'generate', '-o', relative(ROOT, out), '--allow-data-loss'],
      { cwd: ROOT },
    );
    if (run.code !== 0) throw new Error(`regenerate ${size} failed:\n${run.stderr}`);
    times.push(run.ms / 1000);
    log(`  regenerate ${size} entities after one entity changed: ${(run.ms / 1000).toFixed(2)} s`);
  }
  return { entities: size, seconds: spread(times) };
}

function countLines(dir) {
  let lines = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) {
      lines += readFileSync(join(entry.parentPath ?? entry.path, entry.name), 'utf8').split(
        '\n',
      ).length;
    }
  }
  return lines;
}

/** PostgreSQL: GET by key and POST one, generated service vs hand-written Koa + pg. */
async function pgSection() {
  const driverModule = join(ROOT, 'runtime', 'dist', 'postgres', 'index.js');
  const openModule = join(ROOT, 'runtime', 'dist', 'open.js');
  const skipWith = (reason) => {
    results.sections.pg = { skipped: reason };
    log(`PostgreSQL: skipped (${reason})`);
  };
  if (!existsSync(driverModule) || !readFileSync(openModule, 'utf8').includes('postgres')) {
    return skipWith('the runtime has no PostgreSQL driver yet (runtime/dist/postgres)');
  }
  const runtimePg = await import(driverModule);
  if (typeof runtimePg.PostgresDriver !== 'function')
    return skipWith('runtime/dist/postgres does not export PostgresDriver');
  const { default: pg } = await import('pg');
  const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return skipWith(
      `PostgreSQL does not answer at ${adminUrl.replace(/:[^:@/]*@/, ':***@')}: ${error.message}`,
    );
  }
  const serviceUrl = new URL(adminUrl);
  serviceUrl.pathname = `/${PG_BENCH_DB}`;
  const servers = [];
  try {
    results.machine.postgres = (await admin.query('SHOW server_version')).rows[0].server_version;
    await admin.query(`DROP DATABASE IF EXISTS ${PG_BENCH_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${PG_BENCH_DB}`);
    log(`PostgreSQL ${results.machine.postgres}: database ${PG_BENCH_DB} created`);
    const shop = await buildService('shop', join(ROOT, 'fixtures', 'shop', 'shop.yaml'), { log });
    servers.push({
      id: 'gen',
      label: 'generated (entity-gen)',
      ...(await startServer('generated-pg', join(shop, 'dist', 'server.js'), {
        DATABASE_URL: serviceUrl.href,
      })),
    });
    await setupStep(`seed ${fmt(MODE.pgSeedCount)} PostgreSQL rows`, async () => {
      await seedCategories(servers[0].url);
      for (let from = 0; from < MODE.pgSeedCount; from += BATCH) {
        const records = [];
        for (let n = from; n < Math.min(MODE.pgSeedCount, from + BATCH); n++)
          records.push(productRecord(productCode(n), n));
        await postJson(`${servers[0].url}/data/product`, JSON.stringify({ data: records }));
      }
      await admin.query('VACUUM ANALYZE');
    });
    servers.push({
      id: 'koa',
      label: 'hand-written Koa + pg',
      ...(await startServer('koa-pg', join(BENCH, 'baselines', 'koa-pg.mjs'), {
        DATABASE_URL: serviceUrl.href,
      })),
    });
    const problems = [];
    const key = productCode(Math.min(42, MODE.pgSeedCount - 1));
    const bodies = [];
    for (const server of servers)
      bodies.push((await timedRequest(`${server.url}/data/product/${key}`)).text);
    if (bodies[0] !== bodies[1])
      problems.push(`GET by key: bodies differ:\n${bodies[0]}\n${bodies[1]}`);
    const operations = shopOperations(MODE.pgSeedCount);
    const pgResults = { seedCount: MODE.pgSeedCount, envelope: problems };
    for (const id of ['get', 'post']) {
      const runs = await interleave(servers, operations[id], { rounds: MODE.rounds });
      pgResults[id] = {
        label: operations[id].label,
        servers: Object.fromEntries(servers.map((s) => [s.id, summarizeRuns(runs[s.id])])),
        genVsKoa: spread(ratios(runs.gen, runs.koa)),
        cpuGenVsKoa: spread(cpuRatios(runs.gen, runs.koa)),
      };
    }
    // The generated service alone: the hand-written baseline inserts one record per POST.
    pgResults.bulk = await bulkSection([servers[0]], undefined, 'pg bulk');
    results.sections.pg = pgResults;
  } finally {
    for (const server of servers) await server.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${PG_BENCH_DB} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** Deep paging, offset vs cursor: bench/paging.mjs (written separately), its table included. */
async function pagingSection() {
  log('paging: node bench/paging.mjs');
  const run = await runCommand(
    process.execPath,
    [join(BENCH, 'paging.mjs'), ...(QUICK ? ['--quick'] : [])],
    { cwd: ROOT, timeoutMs: 600_000 },
  );
  results.sections.paging = {
    ok: run.code === 0,
    seconds: run.ms / 1000,
    markdown:
      run.code === 0
        ? run.stdout.trim()
        : `bench/paging.mjs failed (exit ${run.code}):\n\n\`\`\`\n${run.stderr.slice(-2000)}\n\`\`\``,
  };
}

// --- Report ---------------------------------------------------------------------------------------

function machineInfo() {
  const cpus = os.cpus();
  const git = (args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  const dirty =
    git(['status', '--porcelain', '--untracked-files=no']) === ''
      ? ''
      : ' (with uncommitted changes)';
  return {
    date: new Date().toISOString(),
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    sqlite: sqliteVersion(),
    commit: `${git(['rev-parse', '--short', 'HEAD'])}${dirty}`,
    loadAverageStart: os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' '),
    synchronous: process.env.SQLITE_SYNCHRONOUS ?? 'FULL (default)',
  };
}

function sqliteVersion() {
  try {
    const Database = createRequire(join(ROOT, 'package.json'))('better-sqlite3');
    const db = new Database(':memory:');
    const version = db.prepare('select sqlite_version()').pluck().get();
    db.close();
    return version;
  } catch {
    return 'unknown';
  }
}

const MB = 2 ** 20;
const ratioText = (s) => (Number.isFinite(s.median) ? fmtSpread(s, 2, '×') : 'n/a');
const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? '**met**' : '**missed**');

function targetRows(r) {
  const rows = [];
  const http = r.sections.http;
  const add = (target, value, ok, cpu = '') =>
    rows.push(`| ${target} | ${value} | ${verdict(ok)} | ${cpu} |`);
  if (http?.get !== undefined) {
    add(
      'GET by key ≥ 1.0× hand-written Koa + @koa/router (req/s)',
      ratioText(http.get.genVsKoa),
      http.get.genVsKoa.median >= 1.0,
      ratioText(http.get.cpuGenVsKoa),
    );
    add(
      'GET by key ≥ 0.70× raw node:http floor (req/s)',
      ratioText(http.get.genVsRaw),
      http.get.genVsRaw.median >= 0.7,
      ratioText(http.get.cpuGenVsRaw),
    );
  }
  if (http?.post !== undefined) {
    add(
      'POST one ≥ 1.0× hand-written Koa (req/s)',
      ratioText(http.post.genVsKoa),
      http.post.genVsKoa.median >= 1.0,
      ratioText(http.post.cpuGenVsKoa),
    );
  }
  if (http?.get !== undefined) {
    const rss = http.get.servers.gen.rssBytes;
    add(
      'service RSS under the GET benchmark < 150 MB',
      `${fmt(rss / MB, 0)} MB peak`,
      rss < 150 * MB,
    );
  }
  if (http?.list !== undefined) {
    // The shop fixture declares indexes: [[category, -price]], which serves this page (and the
    // baselines create the same index).
    const gen = http.list.servers.gen;
    add(
      'filtered, sorted page of 100 ≥ 3 000 req/s on SQLite (index declared)',
      `${fmtSpread(gen.rps)} req/s`,
      gen.rps.median >= 3000,
      `${fmt(gen.cpuUs.median)} µs CPU/req (${fmt(1e6 / gen.cpuUs.median)} req/s per core)`,
    );
  }
  if (http !== undefined) {
    const sync = String(r.machine.synchronous).split(' ')[0];
    for (const [id, label] of [
      ['post', 'POST one'],
      ['patch', 'PATCH one'],
    ]) {
      if (http[id] === undefined) continue;
      add(
        `${label} at ${CONNECTIONS} connections ≥ 2× hand-written Koa, synchronous=${sync} (group commit)`,
        ratioText(http[id].genVsKoa),
        sync.toUpperCase() === 'FULL' ? http[id].genVsKoa.median >= 2 : undefined,
        ratioText(http[id].cpuGenVsKoa),
      );
    }
  }
  const peer = r.sections.platformatic;
  if (peer?.http !== undefined) {
    const h = peer.http;
    const cpuText = (op) => `CPU per request ${ratioText(op.cpuGenOverPlt)} of Platformatic's`;
    add(
      'GET by key ≥ 2× Platformatic DB (req/s)',
      ratioText(h.get.genVsPlt),
      h.get.genVsPlt.median >= 2,
      cpuText(h.get),
    );
    add(
      'page of 100 (available=true, -price) ≥ 1.5× Platformatic DB (req/s)',
      ratioText(h.list.genVsPlt),
      h.list.genVsPlt.median >= 1.5,
      cpuText(h.list),
    );
    add(
      'page of 100: server CPU per page ≤ 0.7× Platformatic DB',
      ratioText(h.list.cpuGenOverPlt),
      h.list.cpuGenOverPlt.median <= 0.7,
    );
    add(
      'POST one ≥ 3× Platformatic DB (req/s)',
      ratioText(h.post.genVsPlt),
      h.post.genVsPlt.median >= 3,
      cpuText(h.post),
    );
    add(
      'count with a filter ≥ 1.5× Platformatic DB (req/s)',
      ratioText(h.count.genVsPlt),
      h.count.genVsPlt.median >= 1.5,
      cpuText(h.count),
    );
  }
  if (peer?.bulk !== undefined) {
    add(
      `${fmt(BATCH)} records in one request ≥ 10× faster than Platformatic DB`,
      `${ratioText(peer.bulk.speedup)} (${fmtSpread(peer.bulk.servers.gen.ms)} vs ${fmtSpread(peer.bulk.servers.plt.ms)} ms)`,
      peer.bulk.speedup.median >= 10,
      `CPU per request ${ratioText(peer.bulk.cpuGenOverPlt)} of Platformatic's`,
    );
  }
  if (peer?.storage !== undefined) {
    add(
      `database file after ${fmt(peer.seedCount)} bulk-inserted records ≤ 1.3× Platformatic DB's`,
      `${peer.storage.ratio.toFixed(2)}× (${fmt(peer.storage.gen.bytes / MB, 1)} MB vs ${fmt(peer.storage.plt.bytes / MB, 1)} MB)`,
      peer.storage.ratio <= 1.3,
    );
  }
  if (http?.count !== undefined) {
    add(
      'count with a filter ≥ 0.9× raw node:http floor (req/s)',
      ratioText(http.count.genVsRaw),
      http.count.genVsRaw.median >= 0.9,
      ratioText(http.count.cpuGenVsRaw),
    );
  }
  const bulk = r.sections.bulk;
  if (bulk !== undefined) {
    if (bulk.five !== undefined) {
      add(
        `${fmt(BATCH)} records of a five-field entity in one POST ≥ 100 000 records/s`,
        `${fmtSpread(bulk.five.servers.gen.recordsPerSecond)} records/s (floor ${fmtSpread(bulk.five.floor.recordsPerSecond)})`,
        bulk.five.servers.gen.recordsPerSecond.median >= 100_000,
        `floor CPU ÷ generated CPU ${ratioText(bulk.five.cpuGenVsFloor)}`,
      );
    }
    if (bulk.floor !== undefined) {
      add(
        `${fmt(BATCH)} PRODUCT records in one POST ≥ 0.5× the storage floor`,
        `${ratioText(bulk.genVsFloor)} (${fmtSpread(bulk.servers.gen.recordsPerSecond)} vs ${fmtSpread(bulk.floor.recordsPerSecond)} records/s)`,
        bulk.genVsFloor.median >= 0.5,
        ratioText(bulk.cpuGenVsFloor),
      );
    }
  }
  const pgBulk = r.sections.pg?.bulk;
  if (pgBulk !== undefined) {
    add(
      'PostgreSQL bulk insert ≥ 50 000 records/s',
      `${fmtSpread(pgBulk.servers.gen.recordsPerSecond)} records/s`,
      pgBulk.servers.gen.recordsPerSecond.median >= 50_000,
    );
  }
  const scaling = r.sections.scaling;
  if (scaling !== undefined) {
    add(
      `${scaling.entities}-entity GET by key ≥ 0.95× 1-entity`,
      ratioText(scaling.manyVsOne),
      scaling.manyVsOne.median >= 0.95,
      ratioText(scaling.cpuManyVsOne),
    );
  }
  const gen = r.sections.generate;
  if (gen !== undefined) {
    for (const [entities, limit] of [
      [100, 1.5],
      [1000, 10],
    ]) {
      const row = gen.rows.find((x) => x.entities === entities);
      if (row === undefined)
        add(`generate ${entities} entities < ${limit} s`, 'not run in this mode', undefined);
      else if (row.timedOut)
        add(
          `generate ${entities} entities < ${limit} s`,
          `> ${row.limitSeconds} s (stopped)`,
          false,
        );
      else
        add(
          `generate ${entities} entities < ${limit} s`,
          fmtSpread(row.seconds, 2, ' s'),
          row.seconds.median < limit,
        );
    }
    if (gen.regenerate !== undefined) {
      add(
        `regenerate ${gen.regenerate.entities} entities after one entity changed < 0.3 s`,
        fmtSpread(gen.regenerate.seconds, 2, ' s'),
        gen.regenerate.seconds.median < 0.3,
      );
    } else
      add(
        'regenerate 100 entities after one entity changed < 0.3 s',
        'not run in this mode',
        undefined,
      );
    if (gen.typecheck !== undefined) {
      add(
        `tsc --noEmit on the ${gen.typecheck.entities}-entity output < 20 s`,
        `${gen.typecheck.seconds.toFixed(1)} s${gen.typecheck.ok ? '' : ' (type errors!)'}`,
        gen.typecheck.ok && gen.typecheck.seconds < 20,
      );
    } else add('tsc --noEmit on the 100-entity output < 20 s', 'not run in this mode', undefined);
  }
  if (r.mode === 'quick')
    add('quick mode under 60 s', `${r.totalSeconds.toFixed(1)} s`, r.totalSeconds < 60);
  return rows;
}

function httpTable(section, ids, labels) {
  const lines = [
    '| operation | server | req/s | p50 ms | p99 ms | server CPU µs/req | server CPU busy | failed |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const op of Object.values(section)) {
    if (typeof op !== 'object' || op.servers === undefined || op.label === undefined) continue;
    for (const id of ids) {
      const s = op.servers[id];
      lines.push(
        `| ${op.label} | ${labels[id]} | ${fmtSpread(s.rps)} | ${fmtSpread(s.p50, 2)} | ${fmtSpread(s.p99, 2)} | ${fmtSpread(s.cpuUs)} | ${fmt(s.cpuShare.median * 100)}% | ${s.failures} |`,
      );
    }
  }
  return lines.join('\n');
}

function platformaticMarkdown(p) {
  const out = [`## Platformatic DB ${p.version}: the same ITEM table`, ''];
  const d = p.durability;
  if (d !== undefined)
    out.push(
      `${fmt(p.seedCount)} rows of a five-field ITEM (key, indexed name, INTEGER, DOUBLE, BOOL) with the composite index [available, -price] on both, seeded through each service's own bulk request (${fmt(BATCH)} records per request; the generated service's REST POST, Platformatic's GraphQL \`insertItems\`). SQLite durability: generated journal_mode=${d.gen.journalMode}, synchronous=${d.gen.synchronous}; Platformatic journal_mode=${d.plt.journalMode}, synchronous=${d.plt.synchronous}.`,
      '',
    );
  if (p.check !== undefined)
    out.push(
      p.check.length === 0
        ? 'Check: both answered the same record by key, the same page of 100 and the same count.'
        : `Check found differences: ${p.check.join('; ')}`,
      '',
    );
  if (p.http !== undefined) {
    out.push(
      httpTable(p.http, ['gen', 'plt'], {
        gen: 'generated',
        plt: `Platformatic DB ${p.version}`,
      }),
      '',
      '| operation | generated ÷ Platformatic (req/s) | server CPU per request, generated ÷ Platformatic | p99, generated ÷ Platformatic | peak RSS generated / Platformatic |',
      '|---|---:|---:|---:|---:|',
    );
    for (const op of Object.values(p.http))
      out.push(
        `| ${op.label} | ${ratioText(op.genVsPlt)} | ${ratioText(op.cpuGenOverPlt)} | ${ratioText(op.p99GenOverPlt)} | ${fmt(op.servers.gen.rssBytes / MB)} MB / ${fmt(op.servers.plt.rssBytes / MB)} MB |`,
      );
    out.push('');
  }
  if (p.bulk !== undefined) {
    const g = p.bulk.servers.gen;
    const q = p.bulk.servers.plt;
    out.push(
      `${fmt(BATCH)} records in one request: generated ${fmtSpread(g.ms)} ms (server CPU ${fmtSpread(g.cpuMs)} ms), Platformatic ${fmtSpread(q.ms)} ms (server CPU ${fmtSpread(q.cpuMs)} ms): ${ratioText(p.bulk.speedup)} faster, CPU ${ratioText(p.bulk.cpuGenOverPlt)} of Platformatic's.`,
      '',
    );
  }
  if (p.storage !== undefined) {
    const objects = (s) =>
      s.objects === undefined
        ? 'dbstat unavailable'
        : s.objects.map((o) => `${o.name} ${fmt(o.bytes / MB, 1)} MB`).join(', ');
    out.push(
      `Database file after the ${fmt(p.seedCount)} bulk-inserted rows (checkpointed): generated ${fmt(p.storage.gen.bytes / MB, 1)} MB (${objects(p.storage.gen)}); Platformatic ${fmt(p.storage.plt.bytes / MB, 1)} MB (${objects(p.storage.plt)}); ratio ${p.storage.ratio.toFixed(2)}×.`,
      '',
    );
  }
  out.push(
    "Semantics that differ (see docs/benchmarks.md): Platformatic's POST is an upsert (an existing key is overwritten, no 409), it keeps no version, ETag, timestamps or change events; its bulk path is a GraphQL mutation that is not atomic (a failing record leaves the earlier ones inserted); its count is a GraphQL query (POST /graphql); its page has no envelope, cursor or meta.",
    '',
  );
  return out;
}

function renderMarkdown(r) {
  const m = r.machine;
  const out = [];
  const cmd = r.mode === 'quick' ? 'npm run bench -- --quick' : 'npm run bench';
  out.push(`# entity-gen benchmark results (${r.mode} mode)`, '');
  out.push(
    `Produced by \`${cmd}\` (bench/run.mjs) on ${m.date}; total ${r.totalSeconds?.toFixed(0) ?? '?'} s. Do not edit by hand.`,
    '',
  );
  out.push('| machine | |', '|---|---|');
  out.push(
    `| CPU | ${m.cpu} |`,
    `| memory | ${m.memory} |`,
    `| OS | ${m.os} |`,
    `| Node | ${m.node} |`,
    `| SQLite | ${m.sqlite} (synchronous ${m.synchronous}, WAL) |`,
  );
  if (m.postgres !== undefined) out.push(`| PostgreSQL | ${m.postgres} |`);
  out.push(
    `| commit | ${m.commit} |`,
    `| load average (1/5/15 min) at start / end | ${m.loadAverageStart} / ${m.loadAverageEnd} |`,
  );
  const s = r.settings;
  out.push(
    '',
    `Settings: ${s.rounds} round(s) per operation, interleaved across servers (A B C A B C …), ${s.warmupSeconds} s warm-up + ${s.seconds} s measured per run (one autocannon run; responses of the warm-up window are not counted), ${s.connections} connections (autocannon), ${fmt(s.seedCount)} seeded PRODUCT rows. Figures are medians over rounds with the min–max spread in brackets; ratios are per-round ratios (same round, back to back), then the median.`,
    '',
  );

  out.push(
    '## Targets',
    '',
    'Verdicts use the measured req/s (or time) as the targets are stated. The last column gives the CPU-time view of the same ratio (server CPU per request, see below), which other processes on the machine disturb far less.',
    '',
    '| target | measured | verdict | CPU view |',
    '|---|---|---|---|',
    ...targetRows(r),
    '',
  );

  if (r.sections.envelope !== undefined) {
    out.push(
      r.sections.envelope.length === 0
        ? 'Envelope check: the generated service and both baselines gave identical JSON (and ETags) for GET by key, the page, the count, POST one, PATCH one and the error statuses.'
        : `Envelope check found differences:\n${r.sections.envelope.map((p) => `- ${p}`).join('\n')}`,
      '',
    );
  }
  const labels = { gen: 'generated', koa: 'Koa + @koa/router', raw: 'raw node:http' };
  if (r.sections.http !== undefined) {
    const http = r.sections.http;
    out.push(
      '## SQLite: generated shop service vs baselines',
      '',
      httpTable(http, ['gen', 'koa', 'raw'], labels),
      '',
    );
    out.push(
      '| operation | generated ÷ Koa (req/s) | generated ÷ raw (req/s) | Koa ÷ raw (req/s) | CPU view: Koa ÷ generated (CPU per req) | CPU view: raw ÷ generated |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const op of Object.values(http)) {
      out.push(
        `| ${op.label} | ${ratioText(op.genVsKoa)} | ${ratioText(op.genVsRaw)} | ${ratioText(op.koaVsRaw)} | ${ratioText(op.cpuGenVsKoa)} | ${ratioText(op.cpuGenVsRaw)} |`,
      );
    }
    out.push(
      '',
      'The CPU view divides the server CPU time per request (user + system, from /proc/<pid>/stat, measured window only) of the other server by that of the generated one: a throughput-equivalent ratio that other load on the machine hardly disturbs. It matches req/s only where the server is CPU-bound (GET, count); writes wait for fsync.',
      '',
    );
    if (http.get !== undefined) {
      const rss = (id) => `${fmt(http.get.servers[id].rssBytes / MB)} MB`;
      out.push(
        `Peak RSS during the GET-by-key runs: generated ${rss('gen')}, Koa ${rss('koa')}, raw ${rss('raw')}.`,
        '',
      );
    }
  }
  if (r.sections.bulk !== undefined) {
    const b = r.sections.bulk;
    out.push(
      `## ${fmt(BATCH)} records in one POST (end to end, with validation; body ${fmt(b.bodyBytes / MB, 1)} MB)`,
      '',
    );
    out.push(
      '| server | records/s | ms per request | server CPU ms per request |',
      '|---|---:|---:|---:|',
    );
    for (const [id, v] of Object.entries(b.servers))
      out.push(
        `| ${labels[id]} | ${fmtSpread(v.recordsPerSecond)} | ${fmtSpread(v.ms)} | ${fmtSpread(v.cpuMs)} |`,
      );
    if (b.floor !== undefined)
      out.push(
        `| storage floor (better-sqlite3, same rows, same table, one transaction) | ${fmtSpread(b.floor.recordsPerSecond)} | ${fmtSpread(b.floor.ms)} | ${fmtSpread(b.floor.cpuMs)} (in the runner) |`,
      );
    if (b.five !== undefined) {
      const f = b.five;
      out.push(
        `| five-field entity, generated | ${fmtSpread(f.servers.gen.recordsPerSecond)} | ${fmtSpread(f.servers.gen.ms)} | ${fmtSpread(f.servers.gen.cpuMs)} |`,
        `| five-field entity, storage floor | ${fmtSpread(f.floor.recordsPerSecond)} | ${fmtSpread(f.floor.ms)} | ${fmtSpread(f.floor.cpuMs)} (in the runner) |`,
      );
    }
    out.push(
      '',
      `Ratios (records/s): generated ÷ Koa ${ratioText(b.genVsKoa)}, generated ÷ raw ${ratioText(b.genVsRaw)}${b.genVsFloor === undefined ? '' : `, generated ÷ storage floor ${ratioText(b.genVsFloor)}`}${b.five === undefined ? '' : `; five-field generated ÷ its floor ${ratioText(b.five.genVsFloor)}`}. The storage floor inserts the rows the generated service stored (re-keyed) into the same table of the same file with better-sqlite3 directly: one prepared statement, one transaction, the same synchronous setting; no JSON, validation or change events.`,
      '',
    );
  }
  if (r.sections.platformatic !== undefined)
    out.push(...platformaticMarkdown(r.sections.platformatic));
  if (r.sections.scaling !== undefined) {
    const sc = r.sections.scaling;
    out.push(`## Scaling with schema size: GET by key, 1 vs ${sc.entities} entities`, '');
    out.push(
      `Synthetic entities of 12 fields (bench/lib/data.mjs); ${fmt(sc.seed)} records in E0000 of both services, 20 in each other entity of the big one.`,
      '',
    );
    out.push(
      '| service | req/s | p50 ms | p99 ms | server CPU µs/req | peak RSS | failed |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const v of Object.values(sc.servers)) {
      out.push(
        `| ${v.label} | ${fmtSpread(v.rps)} | ${fmtSpread(v.p50, 2)} | ${fmtSpread(v.p99, 2)} | ${fmtSpread(v.cpuUs)} | ${fmt(v.rssBytes / MB)} MB | ${v.failures} |`,
      );
    }
    out.push(
      '',
      `Ratios (req/s): ${sc.entities} entities ÷ 1 entity (same entity) ${ratioText(sc.manyVsOne)}; random entity of ${sc.entities} ÷ 1 entity ${ratioText(sc.spreadVsOne)}. CPU view (1-entity CPU per request ÷ this one's): same entity ${ratioText(sc.cpuManyVsOne)}, random entity ${ratioText(sc.cpuSpreadVsOne)}.`,
      '',
    );
  }
  if (r.sections.generate !== undefined) {
    const g = r.sections.generate;
    out.push(
      '## Generator',
      '',
      '| synthetic schema | cold `entity-gen generate` wall time | files | lines of TypeScript |',
      '|---|---:|---:|---:|',
    );
    for (const row of g.rows)
      out.push(
        `| ${row.entities} entities | ${row.timedOut ? `> ${row.limitSeconds} s (stopped)` : fmtSpread(row.seconds, 2, ' s')} | ${row.files || 'n/a'} | ${row.lines ? fmt(row.lines) : 'n/a'} |`,
      );
    if (g.regenerate !== undefined)
      out.push(
        '',
        `\`entity-gen generate\` (no arguments) on the ${g.regenerate.entities}-entity service after one entity changed (a field added or removed): ${fmtSpread(g.regenerate.seconds, 2, ' s')}.`,
      );
    if (g.typecheck !== undefined)
      out.push(
        '',
        `\`tsc --noEmit\` on the ${g.typecheck.entities}-entity output: ${g.typecheck.seconds.toFixed(1)} s${g.typecheck.ok ? '' : ` — FAILED:\n\n\`\`\`\n${g.typecheck.output}\n\`\`\``}.`,
      );
    out.push('');
  }
  if (r.sections.pg !== undefined) {
    const pg = r.sections.pg;
    out.push('## PostgreSQL: generated service vs hand-written Koa + pg', '');
    if (pg.skipped !== undefined) out.push(`Skipped: ${pg.skipped}.`, '');
    else {
      out.push(
        `${fmt(pg.seedCount)} seeded rows in a database created for the run (${PG_BENCH_DB}, dropped afterwards).`,
        '',
      );
      out.push(httpTable(pg, ['gen', 'koa'], { gen: 'generated', koa: 'Koa + pg' }), '');
      out.push(
        `Ratios (req/s): GET by key generated ÷ Koa ${ratioText(pg.get.genVsKoa)}; POST one generated ÷ Koa ${ratioText(pg.post.genVsKoa)}. CPU view (Koa ÷ generated CPU per request, service process only): GET ${ratioText(pg.get.cpuGenVsKoa)}, POST ${ratioText(pg.post.cpuGenVsKoa)}.`,
        '',
      );
      if (pg.bulk !== undefined) {
        const g = pg.bulk.servers.gen;
        out.push(
          `### ${fmt(BATCH)} records in one POST (PostgreSQL; end to end, with validation; body ${fmt(pg.bulk.bodyBytes / MB, 1)} MB)`,
          '',
          '| server | records/s | ms per request | server CPU ms per request |',
          '|---|---:|---:|---:|',
          `| generated | ${fmtSpread(g.recordsPerSecond)} | ${fmtSpread(g.ms)} | ${fmtSpread(g.cpuMs)} |`,
          '',
        );
      }
      if (pg.envelope.length > 0)
        out.push(`Envelope check found differences: ${pg.envelope.join('; ')}`, '');
    }
  }
  if (r.sections.paging !== undefined) {
    out.push(
      '## Deep paging (bench/paging.mjs)',
      '',
      r.sections.paging.markdown.replace(/^#+ .*\n+/, ''),
      '',
    );
  }
  if (r.setup !== undefined && r.setup.length > 0) {
    const total = r.setup.reduce((sum, step) => sum + step.seconds, 0);
    out.push(
      '## Setup time (not measured)',
      '',
      `${total.toFixed(1)} s of the ${r.totalSeconds?.toFixed(0)} s: ${r.setup.map((step) => `${step.what} ${step.seconds.toFixed(1)} s`).join('; ')}.`,
      '',
    );
  }
  if (r.notes.length > 0) out.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  return `${out.join('\n')}\n`;
}

// Run last, once every module-level constant above is initialized.
try {
  await main();
} catch (error) {
  killAll();
  console.error(error);
  process.exitCode = 1;
}
