import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, type GenerateResult, type GeneratedFile } from '../../cli/generate/index.js';
import { EMPTY_OUTPUT, planChanges, planOutput, type Plan } from '../../cli/plan/index.js';
import type { SchemaSource } from '../../cli/schema/types.js';
import { applyChanges } from '../../cli/run/write.js';

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
  /** An access file, relative to the repository root. */
  readonly access?: string;
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
  // Gemini's test schema with a REST configuration shaped like a Gemini application's.
  {
    name: 'gemini-rest',
    schemas: ['fixtures/gemini/schema.json'],
    restConfig: 'fixtures/gemini/restconfig.yaml',
  },
  // Entities left one method or none by their REST configuration.
  {
    name: 'rest-edges',
    schemas: ['fixtures/rest-edges/schema.yaml'],
    restConfig: 'fixtures/rest-edges/restconfig.yaml',
  },
  { name: 'listing', schemas: ['fixtures/listing/schema.yaml'] },
  // Entity and field names that clash with the names generated code uses.
  { name: 'names', schemas: ['fixtures/names/schema.yaml'] },
  {
    name: 'access',
    schemas: ['fixtures/access/schema.yaml'],
    access: 'fixtures/access/access.yaml',
  },
  // References that keep their integrity: every onDelete rule, scalar, ARRAY and in a key.
  { name: 'references', schemas: ['fixtures/references/schema.yaml'] },
  // Field constraints: every kind, top-level, nested and on array elements.
  { name: 'constraints', schemas: ['fixtures/constraints/schema.yaml'] },
  // Soft delete: entities that keep deleted records, with references between them.
  { name: 'soft-delete', schemas: ['fixtures/soft-delete/schema.yaml'] },
  // Unique fields and combinations.
  { name: 'field-rules', schemas: ['fixtures/field-rules/schema.yaml'] },
  // Full-text search: a searchable entity and one that is not.
  { name: 'search', schemas: ['fixtures/search/schema.yaml'] },
];

/** Reads a fixture's schema files as the CLI would, with names relative to the repository. */
export async function fixtureSources(fixture: Fixture): Promise<SchemaSource[]> {
  return Promise.all(
    fixture.schemas.map(async (file) => ({ file, text: await readFile(join(ROOT, file), 'utf8') })),
  );
}

/** Generates a fixture in memory, failing on diagnostics. */
export async function generateFixture(fixture: Fixture): Promise<readonly GeneratedFile[]> {
  return (await generateFixtureResult(fixture)).files;
}

/** Generates a fixture in memory (files and model), failing on diagnostics. */
export async function generateFixtureResult(
  fixture: Fixture,
): Promise<GenerateResult & { readonly model: NonNullable<GenerateResult['model']> }> {
  const restConfig =
    fixture.restConfig === undefined
      ? undefined
      : { file: fixture.restConfig, text: await readFile(join(ROOT, fixture.restConfig), 'utf8') };
  const access =
    fixture.access === undefined
      ? undefined
      : { file: fixture.access, text: await readFile(join(ROOT, fixture.access), 'utf8') };
  const result = await generate({
    sources: await fixtureSources(fixture),
    options: { schemaFiles: fixture.schemas, outputDir: `${fixture.name}-service` },
    ...(restConfig === undefined ? {} : { restConfig }),
    ...(access === undefined ? {} : { access }),
  });
  if (result.diagnostics.length > 0 || result.model === undefined) {
    throw new Error(
      `fixture ${fixture.name} is invalid:\n${JSON.stringify(result.diagnostics, null, 2)}`,
    );
  }
  return { ...result, model: result.model };
}

/** The plan of generating a fixture into an empty folder: every file and the manifest created. */
export async function planFixtureFromScratch(fixture: Fixture): Promise<Plan> {
  return planOutput(await generateFixtureResult(fixture), EMPTY_OUTPUT, { force: false });
}

/**
 * Generates a fixture into `test/output/<folder>` (emptied first) as `entity-gen generate` does —
 * generated files, the user's starter files and the manifest — and returns that folder.
 */
export async function generateFixtureInto(fixture: Fixture, folder: string): Promise<string> {
  const dir = join(OUTPUT, folder);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await applyChanges(dir, planChanges(await planFixtureFromScratch(fixture)));
  return dir;
}

export function fixtureNamed(name: string): Fixture {
  const fixture = FIXTURES.find((candidate) => candidate.name === name);
  if (fixture === undefined) throw new Error(`no fixture ${name}`);
  return fixture;
}
