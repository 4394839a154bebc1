#!/usr/bin/env node
// Start-up of the built CLI with and without Node's module compile cache (cli/compile-cache.ts:
// Node 22.1 and later; on Node 20 both modes are the same program).
//
//   node bench/cli-startup.mjs                       the Node that runs this script
//   node bench/cli-startup.mjs --node=/path/to/node  each --node given (repeatable)
//   --runs=N                                         runs per command and mode (default 15)
//
// Needs `npm run build`. For each Node it times, as wall time and CPU time of the whole process,
// `entity-gen --version` (loading the program) and `entity-gen generate` of the shop fixture into
// an empty folder (the program, the generator and its worker thread, which loads
// json-schema-to-typescript). The two modes alternate run by run, so that a change of the
// machine's load hits both alike: "on" is the CLI as users run it (it enables the cache in its
// default folder, under TMPDIR, here a folder of this run, filled by one run before the timed
// ones: what every start after the first finds), "off" the same with NODE_DISABLE_COMPILE_CACHE=1.
// Prints a Markdown table, with the number of files the cache holds; asserts no timing. The CPU
// time is measured by a module preloaded with --import (see REPORT_CPU).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const SCHEMA = join(ROOT, 'fixtures', 'shop', 'shop.yaml');
const option = (name) =>
  process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.split('=')[1]);
const NODES = option('node').length > 0 ? option('node') : [process.execPath];
const RUNS = Number(option('runs')[0] ?? 15);

const work = mkdtempSync(join(tmpdir(), 'entity-gen-startup-'));

/**
 * Preloaded into each timed process: at its exit it writes the CPU time it used, all threads
 * (user + system, ms), to the file STARTUP_CPU_FILE names. CPU time moves less than wall time when
 * other work shares the machine.
 */
const REPORT_CPU = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs';" +
    "process.on('exit', () => { const u = process.cpuUsage();" +
    ' writeFileSync(process.env.STARTUP_CPU_FILE, String((u.user + u.system) / 1000)); });',
)}`;

function run(node, args, env) {
  const cpuFile = join(work, 'cpu.txt');
  const started = performance.now();
  const result = spawnSync(node, ['--import', REPORT_CPU, CLI, ...args], {
    cwd: work,
    env: { ...env, STARTUP_CPU_FILE: cpuFile },
    encoding: 'utf8',
  });
  const wall = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`${node} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { wall, cpu: Number(readFileSync(cpuFile, 'utf8')) };
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
  return { median: at(0.5), low: at(0.25), high: at(0.75) };
}

const format = ({ median, low, high }) =>
  `${median.toFixed(0)} ms (${low.toFixed(0)}–${high.toFixed(0)})`;

const COMMANDS = [
  { label: '`entity-gen --version`', args: () => ['--version'] },
  {
    label: '`entity-gen generate shop.yaml`',
    args: (n) => {
      const out = join(work, `svc-${n}`);
      rmSync(out, { recursive: true, force: true });
      return ['generate', SCHEMA, '-o', out, '--driver', 'sqlite'];
    },
  },
];

const rows = [];
const temporaries = [];
try {
  for (const node of NODES) {
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    // Outside `work`: the generator formats in a folder under TMPDIR, which must not lie inside
    // the folder the services are generated into (Biome would find their configuration).
    const temporary = mkdtempSync(join(tmpdir(), 'entity-gen-startup-tmp-'));
    temporaries.push(temporary);
    const base = { ...process.env, TMPDIR: temporary };
    delete base.NODE_COMPILE_CACHE;
    delete base.NODE_DISABLE_COMPILE_CACHE;
    const modes = {
      off: { ...base, NODE_DISABLE_COMPILE_CACHE: '1' },
      on: base,
    };
    for (const command of COMMANDS) {
      const times = { off: [], on: [] };
      let n = 0;
      // Not timed: fills the cache (and the file system's) as an earlier start would have.
      for (const env of Object.values(modes)) run(node, command.args(n++), env);
      for (let i = 0; i < RUNS; i++)
        for (const [mode, env] of Object.entries(modes))
          times[mode].push(run(node, command.args(n++), env));
      const wall = {
        off: stats(times.off.map((t) => t.wall)),
        on: stats(times.on.map((t) => t.wall)),
      };
      const cpu = {
        off: stats(times.off.map((t) => t.cpu)),
        on: stats(times.on.map((t) => t.cpu)),
      };
      const ratio = ({ off, on }) => `${(on.median / off.median).toFixed(2)}×`;
      const cached = join(temporary, 'node-compile-cache');
      const files = existsSync(cached) ? readdirSync(cached, { recursive: true }).length : 0;
      rows.push(
        `| ${version} | ${command.label} | ${format(wall.off)} | ${format(wall.on)} | ${ratio(wall)} | ${format(cpu.off)} | ${format(cpu.on)} | ${ratio(cpu)} | ${files} |`,
      );
      console.error(`${rows.at(-1)}`);
    }
  }
} finally {
  for (const folder of [work, ...temporaries]) rmSync(folder, { recursive: true, force: true });
}

console.log(
  `Runs per command and mode: ${RUNS}; median (interquartile range) of the wall time and of the CPU time (all threads).\n`,
);
console.log(
  '| Node | command | wall, cache off | wall, cache on | on ÷ off | CPU, cache off | CPU, cache on | on ÷ off | files in the cache |',
);
console.log(
  '| ---- | ------- | --------------: | -------------: | -------: | -------------: | ------------: | -------: | -----------------: |',
);
for (const row of rows) console.log(row);
