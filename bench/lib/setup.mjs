// Shared set-up of the runner (run.mjs) and the profiler (profile.mjs): paths, building the
// project and the generated services, seeding, and the shop operations as autocannon requests.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CATEGORY_COUNT,
  categoryName,
  categoryRecords,
  productCode,
  productRecord,
} from './data.mjs';
import { timedRequest } from './load.mjs';
import { runCommand, startServer } from './servers.mjs';
import { performance } from 'node:perf_hooks';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BENCH = join(ROOT, 'bench');
export const OUTPUT = join(BENCH, 'output');
export const DATA = join(OUTPUT, 'data');
export const RESULTS = join(BENCH, 'results');
export const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
/** Records per bulk POST (seeding and the bulk benchmark). */
export const BATCH = 10_000;

const quiet = () => undefined;

function newestMtime(dir, filter) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path, filter));
    else if (filter(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds runtime/dist and dist/cli when missing, or older than their sources (unless `build` is
 * false). Returns 'fresh', 'built' or 'stale' (older than the sources, not rebuilt).
 */
export async function ensureBuilt({ build: allowBuild = true, log = quiet } = {}) {
  const outputs = [join(ROOT, 'runtime', 'dist', 'index.js'), CLI];
  const missing = outputs.some((file) => !existsSync(file));
  const sources = Math.max(
    newestMtime(join(ROOT, 'runtime', 'src'), (n) => n.endsWith('.ts')),
    newestMtime(join(ROOT, 'cli'), (n) => n.endsWith('.ts')),
  );
  const stale = !missing && Math.min(...outputs.map((file) => statSync(file).mtimeMs)) < sources;
  if (!missing && !stale) return 'fresh';
  if (!missing && !allowBuild) return 'stale';
  log(
    missing
      ? 'building (dist missing): npm run build'
      : 'sources changed since the last build: npm run build',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = await runCommand(npm, ['run', 'build'], { cwd: ROOT });
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  return 'built';
}

/** Hash of what a generated service's code depends on: the schema, the CLI and its templates. */
function generatorStamp(schemaText, mode) {
  const hash = createHash('sha256').update(schemaText).update(mode);
  const add = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath ?? entry.path, entry.name);
      // Contents, not mtimes: `npm test` (pretest) rebuilds dist/cli with new mtimes all the time.
      hash.update(`${relative(ROOT, path)}\n`).update(readFileSync(path));
    }
  };
  // runtime/dist is loaded when the service starts, so a runtime change needs no regeneration.
  add(join(ROOT, 'dist', 'cli'));
  add(join(ROOT, 'templates'));
  return hash.digest('hex');
}

/**
 * Generates `schemaFile` into bench/output/<name> and compiles it with tsc (full type check, or
 * `--noCheck` for the big synthetic services). Skipped when nothing it depends on changed since
 * the last run (a stamp file records that).
 */
export async function buildService(name, schemaFile, { check = true, log = quiet } = {}) {
  const dir = join(OUTPUT, name);
  const stampFile = join(dir, '.bench-stamp');
  const stamp = generatorStamp(readFileSync(schemaFile, 'utf8'), check ? 'check' : 'nocheck');
  if (
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === stamp &&
    existsSync(join(dir, 'dist', 'server.js'))
  )
    return dir;
  rmSync(dir, { recursive: true, force: true });
  log(`generating ${relative(ROOT, dir)} from ${relative(ROOT, schemaFile)}`);
  const generated = await runCommand(
    process.execPath,
    [CLI, 'generate', relative(ROOT, schemaFile), '-o', relative(ROOT, dir)],
    { cwd: ROOT },
  );
  if (generated.code !== 0)
    throw new Error(`entity-gen generate failed:\n${generated.stdout}\n${generated.stderr}`);
  const compiled = await runCommand(
    process.execPath,
    [TSC, '-p', dir, ...(check ? [] : ['--noCheck'])],
    { cwd: ROOT },
  );
  if (compiled.code !== 0)
    throw new Error(`tsc -p ${dir} failed:\n${compiled.stdout}\n${compiled.stderr}`);
  writeFileSync(stampFile, stamp);
  return dir;
}

export function writeSchema(name, text) {
  const file = join(OUTPUT, 'schemas', name);
  mkdirSync(dirname(file), { recursive: true });
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text);
  return file;
}

export function sqliteUrl(file) {
  return `sqlite:${file}`;
}

export function removeDb(file) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}

export async function postJson(url, body) {
  const response = await timedRequest(url, { method: 'POST', body });
  if (response.status !== 200)
    throw new Error(`POST ${url} answered ${response.status}: ${response.text.slice(0, 500)}`);
  return response;
}

export const randomInt = (n) => Math.floor(Math.random() * n);
let uniqueCounter = 0;

/** autocannon request definitions of the shop operations, keyed by operation id. */
export function shopOperations(seedCount) {
  return {
    get: {
      label: 'GET by key (random key)',
      request: () => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: `/data/product/${productCode(randomInt(seedCount))}`,
        }),
      }),
    },
    list: {
      label: 'GET filtered + sorted page of 100',
      request: () => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: `/data/product?category=${categoryName(randomInt(CATEGORY_COUNT))}&orderBy=-price&limit=100`,
        }),
      }),
    },
    count: {
      label: 'count with a filter',
      request: () => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: `/entity/product/recordCounts?category=${categoryName(randomInt(CATEGORY_COUNT))}`,
        }),
      }),
    },
    patch: {
      label: 'PATCH one (random key)',
      request: () => ({
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => ({
          ...req,
          path: `/data/product/${productCode(randomInt(seedCount))}`,
          body: JSON.stringify({ data: { stock: randomInt(1000), status: 'ACTIVE' } }),
        }),
      }),
    },
    post: {
      label: 'POST one',
      request: (tag) => ({
        method: 'POST',
        path: '/data/product',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const n = uniqueCounter++;
          return { ...req, body: JSON.stringify({ data: productRecord(`N${tag}${n}`, n) }) };
        },
      }),
    },
  };
}

/** Inserts the categories the seeded products name (`categoryRecords`) into the service at `url`. */
export async function seedCategories(url) {
  await postJson(`${url}/data/category`, JSON.stringify({ data: categoryRecords() }));
}

/**
 * A SQLite file holding the categories and `count` PRODUCT records, inserted through the
 * generated shop service in POSTs of 10 000 (cached between runs; the service is stopped, so the
 * WAL is checkpointed).
 */
export async function seedShopDb(shopDir, count, { log = quiet, onSeeded = quiet } = {}) {
  const seedDb = join(DATA, `seed-${count}.db`);
  const mark = `${seedDb}.done`;
  // The seeded file depends on the data and on the SQLite layout, not on the generator.
  const layout = join(ROOT, 'runtime', 'dist', 'sqlite', 'schema.js');
  const stamp = createHash('sha256')
    .update(`${count}\n`)
    .update(readFileSync(join(BENCH, 'lib', 'data.mjs')))
    .update(existsSync(layout) ? readFileSync(layout) : '')
    .digest('hex');
  if (existsSync(mark) && readFileSync(mark, 'utf8') === stamp && existsSync(seedDb)) return seedDb;
  mkdirSync(DATA, { recursive: true });
  removeDb(seedDb);
  rmSync(mark, { force: true });
  log(`seeding ${count} PRODUCT records through the generated service`);
  const started = performance.now();
  const seeder = await startServer('seed', join(shopDir, 'dist', 'server.js'), {
    DATABASE_URL: sqliteUrl(seedDb),
  });
  try {
    await seedCategories(seeder.url);
    for (let from = 0; from < count; from += BATCH) {
      const records = [];
      for (let n = from; n < Math.min(count, from + BATCH); n++)
        records.push(productRecord(productCode(n), n));
      await postJson(`${seeder.url}/data/product`, JSON.stringify({ data: records }));
    }
  } finally {
    await seeder.stop();
  }
  writeFileSync(mark, stamp);
  onSeeded((performance.now() - started) / 1000);
  return seedDb;
}

/** A fresh copy of a database file (its -wal/-shm removed first). */
export function copyDb(from, to) {
  removeDb(to);
  copyFileSync(from, to);
  return to;
}
