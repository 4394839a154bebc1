import { describe, expect, it } from 'vitest';
import {
  CACHE_PATH,
  generate,
  type GeneratedFile,
  type PreviousOutput,
} from '../../cli/generate/index.js';
import {
  contentHash,
  type Invocation,
  MANIFEST_PATH,
  parseManifest,
  renderManifest,
} from '../../cli/manifest/index.js';
import type { ServiceModel } from '../../cli/model/types.js';
import type { MigrationStep } from '../../cli/migrate/plan.js';
import type { SchemaRename } from '../../cli/migrate/index.js';
import {
  EMPTY_OUTPUT,
  isUpToDate,
  planChanges,
  planOutput,
  type OutputSnapshot,
  type Plan,
} from '../../cli/plan/index.js';

/**
 * How a test generates: these tests are about file ownership, so schema changes that drop data
 * are allowed and the migrations planner does not stop them (its own rules are tested at the end).
 */
interface Options {
  readonly force: boolean;
  readonly allowDataLoss: boolean;
  readonly invocation?: Invocation;
}
const OPTIONS: Options = { force: false, allowDataLoss: true };

const THING = `type: ENTITY
entity:
  name: THING
  lk: [id]
  fields:
    - { name: id, type: STRING, required: true }
    - { name: label, type: STRING }
`;
const WIDGET = `type: ENTITY
entity:
  name: WIDGET
  lk: [code]
  fields:
    - { name: code, type: STRING, required: true }
`;

interface Generated {
  readonly files: readonly GeneratedFile[];
  readonly model: ServiceModel;
  readonly migrationSteps: readonly MigrationStep[];
  readonly renames: readonly SchemaRename[];
}

/** Generates `documents` as one schema file, over `folder` (the previous generation) if given. */
async function generatedOver(
  folder: ReadonlyMap<string, string> | undefined,
  options: Partial<Options>,
  ...documents: string[]
): Promise<Generated & { readonly diagnostics: readonly unknown[] }> {
  const result = await generate({
    sources: [{ file: 'schema.yaml', text: documents.join('---\n') }],
    options: { schemaFiles: ['schema.yaml'], outputDir: 'svc' },
    ...(folder === undefined ? {} : { previous: previousOf(folder) }),
    allowDataLoss: options.allowDataLoss ?? OPTIONS.allowDataLoss,
    ...(options.invocation === undefined ? {} : { invocation: options.invocation }),
  });
  return { ...result, model: result.model as ServiceModel };
}

/** Generates `documents` into an empty folder. */
async function generated(...documents: string[]): Promise<Generated> {
  const generation = await generatedOver(undefined, {}, ...documents);
  if (generation.diagnostics.length > 0) throw new Error(JSON.stringify(generation.diagnostics));
  return generation;
}

/**
 * Plans generating `documents` over `folder`, as `generate` does; a generation that stops (the
 * migrations planner refused) plans nothing and reports its diagnostics.
 */
async function planFor(
  folder: ReadonlyMap<string, string>,
  options: Partial<Options>,
  ...documents: string[]
): Promise<Plan> {
  const generation = await generatedOver(folder, options, ...documents);
  if (generation.diagnostics.length > 0) {
    return {
      files: [],
      conflicts: [],
      blocked: true,
      diagnostics: generation.diagnostics as Plan['diagnostics'],
      migrationSteps: [],
      renames: [],
      notes: [],
    };
  }
  return planOutput(generation, snapshotOf(folder), { force: options.force ?? OPTIONS.force });
}

/** What `generate` learns about a folder before generating into it. */
function previousOf(folder: ReadonlyMap<string, string>): PreviousOutput {
  const snapshot = snapshotOf(folder);
  const manifest =
    snapshot.manifest === undefined ? undefined : parseManifest(snapshot.manifest).manifest;
  return {
    ...(manifest === undefined ? {} : { manifest }),
    migrationFiles: snapshot.migrationFiles,
    files: snapshot.files,
  };
}

/** The folder as a generation from scratch leaves it. */
function written(generation: Generated): Map<string, string> {
  const files = new Map<string, string>();
  for (const write of planChanges(planOutput(generation, EMPTY_OUTPUT, { force: false })).writes)
    files.set(write.path, write.contents);
  return files;
}

/**
 * A snapshot of a folder given as path → contents (the manifest and the generator's cache taken
 * from their entries).
 */
function snapshotOf(folder: ReadonlyMap<string, string>): OutputSnapshot {
  const files = new Map(folder);
  const manifest = files.get(MANIFEST_PATH);
  const cache = files.get(CACHE_PATH);
  files.delete(MANIFEST_PATH);
  files.delete(CACHE_PATH);
  const names = (dir: string): string[] =>
    [...files.keys()]
      .filter((path) => path.startsWith(`${dir}/`) && !path.slice(dir.length + 1).includes('/'))
      .map((path) => path.slice(dir.length + 1))
      .sort();
  return {
    manifest,
    ...(cache === undefined ? {} : { cache }),
    files,
    migrationFiles: names('migrations'),
    hooksFiles: names('src/hooks').map((name) => `src/hooks/${name}`),
  };
}

function actionOf(plan: Plan, path: string): string | undefined {
  return plan.files.find((file) => file.path === path)?.action;
}

function actions(plan: Plan, action: string): string[] {
  return plan.files.filter((file) => file.action === action).map((file) => file.path);
}

describe('planOutput', () => {
  it('creates every file and the manifest in an empty folder', async () => {
    const generation = await generated(THING);
    const plan = planOutput(generation, EMPTY_OUTPUT, OPTIONS);
    expect(plan.blocked).toBe(false);
    expect(actions(plan, 'create')).toEqual([
      MANIFEST_PATH,
      '.gitignore',
      'README.md',
      'openapi.json',
      'package.json',
      'src/app.ts',
      'src/client.ts',
      'src/entities/thing/client.ts',
      'src/entities/thing/definition.ts',
      'src/entities/thing/routes.ts',
      'src/entities/thing/types.ts',
      'src/hooks/thing.ts',
      'src/server.ts',
      'src/service.ts',
      'tsconfig.json',
    ]);
    expect(isUpToDate(plan)).toBe(false);
  });

  it('records the invocation after format, and reads a manifest of an older entity-gen', async () => {
    const invocation = {
      schemas: ['../schema.yaml'],
      runtimeSpec: 'file:../runtime',
      driver: 'sqlite',
    };
    const generation = await generatedOver(undefined, { invocation }, WIDGET);
    const text = written(generation).get(MANIFEST_PATH) ?? '';
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['format', 'invocation', 'schemaHash', 'schema', 'files']);
    expect(parsed['invocation']).toEqual(invocation);
    const old = JSON.stringify({ ...parsed, invocation: undefined, generator: '0.0.1' });
    const plan = planOutput(generation, { ...EMPTY_OUTPUT, manifest: old }, OPTIONS);
    expect(plan.diagnostics).toEqual([]);
  });

  it('writes the manifest in the agreed format: keys in order, files sorted, 2 spaces, newline', async () => {
    const generation = await generated(WIDGET, THING);
    const text = written(generation).get(MANIFEST_PATH) ?? '';
    expect(text.endsWith('}\n')).toBe(true);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['format', 'schemaHash', 'schema', 'files']);
    expect(parsed['format']).toBe(1);
    // No generator version: a newer entity-gen writing the same files changes nothing.
    expect(parsed['generator']).toBeUndefined();
    expect(parsed['schemaHash']).toBe(generation.model.hash);
    expect(parsed['schema']).toEqual(generation.model.entities.map((entity) => entity.document));
    expect(
      (parsed['schema'] as { entity: { name: string } }[]).map((doc) => doc.entity.name),
    ).toEqual(['THING', 'WIDGET']);
    const files = parsed['files'] as Record<string, string>;
    const owned = generation.files.filter((file) => file.owner === 'generator');
    expect(Object.keys(files)).toEqual(owned.map((file) => file.path).sort());
    for (const file of owned) expect(files[file.path]).toBe(contentHash(file.contents));
    expect(files).not.toHaveProperty(['src/server.ts']);
    expect(files).not.toHaveProperty(['src/hooks/thing.ts']);
    expect(text).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
    expect(renderManifest(parseManifest(text).manifest!)).toBe(text);
  });

  it('is up to date right after a generation', async () => {
    const plan = await planFor(written(await generated(THING)), {}, THING);
    expect(isUpToDate(plan)).toBe(true);
    expect(planChanges(plan)).toEqual({ writes: [], deletes: [] });
    expect(actions(plan, 'keep')).toEqual(['.gitignore', 'src/hooks/thing.ts', 'src/server.ts']);
  });

  it('writes the generator cache when it is missing, and nothing else; it counts as no change', async () => {
    const folder = written(await generated(THING));
    expect(folder.has(CACHE_PATH)).toBe(true);
    const cache = folder.get(CACHE_PATH);
    folder.delete(CACHE_PATH);
    const plan = await planFor(folder, {}, THING);
    expect(isUpToDate(plan)).toBe(true);
    expect(plan.files.map((file) => file.path)).not.toContain(CACHE_PATH);
    expect(planChanges(plan)).toEqual({
      writes: [{ path: CACHE_PATH, contents: cache }],
      deletes: [],
    });
  });

  it.each([
    ['a changed schema updates the generated files it concerns', 'update'],
    ['an unedited file that the user deleted is created again', 'create'],
  ])('%s', async (_name, want) => {
    const before = written(await generated(THING));
    if (want === 'create') before.delete('src/entities/thing/types.ts');
    const plan = await planFor(before, {}, THING.replace('type: STRING }', 'type: INTEGER }'));
    expect(plan.blocked).toBe(false);
    expect(actionOf(plan, 'src/entities/thing/types.ts')).toBe(want);
    expect(actionOf(plan, MANIFEST_PATH)).toBe('update');
  });

  it('deletes the stale files of a removed entity, and its hooks file when nobody edited it', async () => {
    const before = written(await generated(THING));
    const plan = await planFor(before, {}, THING.replace('THING', 'GADGET'));
    expect(actions(plan, 'delete')).toEqual([
      'src/entities/thing/client.ts',
      'src/entities/thing/definition.ts',
      'src/entities/thing/routes.ts',
      'src/entities/thing/types.ts',
      'src/hooks/thing.ts',
    ]);
    expect(plan.files.find((file) => file.path === 'src/hooks/thing.ts')).toMatchObject({
      owner: 'user',
      reason: 'unedited starter file of a removed entity',
    });
    expect(actionOf(plan, 'src/hooks/gadget.ts')).toBe('create');
    expect(plan.notes.join('\n')).not.toMatch(/src\/hooks\/thing\.ts/);
    expect(planChanges(plan).deletes).toContain('src/hooks/thing.ts');
  });

  it('keeps the edited hooks file of a removed entity, with a note saying what to do', async () => {
    const before = written(await generated(THING));
    before.set('src/hooks/thing.ts', `${before.get('src/hooks/thing.ts')}// my code\n`);
    const plan = await planFor(before, {}, THING.replace('THING', 'GADGET'));
    expect(actionOf(plan, 'src/hooks/thing.ts')).toBeUndefined();
    expect(plan.notes.join('\n')).toMatch(
      /src\/hooks\/thing\.ts belongs to no entity .* edited, so it was left in place\. While it imports the types of the entity that is gone, the service does not build/,
    );
    expect(planChanges(plan).deletes).not.toContain('src/hooks/thing.ts');
  });

  it('blocks on a generated file edited by hand and names it; --force overwrites it', async () => {
    const before = written(await generated(THING));
    before.set('src/app.ts', `${before.get('src/app.ts')}// my change\n`);
    const after = await generatedOver(before, {}, THING, WIDGET);
    const plan = await planFor(before, {}, THING, WIDGET);
    expect(plan.blocked).toBe(true);
    expect(plan.conflicts).toEqual([{ path: 'src/app.ts', kind: 'edited' }]);
    expect(planChanges(plan)).toEqual({ writes: [], deletes: [] });

    const forced = await planFor(before, { force: true }, THING, WIDGET);
    expect(forced.blocked).toBe(false);
    const app = planChanges(forced).writes.find((file) => file.path === 'src/app.ts');
    expect(app?.contents).toBe(after.files.find((file) => file.path === 'src/app.ts')?.contents);
  });

  it('does not block on an edited file when the new output equals the edit', async () => {
    const before = written(await generated(THING));
    const change = THING.replace('type: STRING }', 'type: INTEGER }');
    const after = await generatedOver(before, {}, change);
    const types = after.files.find((file) => file.path === 'src/entities/thing/types.ts');
    before.set('src/entities/thing/types.ts', types?.contents ?? '');
    const plan = await planFor(before, {}, change);
    expect(plan.blocked).toBe(false);
    expect(actionOf(plan, 'src/entities/thing/types.ts')).toBe('unchanged');
  });

  it('does not delete a stale file edited by hand unless forced', async () => {
    const before = written(await generated(THING, WIDGET));
    before.set('src/entities/widget/types.ts', '// mine now\n');
    const plan = await planFor(before, {}, THING);
    expect(plan.blocked).toBe(true);
    expect(plan.conflicts).toEqual([
      { path: 'src/entities/widget/types.ts', kind: 'edited-stale' },
    ]);
    const forced = await planFor(before, { force: true }, THING);
    expect(planChanges(forced).deletes).toContain('src/entities/widget/types.ts');
  });

  it('never deletes or rewrites files the manifest does not list', async () => {
    const before = written(await generated(THING, WIDGET));
    before.set('src/extra.ts', 'export const mine = 1;\n');
    before.set('docs/notes.md', '# notes\n');
    const plan = await planFor(before, { force: true }, THING);
    const touched = [...planChanges(plan).deletes, ...planChanges(plan).writes.map((w) => w.path)];
    expect(touched).not.toContain('src/extra.ts');
    expect(touched).not.toContain('docs/notes.md');
  });

  it('never touches the user files, whatever they hold', async () => {
    const before = written(await generated(THING));
    before.set('src/hooks/thing.ts', 'export const thingHooks = { custom: true };\n');
    before.set('src/server.ts', '// my server\n');
    const plan = await planFor(before, { force: true }, THING, WIDGET);
    expect(actionOf(plan, 'src/hooks/thing.ts')).toBe('keep');
    expect(actionOf(plan, 'src/server.ts')).toBe('keep');
    expect(actionOf(plan, 'src/hooks/widget.ts')).toBe('create');
    const writes = planChanges(plan).writes.map((file) => file.path);
    expect(writes).not.toContain('src/hooks/thing.ts');
    expect(writes).not.toContain('src/server.ts');
  });

  describe('an output folder without a manifest (an older entity-gen)', () => {
    it('takes over files identical to the generated ones and writes a manifest', async () => {
      const folder = written(await generated(THING));
      folder.delete(MANIFEST_PATH);
      const plan = await planFor(folder, {}, THING);
      expect(plan.blocked).toBe(false);
      expect(actionOf(plan, 'src/app.ts')).toBe('unchanged');
      expect(actionOf(plan, MANIFEST_PATH)).toBe('create');
      expect(plan.notes.join('\n')).toMatch(/manifest\.json is missing/);
    });

    it('refuses to overwrite a differing file, generated-looking or not, without --force', async () => {
      const old = written(await generated(THING));
      old.delete(MANIFEST_PATH);
      const plan = await planFor(old, {}, THING, WIDGET);
      expect(plan.blocked).toBe(true);
      expect(plan.conflicts.map((conflict) => conflict.kind)).toEqual(
        plan.conflicts.map(() => 'unowned'),
      );
      expect(plan.conflicts.map((conflict) => conflict.path)).toContain('src/service.ts');
      expect((await planFor(old, { force: true }, THING, WIDGET)).blocked).toBe(false);
    });

    it('keeps an old generated server.ts (now a user file) and says how to replace it', async () => {
      const folder = new Map([
        [
          'src/server.ts',
          '// Code generated by entity-gen from s.yaml (schema 0123456789ab). DO NOT EDIT.\n',
        ],
      ]);
      const plan = await planFor(folder, {}, THING);
      expect(actionOf(plan, 'src/server.ts')).toBe('keep');
      expect(plan.notes.join('\n')).toMatch(/src\/server\.ts still carries the DO NOT EDIT header/);
    });
  });

  it('keeps migration files listed in the manifest and never deletes them', async () => {
    const generation = await generated(THING);
    const folder = written(generation);
    const manifest = parseManifest(folder.get(MANIFEST_PATH) ?? '').manifest!;
    const migration = 'CREATE TABLE thing (id TEXT);\n';
    folder.set('migrations/0001_init.sql', migration);
    folder.set(
      MANIFEST_PATH,
      renderManifest({
        ...manifest,
        files: { ...manifest.files, 'migrations/0001_init.sql': contentHash(migration) },
      }),
    );
    const plan = await planFor(folder, {}, WIDGET);
    expect(planChanges(plan).deletes).not.toContain('migrations/0001_init.sql');
    const next = parseManifest(
      planChanges(plan).writes.find((w) => w.path === MANIFEST_PATH)!.contents,
    );
    expect(next.manifest?.files['migrations/0001_init.sql']).toBe(contentHash(migration));
  });

  it('adds the migration of a schema change as generator files listed in the manifest', async () => {
    const before = written(await generated(THING));
    const plan = await planFor(
      before,
      { allowDataLoss: false },
      THING.replace(
        'label, type: STRING }',
        'label, type: STRING }\n    - { name: size, type: INTEGER }',
      ),
    );
    const migrations = actions(plan, 'create').filter((path) => path.startsWith('migrations/'));
    expect(migrations).toHaveLength(2);
    expect(plan.migrationSteps).toEqual([
      expect.objectContaining({ destructive: false, description: expect.stringContaining('size') }),
    ]);
    const manifest = parseManifest(
      planChanges(plan).writes.find((w) => w.path === MANIFEST_PATH)?.contents ?? '',
    ).manifest;
    for (const path of migrations) expect(manifest?.files[path]).toMatch(/^sha256:/);
  });

  it('stops on the diagnostics of the migrations planner (data loss not allowed)', async () => {
    const before = written(await generated(THING, WIDGET));
    const plan = await planFor(before, { allowDataLoss: false, force: true }, THING);
    expect(plan.diagnostics.length).toBeGreaterThan(0);
    expect(planChanges(plan)).toEqual({ writes: [], deletes: [] });
  });

  it('leaves a migration file it did not write alone; the new one is numbered after it', async () => {
    const before = written(await generated(THING));
    const change = THING.replace(
      'label, type: STRING }',
      'label, type: STRING }\n    - { name: size, type: INTEGER }',
    );
    const first = await planFor(before, {}, change);
    const migration = actions(first, 'create').find((path) => path.startsWith('migrations/'));
    expect(migration).toMatch(/^migrations\/0001_/);
    before.set(migration ?? '', '-- written by someone else\n');
    const plan = await planFor(before, {}, change);
    expect(plan.blocked).toBe(false);
    const changes = planChanges(plan);
    expect(changes.writes.map((w) => w.path)).not.toContain(migration);
    expect(changes.deletes).not.toContain(migration);
    expect(
      changes.writes
        .filter((w) => w.path.startsWith('migrations/'))
        .map((w) => w.path.slice(0, 16)),
    ).toEqual(['migrations/0002_', 'migrations/0002_']);
  });

  it.each([
    ['not JSON', '{'],
    ['a newer format', JSON.stringify({ format: 2, generator: '5.0.0' })],
    [
      'an invocation without schemas',
      JSON.stringify({
        format: 1,
        invocation: { schemas: [] },
        schemaHash: 'x',
        schema: [],
        files: {},
      }),
    ],
    [
      'a path outside the folder',
      JSON.stringify({
        format: 1,
        generator: '0.1.0',
        schemaHash: 'x',
        schema: [],
        files: { '../outside.ts': `sha256:${'0'.repeat(64)}` },
      }),
    ],
  ])('stops with a diagnostic on a manifest that is %s', async (_name, text) => {
    const plan = planOutput(
      await generated(THING),
      { ...EMPTY_OUTPUT, manifest: text },
      { force: true },
    );
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({ file: MANIFEST_PATH, code: 'MANIFEST_INVALID' }),
    ]);
    expect(planChanges(plan)).toEqual({ writes: [], deletes: [] });
  });

  it('is deterministic and does not change its inputs', async () => {
    const before = written(await generated(THING));
    const frozen = JSON.stringify([...before]);
    expect(await planFor(before, {}, THING, WIDGET)).toEqual(
      await planFor(before, {}, THING, WIDGET),
    );
    expect(JSON.stringify([...before])).toBe(frozen);
  });
});
