#!/usr/bin/env node
// /health latency while 8 clients run full-scan counts on SQLite (the reliability target:
// /health p95 < 100 ms with 100 000 rows). Compares the SQLite readers (list and count in worker
// threads, the default) with SQLITE_READERS=0 (everything on the event loop).
//
//   node bench/health.mjs            100 000 PRODUCT records, 10 s of load per mode
//   node bench/health.mjs --quick    20 000 records, 4 s per mode
//
// Needs `npm run build`. Generates the shop fixture into bench/output/health/service, compiles
// it, seeds a SQLite file through POST /data/product, then for each mode starts the service on
// 127.0.0.1, runs 8 loops of GET /entity/product/recordCounts?name[CONTAINS]=… (a full scan: no
// index serves CONTAINS) and meanwhile one loop of GET /health, and prints the /health latency
// percentiles and the counts done. It asserts no timing.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'bench', 'output', 'health');
const SERVICE = join(OUT, 'service');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const QUICK = process.argv.includes('--quick');
const RECORDS = QUICK ? 20_000 : 100_000;
const SECONDS = QUICK ? 4 : 10;
const CLIENTS = 8;

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer`);
}

async function start(env) {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: SERVICE,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      DATABASE_URL: `sqlite:${join(OUT, 'health.db')}`,
      QUERY_TIMEOUT_MS: '60000',
      ...env,
    },
    stdio: 'inherit',
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/health`);
  return {
    base,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(mode, env) {
  const service = await start(env);
  const stopAt = performance.now() + SECONDS * 1000;
  let counts = 0;
  const loads = Array.from({ length: CLIENTS }, async (_, n) => {
    while (performance.now() < stopAt) {
      const response = await fetch(
        `${service.base}/entity/product/recordCounts?name[CONTAINS]=zz${n}`,
      );
      await response.text();
      counts++;
    }
  });
  const latencies = [];
  while (performance.now() < stopAt) {
    const t0 = performance.now();
    const response = await fetch(`${service.base}/health`);
    await response.text();
    latencies.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await Promise.all(loads);
  await service.stop();
  latencies.sort((a, b) => a - b);
  const ms = (value) => `${value.toFixed(1)} ms`;
  return `| ${mode} | ${latencies.length} | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 95))} | ${ms(latencies.at(-1))} | ${counts} |`;
}

async function main() {
  rmSync(OUT, { recursive: true, force: true });
  const generated = spawnSync(
    process.execPath,
    [
      CLI,
      'generate',
      'fixtures/shop/shop.yaml',
      '-o',
      SERVICE,
      '--runtime-spec',
      'file:../../../../runtime',
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (generated.status !== 0) throw new Error('generate failed');
  const built = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json'], {
    cwd: SERVICE,
    stdio: 'inherit',
  });
  if (built.status !== 0 || !existsSync(join(SERVICE, 'dist', 'server.js')))
    throw new Error('build failed');
  const seeder = await start({});
  // PRODUCT.category has onDelete: RESTRICT: the categories the products name exist first.
  const categories = await fetch(`${seeder.base}/data/category`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: Array.from({ length: 50 }, (_, n) => ({ name: `c${n}` })) }),
  });
  if (!categories.ok) throw new Error(`seeding failed: ${await categories.text()}`);
  for (let first = 0; first < RECORDS; first += 5000) {
    const data = Array.from({ length: Math.min(5000, RECORDS - first) }, (_, i) => ({
      code: `p${first + i}`,
      name: `Product ${first + i} ${'lorem ipsum '.repeat(3)}`,
      price: (first + i) % 1000,
      category: `c${(first + i) % 50}`,
    }));
    const response = await fetch(`${seeder.base}/data/product`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data }),
    });
    if (!response.ok) throw new Error(`seeding failed: ${await response.text()}`);
  }
  await seeder.stop();
  const rows = [
    await measure('readers (default: counts in 2 worker threads)', {}),
    await measure('SQLITE_READERS=0 (counts on the event loop)', { SQLITE_READERS: '0' }),
  ];
  console.log(
    [
      `/health while ${CLIENTS} clients run full-scan counts (CONTAINS) on ${RECORDS.toLocaleString('en')} PRODUCT rows, ${SECONDS} s per mode, SQLite, ${os.cpus().length} CPUs, Node ${process.version}:`,
      '',
      '| mode | /health requests | p50 | p95 | max | counts done |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
