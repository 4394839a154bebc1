/**
 * A regeneration whose plan rewrites and moves the user's files (SPEC §10) is written all or
 * nothing, like any other: when writing fails part-way, the generated files AND the user's files
 * are as they were before the run (the writer's journal covers both).
 */
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { planChanges } from '../../cli/plan/index.js';
import { prepareGeneration, type GenerationRequest } from '../../cli/run/prepare.js';
import { applyChanges, type FileChanges } from '../../cli/run/write.js';
import { OUTPUT } from '../helpers/generate.js';
import { failing, snapshot } from '../helpers/write.js';

/** The case that renames the entity and a field: user files are rewritten, one is moved. */
const CASE = join(dirname(fileURLToPath(import.meta.url)), 'cases', 'both');
const SVC = join(OUTPUT, 'codemod-rollback', 'svc');

const request = (schema: string): GenerationRequest => ({
  schemaFiles: [join(CASE, schema)],
  outputDir: SVC,
  force: false,
  allowDataLoss: false,
});

/** What the renaming regeneration writes and deletes, planned against the service as it is. */
let changes: FileChanges;

beforeEach(async () => {
  await rm(dirname(SVC), { recursive: true, force: true });
  await mkdir(SVC, { recursive: true });
  const first = await prepareGeneration(request('before.yaml'));
  expect(first.diagnostics).toEqual([]);
  await applyChanges(SVC, planChanges(first.plan!));
  await cp(join(CASE, 'before'), SVC, { recursive: true });
  const second = await prepareGeneration(request('after.yaml'));
  expect(second.diagnostics).toEqual([]);
  expect(second.plan?.userCode?.edits.length).toBe(2);
  changes = planChanges(second.plan!);
  // The plan touches both kinds of files: generated modules and the user's (one moved).
  const written = changes.writes.map((file) => file.path);
  expect(written).toEqual(
    expect.arrayContaining([
      'src/entities/article/types.ts',
      '.entity-gen/manifest.json',
      'src/lib/pricing.ts',
      'src/hooks/article.ts',
    ]),
  );
  expect(changes.deletes).toEqual(
    expect.arrayContaining(['src/entities/product/types.ts', 'src/hooks/product.ts']),
  );
}, 60_000);

describe('a failed write of a regeneration with codemod edits', () => {
  it('leaves generated and user files as they were when the last file cannot be put in place', async () => {
    const before = await snapshot(SVC);
    // Every file to delete is gone and every other staged file is in place when this fails.
    const broken = failing('rename', changes.writes.length);
    await expect(applyChanges(SVC, changes, broken)).rejects.toThrow('injected rename failure');
    expect(await snapshot(SVC)).toEqual(before);
  });

  it('leaves generated and user files as they were when a folder appeared where the moved hooks go', async () => {
    // Appeared after the plan was made, e.g. by another process while the run was writing.
    await mkdir(join(SVC, 'src', 'hooks', 'article.ts'));
    await writeFile(join(SVC, 'src', 'hooks', 'article.ts', 'notes.txt'), 'in the way\n');
    const before = await snapshot(SVC);
    await expect(applyChanges(SVC, changes)).rejects.toThrow();
    expect(await snapshot(SVC)).toEqual(before);
  });
});
