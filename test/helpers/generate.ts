import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, type GeneratedFile } from '../../cli/generate/index.js';
import type { SchemaSource } from '../../cli/schema/types.js';
import { writeFiles } from '../../cli/write.js';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Folder for generated services during tests (git-ignored). */
export const OUTPUT = join(ROOT, 'test', 'output');

/** A valid fixture: its schema files relative to the repository root, and the output folder name. */
export interface Fixture {
  readonly name: string;
  readonly schemas: readonly string[];
  /** A REST configuration file, relative to the repository root. */
  readonly restConfig?: string;
}

/** Every valid fixture; each has golden files under `test/golden/<name>/`. */
export const FIXTURES: readonly Fixture[] = [
  { name: 'shop', schemas: ['fixtures/shop/shop.yaml'] },
  {
    name: 'shop-rest',
    schemas: ['fixtures/shop/shop.yaml'],
    restConfig: 'fixtures/shop/restconfig.yaml',
  },
  { name: 'composite-key', schemas: ['fixtures/composite-key/schema.json'] },
  { name: 'integer-key', schemas: ['fixtures/integer-key/schema.yaml'] },
  { name: 'gemini', schemas: ['fixtures/gemini/schema.json'] },
  { name: 'listing', schemas: ['fixtures/listing/schema.yaml'] },
];

/** Reads a fixture's schema files as the CLI would, with names relative to the repository. */
export async function fixtureSources(fixture: Fixture): Promise<SchemaSource[]> {
  return Promise.all(
    fixture.schemas.map(async (file) => ({ file, text: await readFile(join(ROOT, file), 'utf8') })),
  );
}

/** Generates a fixture in memory, failing on diagnostics. */
export async function generateFixture(fixture: Fixture): Promise<readonly GeneratedFile[]> {
  const restConfig =
    fixture.restConfig === undefined
      ? undefined
      : { file: fixture.restConfig, text: await readFile(join(ROOT, fixture.restConfig), 'utf8') };
  const result = await generate(
    await fixtureSources(fixture),
    { schemaFiles: fixture.schemas, outputDir: `${fixture.name}-service` },
    restConfig,
  );
  if (result.diagnostics.length > 0) {
    throw new Error(
      `fixture ${fixture.name} is invalid:\n${JSON.stringify(result.diagnostics, null, 2)}`,
    );
  }
  return result.files;
}

/** Generates a fixture into `test/output/<folder>` (emptied first) and returns that folder. */
export async function generateFixtureInto(fixture: Fixture, folder: string): Promise<string> {
  const dir = join(OUTPUT, folder);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFiles(dir, await generateFixture(fixture));
  return dir;
}

export function fixtureNamed(name: string): Fixture {
  const fixture = FIXTURES.find((candidate) => candidate.name === name);
  if (fixture === undefined) throw new Error(`no fixture ${name}`);
  return fixture;
}
