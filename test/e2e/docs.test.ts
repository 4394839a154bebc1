/**
 * Every example of README.md and docs/*.md that shows a command and what it printed runs here
 * and must print the same. HTTP examples run with curl against a service generated from the
 * example's fixture (booted once per page and service, so the examples of a page build on each
 * other, as a reader running them in order would see); CLI examples run the built `entity-gen`.
 * Only values that differ on every run are normalised, by name: times (`…TimeUnix`, `…TimeISO`,
 * `timeUnix`, `timeISO`), the cursor `next` (a later command using the page's cursor gets the
 * real one), `schemaHash`, and the `Date` and `X-Request-Id` headers.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { authFromEnv } from '@entity-gen/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { allExamples, fences, serviceFiles, type Example } from '../helpers/docs.js';
import { OUTPUT, ROOT, type Fixture } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

const exec = promisify(execFile);

/** The JWT secret the README's access example exports. */
const JWT_SECRET = '0123456789abcdef0123456789abcdef';

/** How each named service of the pages is made. */
const SERVICES: Record<string, () => Promise<Fixture & { jwt?: boolean }>> = {
  // README's 30-second example: the schema is the page's own `# catalog.yaml` block.
  catalog: async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const block = fences('README.md', readme).find((fence) => fence.lines[0] === '# catalog.yaml');
    if (block === undefined) throw new Error('README.md has no # catalog.yaml block');
    await mkdir(join(OUTPUT, 'docs'), { recursive: true });
    await writeFile(join(OUTPUT, 'docs', 'catalog.yaml'), `${block.lines.join('\n')}\n`);
    return { name: 'catalog', schemas: ['test/output/docs/catalog.yaml'] };
  },
  shop: async () => ({ name: 'shop', schemas: ['fixtures/shop/shop.yaml'] }),
  'shop-access': async () => ({
    name: 'shop-access',
    schemas: ['fixtures/shop/shop.yaml'],
    access: 'fixtures/shop/access.yaml',
    jwt: true,
  }),
  'shop-restconfig': async () => ({
    name: 'shop-restconfig',
    schemas: ['fixtures/shop/shop.yaml'],
    restConfig: 'fixtures/restconfig/valid/shop.yaml',
  }),
  references: async () => ({ name: 'references', schemas: ['fixtures/references/schema.yaml'] }),
};

/** Where an example's commands run: a base URL for curl, a scratch folder for the CLI. */
interface Target {
  readonly baseUrl: string | undefined;
  readonly cwd: string;
  /** Commands that set shell variables (`export X=…`, `X=$(…)`), repeated before each command. */
  readonly prelude: string[];
  /** Cursors shown on the page → the ones the service issued. */
  readonly cursors: Map<string, string>;
  close(): Promise<void>;
}

const targets = new Map<string, Promise<Target>>();

async function targetFor(file: string, service: string): Promise<Target> {
  const key = `${file}:${service}`;
  let target = targets.get(key);
  if (target === undefined) {
    target = makeTarget(`docs-${file.replace(/[/.]/g, '-')}-${service}`, service, file);
    targets.set(key, target);
  }
  return target;
}

async function makeTarget(folder: string, service: string, page: string): Promise<Target> {
  const cwd = join(OUTPUT, folder, 'cwd');
  await rm(join(OUTPUT, folder), { recursive: true, force: true });
  await mkdir(cwd, { recursive: true });
  // The CLI examples name the repository's fixtures relative to the working directory.
  await symlink(join(ROOT, 'fixtures'), join(cwd, 'fixtures'));
  if (service === 'cli') {
    return {
      baseUrl: undefined,
      cwd,
      prelude: [],
      cursors: new Map(),
      close: async () => undefined,
    };
  }
  const make = SERVICES[service];
  if (make === undefined) throw new Error(`no service ${service} for the docs test`);
  const fixture = await make();
  // Files the page shows for the service (its hooks), written before it boots.
  const files = serviceFiles(page, await readFile(join(ROOT, page), 'utf8'))
    .filter((shown) => shown.service === service)
    .map((shown) => [shown.path, shown.contents]);
  const booted: BootedService = await bootFixture(fixture, {
    folder: join(folder, 'service'),
    files: Object.fromEntries(files),
    ...(fixture.jwt === true ? { auth: await authFromEnv({ JWT_SECRET }) } : {}),
  });
  return { baseUrl: booted.url, cwd, prelude: [], cursors: new Map(), close: booted.close };
}

afterAll(async () => {
  for (const target of targets.values()) await (await target).close();
});

/** Runs one command of a page in bash, as a reader would; answers stdout and stderr together. */
async function run(target: Target, command: string): Promise<string> {
  let text = command;
  if (target.baseUrl !== undefined) {
    text = text.replaceAll('localhost:8080', target.baseUrl.replace('http://', ''));
  }
  for (const [shown, real] of target.cursors) text = text.replaceAll(shown, real);
  text = text.replaceAll(
    'npx entity-gen',
    `node ${JSON.stringify(join(ROOT, 'dist', 'cli', 'main.js'))}`,
  );
  const script = ['exec 2>&1', ...target.prelude, text].join('\n');
  try {
    const { stdout } = await exec('bash', ['-c', script], {
      cwd: target.cwd,
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 60_000,
    });
    return stdout;
  } catch (error) {
    // A CLI example may show a failing run (exit 1): its output is what counts.
    const failed = error as { stdout?: string; killed?: boolean };
    if (failed.killed === true || failed.stdout === undefined) throw error;
    return failed.stdout;
  }
}

/** Keys whose values depend on the run: write times, and the times the server sets (SPEC §16). */
const TIME_KEY = /^((last\w*Time|time)(Unix|ISO)|createdAt|updatedAt)$/;

/** A JSON value with its run-dependent values replaced; cursors are paired up in `cursors`. */
function normaliseJson(value: unknown, other: unknown, cursors: Map<string, string>): unknown {
  if (Array.isArray(value)) {
    return value.map((item, index) =>
      normaliseJson(item, Array.isArray(other) ? other[index] : undefined, cursors),
    );
  }
  if (value === null || typeof value !== 'object') return value;
  const otherRecord = (other ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (TIME_KEY.test(key)) return [key, '<time>'];
      if (key === 'schemaHash') return [key, '<hash>'];
      if (key === 'next' && typeof item === 'string') {
        const paired = otherRecord[key];
        if (typeof paired === 'string') cursors.set(item, paired);
        return [key, '<cursor>'];
      }
      return [key, normaliseJson(item, otherRecord[key], cursors)];
    }),
  );
}

/** One line: parsed and normalised when it is JSON (times, cursors, hashes), else as it is. */
function normaliseLine(line: string, other: string | undefined, cursors: Map<string, string>) {
  const trimmed = line.trimEnd();
  if (!/^[[{]/.test(trimmed)) return trimmed;
  let parsed: unknown;
  let paired: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
  try {
    paired = other === undefined ? undefined : JSON.parse(other);
  } catch {
    paired = undefined;
  }
  return JSON.stringify(normaliseJson(parsed, paired, cursors));
}

/** Headers left out of the comparison: they differ on every request. */
const VOLATILE_HEADERS = new Set(['date', 'x-request-id']);

/**
 * The output as compared. An HTTP answer (`curl -i`) keeps its status line, the headers the page
 * shows (others are left out on the page) and its body.
 */
function compared(
  shown: string,
  actual: string,
  target: Target,
): { shown: string; actual: string } {
  const actualLines = actual.replaceAll('\r\n', '\n').replace(/\n+$/, '').split('\n');
  const shownLines = shown.split('\n');
  if (/^HTTP\/1\.1 \d{3}/.test(shownLines[0] ?? '')) {
    const shownBlank = shownLines.indexOf('');
    const actualBlank = actualLines.indexOf('');
    const shownHeaders = shownLines.slice(1, shownBlank === -1 ? undefined : shownBlank);
    const names = new Set(shownHeaders.map((line) => line.split(':')[0]?.toLowerCase()));
    const actualHeaders = actualLines
      .slice(1, actualBlank === -1 ? undefined : actualBlank)
      .filter((line) => names.has(line.split(':')[0]?.toLowerCase()))
      .filter((line) => !VOLATILE_HEADERS.has(line.split(':')[0]?.toLowerCase() ?? ''));
    const shownBody = shownBlank === -1 ? [] : shownLines.slice(shownBlank + 1);
    const actualBody = actualBlank === -1 ? [] : actualLines.slice(actualBlank + 1);
    return {
      shown: [
        shownLines[0],
        ...shownHeaders.filter((l) => !VOLATILE_HEADERS.has(l.split(':')[0]?.toLowerCase() ?? '')),
        '',
        ...shownBody.map((line, i) => normaliseLine(line, actualBody[i], target.cursors)),
      ].join('\n'),
      actual: [
        actualLines[0],
        ...actualHeaders,
        '',
        ...actualBody.map((line) => normaliseLine(line, undefined, new Map())),
      ].join('\n'),
    };
  }
  return {
    shown: shownLines
      .map((line, i) => normaliseLine(line, actualLines[i], target.cursors))
      .join('\n'),
    actual: actualLines.map((line) => normaliseLine(line, undefined, new Map())).join('\n'),
  };
}

const ASSIGNMENT = /^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=/;

async function runExample(example: Example): Promise<void> {
  if (example.service === undefined) return;
  const target = await targetFor(example.file, example.service);
  for (const step of example.steps) {
    const actual = await run(target, step.command);
    if (ASSIGNMENT.test(step.command) && step.output === '') {
      target.prelude.push(step.command);
      continue;
    }
    // A command shown without its output (a write the next ones build on) must only succeed.
    if (step.output === '') continue;
    if (step.format === 'json') {
      const got = normaliseJson(JSON.parse(actual), undefined, new Map());
      const expected = normaliseJson(JSON.parse(step.output), undefined, target.cursors);
      expect(got, `${example.file}:${example.line}: ${step.command}`).toEqual(expected);
      continue;
    }
    const { shown, actual: got } = compared(step.output, actual, target);
    expect(got, `${example.file}:${example.line}: $ ${step.command}`).toBe(shown);
  }
}

const EXAMPLES = allExamples();

describe('the examples of the docs run and print what the docs show', () => {
  it('every example names what it runs against, or why it is not run', () => {
    const unmarked = EXAMPLES.filter((e) => e.service === undefined && e.skip === undefined);
    expect(unmarked.map((e) => `${e.file}:${e.line}`)).toEqual([]);
  });

  // Files run in sequence and examples in page order: later examples build on earlier ones.
  for (const example of EXAMPLES) {
    const name = `${example.file}:${example.line}`;
    if (example.skip !== undefined) it.skip(`${name} (not run: ${example.skip})`, () => undefined);
    else it(name, () => runExample(example));
  }
});
