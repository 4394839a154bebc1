#!/usr/bin/env node
// CPU profiles of the generator and of the generated service under load, summarized (top self
// time by function and by package) into bench/results/profile.md; the .cpuprofile files stay in
// bench/output/profiles (open them in Chrome DevTools or speedscope).
//
//   node bench/profile.mjs [--only=generate,service] [--ops=get,list,post,count,patch,bulk]
//                          [--seconds=4] [--entities=100] [--large=1000]
//
// The service profiles cover the generated service, the hand-written Koa baseline and (for the
// operations it serves) the raw node:http floor, one profile per server and operation.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { profileMarkdown, summarizeProfile } from './lib/cpuprofile.mjs';
import { loadRun } from './lib/load.mjs';
import { productRecord, syntheticSchemaYaml } from './lib/data.mjs';
import { killAll, runCommand, startServer } from './lib/servers.mjs';
import {
  BATCH,
  BENCH,
  buildService,
  CLI,
  copyDb,
  DATA,
  ensureBuilt,
  OUTPUT,
  postJson,
  RESULTS,
  ROOT,
  seedShopDb,
  shopOperations,
  sqliteUrl,
  writeSchema,
} from './lib/setup.mjs';

const argv = process.argv.slice(2);
const option = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const only = option('only')?.split(',') ?? ['generate', 'service'];
/** Service operations to profile (`list` is the filtered, sorted page of 100). */
const OPS = option('ops')?.split(',') ?? ['get', 'post', 'count', 'patch', 'bulk'];
const SECONDS = Number(option('seconds') ?? 4);
const ENTITIES = Number(option('entities') ?? 100);
const SEED = 100_000;
const PROFILES = join(OUTPUT, 'profiles');
const log = (...parts) => console.log('[profile]', ...parts);

/** Frames whose inclusive time tells where the generator spends its time. */
const GENERATOR_GROUPS = [
  ['prettier (all of it)', /prettier\//],
  ['prettier markdown plugin (README.md)', /prettier\/plugins\/markdown/],
  ['prettier typescript/estree plugins (.ts files)', /prettier\/plugins\/(typescript|estree)/],
  ['ts-morph + TypeScript compiler (types.ts)', /(ts-morph|@ts-morph\/common)\//],
  ['json-schema-to-typescript (types.ts)', /json-schema-to-typescript\//],
  ['handlebars templates', /handlebars\//],
  ['yaml parser', /yaml\/dist/],
  [
    'schema validation + normalize (entity-gen)',
    /^(loadSchemas|normalize|validateEntityDocument) /,
  ],
  [
    'module loading (compile of JS source)',
    /^(compileFunction|wrapSafe|compileSourceTextModule|link|instantiate)\b/,
  ],
];
const SERVICE_GROUPS = [
  ['koa + @koa/router', / (koa|@koa\/router|koa-compose)\//],
  ['@entity-gen/runtime (includes SQLite calls made from it)', / runtime\/dist\//],
  ['better-sqlite3 transactions (incl. COMMIT + fsync)', / better-sqlite3\//],
  ['pino logger', / pino\//],
  ['better-sqlite3 statements (get/all/run)', /^(get|all|run|iterate) \(native\)$/],
  ['JSON.stringify / JSON.parse', /^(stringify|parse) \(native\)$/],
  ['raw-sqlite baseline handler', / bench\/baselines\/(raw-sqlite|common)\.mjs/],
  ['node:http / net / streams', /node:(_http|http|net|internal\/streams|internal\/http)/],
];

/**
 * Areas of the service's self time, for "where the time goes" (first match wins). Native calls
 * made from JavaScript (a SQLite statement, JSON.stringify) count as self time of the calling
 * function, so statement execution is in the driver's or the baseline's area, serialization in
 * the function that serializes.
 */
const SERVICE_AREAS = [
  ['socket writes (writev, native)', (f) => f.where === '' && /^write/.test(f.name)],
  ['GC', (f) => f.name === '(garbage collector)'],
  ['runtime: GET fast path (http/fast-get)', (f) => /^runtime\/dist\/http\/fast-get/.test(f.where)],
  [
    'runtime: error middleware, request id (http/errors)',
    (f) => /^runtime\/dist\/http\/errors/.test(f.where),
  ],
  [
    'runtime: dispatch, entity routers (service, routes)',
    (f) => /^runtime\/dist\/(service|routes)\.js/.test(f.where),
  ],
  [
    'runtime: getRecord, ETag, owner check (operations, auth)',
    (f) => /^runtime\/dist\/(operations|auth\/)/.test(f.where),
  ],
  ['runtime: envelope + JSON (envelope)', (f) => /^runtime\/dist\/envelope/.test(f.where)],
  [
    'runtime: SQLite get incl. statement execution (sqlite/driver, server)',
    (f) => /^runtime\/dist\/(sqlite\/driver|server)\.js/.test(f.where),
  ],
  [
    'runtime: row → record (sqlite/schema, convert, definition)',
    (f) => /^runtime\/dist\/(sqlite\/schema|convert|definition|record)\.js/.test(f.where),
  ],
  ['runtime: other', (f) => /^runtime\/dist\//.test(f.where)],
  [
    'baseline: handler incl. statement execution + JSON',
    (f) => /^bench\/baselines\/(raw|koa)-sqlite/.test(f.where),
  ],
  [
    'baseline: row → record, envelope (common.mjs)',
    (f) => /^bench\/baselines\/common/.test(f.where),
  ],
  ['pino logger', (f) => /^(pino|sonic-boom)\//.test(f.where)],
  ['better-sqlite3 (JS part)', (f) => /^better-sqlite3\//.test(f.where)],
  [
    'Koa, @koa/router and their helper packages',
    (f) =>
      f.where !== '' &&
      !f.where.startsWith('node:') &&
      /^(@[^/]+\/)?[^/]+\/[^:]*\.m?js:/.test(f.where) &&
      !/^(runtime|bench|dist)\//.test(f.where),
  ],
  ['node:http, net, streams, timers (JS)', (f) => f.where.startsWith('node:')],
  ['other (program, native, microtasks)', () => true],
];

/** Self time by area (SERVICE_AREAS): ms, share, and µs per request answered. */
function areaMarkdown(summary, requests) {
  const totals = new Map(SERVICE_AREAS.map(([label]) => [label, 0]));
  for (const f of summary.functions) {
    const [label] = SERVICE_AREAS.find(([, test]) => test(f));
    totals.set(label, totals.get(label) + f.selfMs);
  }
  const lines = ['| area (self time) | ms | % | µs per request |', '|---|---:|---:|---:|'];
  for (const [label, ms] of totals) {
    if (ms === 0) continue;
    const perRequest = requests > 0 ? ((ms * 1000) / requests).toFixed(1) : 'n/a';
    lines.push(
      `| ${label} | ${ms.toFixed(0)} | ${((100 * ms) / summary.totalMs).toFixed(1)} | ${perRequest} |`,
    );
  }
  const total = requests > 0 ? ((summary.totalMs * 1000) / requests).toFixed(1) : 'n/a';
  lines.push(`| **total** | ${summary.totalMs.toFixed(0)} | 100 | ${total} |`);
  return lines.join('\n');
}

/** Median wall time of a cold `node -e "await import(<module>)"` minus that of an empty script. */
async function importCosts(out) {
  const modules = [
    'ts-morph',
    'prettier',
    'json-schema-to-typescript',
    'handlebars',
    'yaml',
    'commander',
  ];
  const time = async (code) => {
    const runs = [];
    for (let i = 0; i < 3; i++)
      runs.push(
        (await runCommand(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT })).ms,
      );
    return runs.sort((a, b) => a - b)[1];
  };
  const empty = await time('0');
  out.push(
    '## Generator dependencies: cold import cost',
    '',
    `Median of 3 cold processes, minus an empty \`node\` process (${empty.toFixed(0)} ms).`,
    '',
    '| module | import ms |',
    '|---|---:|',
  );
  for (const name of modules)
    out.push(`| ${name} | ${((await time(`await import('${name}')`)) - empty).toFixed(0)} |`);
  const cli = (await runCommand(process.execPath, [CLI, '--version'], { cwd: ROOT })).ms;
  out.push(
    `| \`entity-gen --version\` (whole CLI, eager imports) | ${(cli - empty).toFixed(0)} |`,
    '',
  );
}

async function profileGenerator(out) {
  mkdirSync(PROFILES, { recursive: true });
  log('import costs');
  await importCosts(out);
  for (const size of [
    1,
    ENTITIES,
    ...(option('large') === undefined ? [] : [Number(option('large'))]),
  ]) {
    const schema = writeSchema(`synthetic-${size}.yaml`, syntheticSchemaYaml(size));
    const dir = join(PROFILES, `generate-${size}`);
    rmSync(dir, { recursive: true, force: true });
    const target = join(OUTPUT, `profile-gen-${size}`);
    rmSync(target, { recursive: true, force: true });
    log(`generate ${size} entities with --cpu-prof`);
    const run = await runCommand(
      process.execPath,
      [
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        CLI,
        'generate',
        relative(ROOT, schema),
        '-o',
        relative(ROOT, target),
      ],
      { cwd: ROOT },
    );
    if (run.code !== 0) throw new Error(run.stderr);
    const file = join(dir, readdirSync(dir)[0]);
    out.push(
      `## Generator: \`entity-gen generate\` on ${size} synthetic entit${size === 1 ? 'y' : 'ies'} (wall ${(run.ms / 1000).toFixed(2)} s with the profiler on)`,
      '',
      `Profile: \`${relative(ROOT, file)}\``,
      '',
      profileMarkdown(summarizeProfile(file), { top: 20, inclusive: GENERATOR_GROUPS }),
      '',
    );
  }
}

async function profileService(out) {
  const shop = await buildService('shop', join(ROOT, 'fixtures', 'shop', 'shop.yaml'), { log });
  const seedDb = await seedShopDb(shop, SEED, { log });
  const operations = shopOperations(SEED);
  const targets = [
    ['generated', join(shop, 'dist', 'server.js'), (file) => ({ DATABASE_URL: sqliteUrl(file) })],
    ['koa', join(BENCH, 'baselines', 'koa-sqlite.mjs'), (file) => ({ DATABASE_FILE: file })],
    ['raw', join(BENCH, 'baselines', 'raw-sqlite.mjs'), (file) => ({ DATABASE_FILE: file })],
  ];
  for (const op of OPS) {
    for (const [name, script, env] of targets) {
      const dir = join(PROFILES, `${name}-${op}`);
      rmSync(dir, { recursive: true, force: true });
      const db = copyDb(seedDb, join(DATA, `profile-${name}.db`));
      const server = await startServer(name, script, env(db), {
        nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      });
      let what;
      let requests = 0;
      try {
        if (op === 'bulk') {
          const times = [];
          for (let b = 0; b < 6; b++) {
            const records = Array.from({ length: BATCH }, (_, i) =>
              productRecord(`PB${b}-${i}`, i),
            );
            times.push(
              (await postJson(`${server.url}/data/product`, JSON.stringify({ data: records }))).ms,
            );
          }
          what = `6 POSTs of ${BATCH} records: ${times.map((t) => t.toFixed(0)).join(', ')} ms`;
        } else {
          const run = await loadRun(server.url, operations[op].request(`${name}p`), {
            connections: 50,
            seconds: SECONDS,
            // Every request counts (the profile covers the warm-up too): µs per request below.
            warmupSeconds: 0,
          });
          requests = run.ok;
          what = `${operations[op].label}, ${SECONDS} s at 50 connections: ${run.rps.toFixed(0)} req/s (slowed down by the profiler)`;
        }
      } finally {
        await server.stop();
      }
      const file = join(dir, readdirSync(dir)[0]);
      log(`${name} ${op}: ${what}`);
      const summary = summarizeProfile(file);
      out.push(
        `## Service (${name}): ${what}`,
        '',
        `Profile: \`${relative(ROOT, file)}\``,
        '',
        areaMarkdown(summary, requests),
        '',
        profileMarkdown(summary, { top: 20, inclusive: SERVICE_GROUPS }),
        '',
      );
    }
  }
}

try {
  await ensureBuilt({ log });
  const out = [
    '# CPU profiles',
    '',
    `Produced by \`node bench/profile.mjs\` on ${new Date().toISOString()}. Self time is the time a function spends in its own code (for a native call such as a SQLite statement, the JS function that made the call); "inclusive" counts every sample whose stack contains a matching frame (async stacks are cut at each await, so inclusive figures are lower bounds, and groups overlap: in the service, the runtime's handlers run inside Koa's middleware frames).`,
    '',
  ];
  if (only.includes('generate')) await profileGenerator(out);
  if (only.includes('service')) await profileService(out);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'profile.md'), `${out.join('\n')}\n`);
  log(`wrote ${relative(ROOT, join(RESULTS, 'profile.md'))}`);
} catch (error) {
  killAll();
  console.error(error);
  process.exitCode = 1;
}
