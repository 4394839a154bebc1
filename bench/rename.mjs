// Regeneration after a rename (`renamedFrom`) on the 100-entity synthetic schema: cold
// `entity-gen generate` processes, each on a fresh copy of the same generated service, so that
// every run does the same work. Writes bench/results/rename.md and rename.json.
//
//   node bench/rename.mjs               3 runs per scenario
//   node bench/rename.mjs --runs=5
//   node bench/rename.mjs --cpu-prof    also one profiled run per scenario
//                                       (bench/output/rename-100/profiles/<scenario>/)
//   node bench/rename.mjs --only=field,entity
//
// Scenarios: one field rename, one entity rename, a field rename in every entity, each with the
// starter hooks files untouched (as the generator wrote them) and again with every hooks file
// edited to use the renamed field, so that the codemod rewrites and the type check checks them.
// The last scenario runs after the one before it on the same folder: its type check starts from
// the cache the first one left (node_modules/.cache/entity-gen/typecheck.json).
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { syntheticEntityName, syntheticSchemaYaml } from './lib/data.mjs';
import { runCommand } from './lib/servers.mjs';
import { CLI, ensureBuilt, OUTPUT, RESULTS, ROOT } from './lib/setup.mjs';
import { spread } from './lib/stats.mjs';

const args = process.argv.slice(2);
const option = (name) => args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
const RUNS = Number(option('runs') ?? 3);
const PROFILE = args.includes('--cpu-prof');
const ONLY = option('only')?.split(',');
const SIZE = 100;
const WORK = join(OUTPUT, `rename-${SIZE}`);
const PROBE = join(WORK, 'cpu-probe.mjs');

const log = (line) => process.stdout.write(`${line}\n`);

/** The schema with field `name` of entity `index` renamed to `title`. */
function renameField(schema, index, from = 'name', to = 'title') {
  const at = schema.indexOf(`  name: ${syntheticEntityName(index)}\n`);
  const field = schema.indexOf(`    - name: ${from}\n`, at);
  let end = field + `    - name: ${from}\n`.length;
  // A field renamed before: its earlier `renamedFrom` gives way to the new one.
  if (schema.startsWith('      renamedFrom: ', end)) end = schema.indexOf('\n', end) + 1;
  return `${schema.slice(0, field)}    - name: ${to}\n      renamedFrom: ${from}\n${schema.slice(end)}`;
}

function renameEntity(schema, index) {
  const name = syntheticEntityName(index);
  return schema.replace(`  name: ${name}\n`, `  name: R${name}\n  renamedFrom: ${name}\n`);
}

/** Every hooks file uses the entity's `name` field (a before-insert hook that trims it). */
function editHooks(folder) {
  const dir = join(folder, 'src', 'hooks');
  for (const file of readdirSync(dir)) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    const edited = text.replace(
      '  // beforeInsert(record, ctx) { return record; },',
      '  beforeInsert(record) {\n    return { ...record, name: record.name.trim() };\n  },',
    );
    if (edited === text) throw new Error(`${path}: not the starter file`);
    writeFileSync(path, edited);
  }
}

const base = syntheticSchemaYaml(SIZE);
const middle = Math.floor(SIZE / 2);
let all = base;
for (let e = 0; e < SIZE; e++) all = renameField(all, e);
const SCENARIOS = [
  { id: 'field', label: 'one field rename', schema: renameField(base, middle) },
  { id: 'entity', label: 'one entity rename', schema: renameEntity(base, middle) },
  { id: 'all', label: 'a field rename in every entity', schema: all },
  {
    id: 'field-edited',
    label: 'one field rename, every hooks file uses the field',
    schema: renameField(base, middle),
    edited: true,
  },
  {
    id: 'entity-edited',
    label: 'one entity rename, every hooks file uses its fields',
    schema: renameEntity(base, middle),
    edited: true,
  },
  {
    id: 'all-edited',
    label: 'a field rename in every entity, every hooks file uses the field',
    schema: all,
    edited: true,
  },
  {
    id: 'after-all-edited',
    label: 'then one more field rename (type check from its cache)',
    schema: renameField(all, middle, 'title', 'label'),
    edited: true,
    after: 'all',
  },
].filter((scenario) => ONLY === undefined || ONLY.includes(scenario.id));

async function generate(folder, schemaFile, extra = []) {
  const run = await runCommand(
    process.execPath,
    [
      '--import',
      PROBE,
      ...extra,
      CLI,
      'generate',
      relative(ROOT, schemaFile),
      '-o',
      relative(ROOT, folder),
    ],
    { cwd: ROOT },
  );
  if (run.code !== 0) throw new Error(`generate failed:\n${run.stdout}\n${run.stderr}`);
  const cpu = /cpu-probe (\{.*\})/.exec(run.stderr);
  const usage = cpu === null ? undefined : JSON.parse(cpu[1]);
  return {
    seconds: run.ms / 1000,
    cpuSeconds: usage === undefined ? undefined : (usage.user + usage.system) / 1e6,
    stdout: run.stdout,
  };
}

async function main() {
  await ensureBuilt({ log });
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  // CPU time of the CLI process (main thread and worker; Biome's process is not counted).
  writeFileSync(
    PROBE,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the probe's source holds a template literal
    "process.on('exit', () => process.stderr.write(`\\ncpu-probe ${JSON.stringify(process.cpuUsage())}\\n`));\n",
  );
  const schemaFile = join(WORK, 'schema.yaml');
  writeFileSync(schemaFile, base);
  const pristine = join(WORK, 'pristine');
  await generate(pristine, schemaFile);
  const edited = join(WORK, 'pristine-edited');
  cpSync(pristine, edited, { recursive: true });
  editHooks(edited);
  const started = new Date();
  const load = loadavg();
  const rows = [];
  for (const scenario of SCENARIOS) {
    const times = [];
    const cpu = [];
    let summary = '';
    const runOnce = async (extra = []) => {
      const folder = join(WORK, 'svc');
      rmSync(folder, { recursive: true, force: true });
      cpSync(scenario.edited ? edited : pristine, folder, { recursive: true });
      if (scenario.after !== undefined) {
        writeFileSync(schemaFile, SCENARIOS.find((s) => s.id === scenario.after)?.schema ?? all);
        await generate(folder, schemaFile);
      }
      writeFileSync(schemaFile, scenario.schema);
      const run = await generate(folder, schemaFile, extra);
      summary = run.stdout.split('\n')[0];
      const changes = /Your code follows the renames \((\d+) changes?\)/.exec(run.stdout);
      const errors = /does not compile against the generated code \((\d+) errors?\)/.exec(
        run.stdout,
      );
      if (errors !== null) throw new Error(`${scenario.id}: type errors\n${run.stdout}`);
      summary += changes === null ? ' No rewrite.' : ` ${changes[1]} places rewritten.`;
      return run;
    };
    for (let i = 0; i < RUNS; i++) {
      const run = await runOnce();
      times.push(run.seconds);
      if (run.cpuSeconds !== undefined) cpu.push(run.cpuSeconds);
      log(`  ${scenario.id}: ${run.seconds.toFixed(2)} s (CPU ${run.cpuSeconds?.toFixed(2)} s)`);
    }
    if (PROFILE) {
      const dir = join(WORK, 'profiles', scenario.id);
      await runOnce(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      log(`  ${scenario.id}: profile in ${relative(ROOT, dir)}`);
    }
    rows.push({
      ...scenario,
      schema: undefined,
      seconds: spread(times),
      cpuSeconds: spread(cpu),
      summary,
    });
  }
  const result = {
    date: started.toISOString(),
    node: process.version,
    cpus: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    loadAverage: { start: load, end: loadavg() },
    runs: RUNS,
    rows,
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'rename.json'), `${JSON.stringify(result, null, 2)}\n`);
  const fmt = (s) => `${s.median.toFixed(2)} s (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  const lines = [
    '# entity-gen: regeneration after a rename',
    '',
    `Produced by \`node bench/rename.mjs\` on ${result.date}; ${RUNS} cold runs per scenario. Do not edit by hand.`,
    '',
    `Node ${result.node}, ${result.cpus}, ${result.memoryGiB} GiB; load average (1/5/15 min) at start ${load.map((n) => n.toFixed(2)).join(' ')}, at end ${result.loadAverage.end.map((n) => n.toFixed(2)).join(' ')}.`,
    '',
    `Synthetic schema of ${SIZE} entities (bench/lib/data.mjs); each run is a cold \`entity-gen generate\` on a fresh copy of the generated service. Wall time, and CPU time of the CLI process (main thread and worker thread; not Biome's formatter process). Median (min–max).`,
    '',
    '| scenario | wall | CPU | output |',
    '|---|---:|---:|---|',
    ...rows.map(
      (row) =>
        `| ${row.label} | ${fmt(row.seconds)} | ${row.cpuSeconds.median === undefined ? '' : fmt(row.cpuSeconds)} | ${row.summary} |`,
    ),
    '',
  ];
  writeFileSync(join(RESULTS, 'rename.md'), lines.join('\n'));
  log(lines.join('\n'));
  if (!existsSync(join(RESULTS, 'rename.md'))) process.exitCode = 1;
}

await main();
