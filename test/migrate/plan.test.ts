/**
 * The migrations planner, table-driven: each kind of schema change gives exactly the committed
 * plan (steps, diagnostics and both SQL files) under test/migrate/golden/<case>.txt. Run with
 * UPDATE_GOLDEN=1 to rewrite them, then review the diff. Whether the SQL does what it says on
 * real databases is tested in test/drivers/migrations.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import {
  describeSteps,
  nextSequence,
  planMigrations,
  type MigrationPlan,
} from '../../cli/migrate/index.js';
import { entity, modelOf, planBetween, schema, snapshotOf } from './helpers.js';

const GOLDEN = fileURLToPath(new URL('./golden/', import.meta.url));
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

/** The plan as one reviewable text. */
function render(plan: MigrationPlan): string {
  const parts = [
    '# steps',
    ...plan.steps.map((step) => `${step.destructive ? 'DESTRUCTIVE ' : ''}${step.description}`),
    '# diagnostics',
    ...plan.diagnostics.map(formatDiagnostic),
  ];
  for (const file of plan.files) parts.push(`# file ${file.path}`, file.contents.trimEnd());
  return `${parts.join('\n')}\n`;
}

const id = '{name: id, type: STRING}';
const one = (...fields: string[]): string => schema(entity('ITEM', ['id'], [id, ...fields]));

interface Case {
  readonly before: string;
  readonly after: string;
  readonly allowDataLoss?: boolean;
}

const CASES: Record<string, Case> = {
  'add-entity': {
    before: one(),
    after: schema(
      entity('ITEM', ['id'], [id]),
      entity(
        'ORDER_LINE',
        ['order', 'line'],
        [
          '{name: order, type: STRING}',
          '{name: line, type: INTEGER}',
          '{name: amount, type: DECIMAL, required: true, index: true}',
        ],
      ),
    ),
  },
  'remove-entity-refused': {
    before: schema(entity('ITEM', ['id'], [id]), entity('OLD', ['id'], [id])),
    after: one(),
  },
  'remove-entity': {
    before: schema(entity('ITEM', ['id'], [id]), entity('OLD', ['id'], [id])),
    after: one(),
    allowDataLoss: true,
  },
  'rename-entity': {
    before: schema(entity('CUSTOMER', ['id'], [id, '{name: name, type: STRING, index: true}'])),
    after: schema(
      entity(
        'CLIENT',
        ['id'],
        [id, '{name: name, type: STRING, index: true}'],
        'renamedFrom: CUSTOMER',
      ),
    ),
  },
  'rename-entity-case-only': {
    before: schema(entity('Customer', ['id'], [id])),
    after: schema(entity('CUSTOMER', ['id'], [id])),
  },
  'add-optional-field': {
    before: one(),
    after: one('{name: color, type: STRING}'),
  },
  'add-optional-field-with-default': {
    before: one(),
    after: one('{name: price, type: DECIMAL, index: true, default: "9.90"}'),
  },
  'add-required-field-with-default': {
    before: one(),
    after: one(
      '{name: price, type: DECIMAL, required: true, default: 0}',
      '{name: active, type: BOOL, required: true, default: true}',
      '{name: tags, type: ARRAY, array: {type: STRING}, required: true, default: [new]}',
      '{name: since, type: DATE_TIME, required: true, default: "2024-01-01T00:00:00+01:00"}',
    ),
  },
  'add-required-field-without-default': {
    before: one(),
    after: one('{name: color, type: STRING, required: true}'),
  },
  'remove-field-refused': {
    before: one('{name: legacy, type: STRING}'),
    after: one(),
  },
  'remove-field': {
    before: one('{name: legacy, type: DECIMAL, index: true}'),
    after: one(),
    allowDataLoss: true,
  },
  'rename-field': {
    before: one('{name: price, type: DECIMAL, index: true}'),
    after: one('{name: cost, type: DECIMAL, index: true, renamedFrom: price}'),
  },
  'rename-field-case-only': {
    before: one('{name: price, type: INTEGER}'),
    after: one('{name: Price, type: INTEGER}'),
  },
  'rename-and-convert-field': {
    before: one('{name: qty, type: INTEGER}'),
    after: one('{name: quantity, type: DOUBLE, renamedFrom: qty}'),
  },
  'integer-to-double': {
    before: one('{name: n, type: INTEGER, required: true, index: true}'),
    after: one('{name: n, type: DOUBLE, required: true, index: true}'),
  },
  'integer-and-double-to-decimal': {
    before: one('{name: a, type: INTEGER}', '{name: b, type: DOUBLE, index: true}'),
    after: one('{name: a, type: DECIMAL}', '{name: b, type: DECIMAL, index: true}'),
  },
  'anything-to-string': {
    before: one(
      '{name: i, type: INTEGER}',
      '{name: d, type: DOUBLE}',
      '{name: m, type: DECIMAL}',
      '{name: b, type: BOOL}',
      '{name: day, type: DATE}',
      '{name: at, type: DATE_TIME}',
      '{name: e, type: ENUM, enums: [A]}',
      '{name: s, type: SELECT, select: {elems: [{value: x}]}}',
    ),
    after: one(
      '{name: i, type: STRING}',
      '{name: d, type: STRING}',
      '{name: m, type: STRING}',
      '{name: b, type: STRING}',
      '{name: day, type: STRING}',
      '{name: at, type: STRING}',
      '{name: e, type: STRING}',
      '{name: s, type: STRING}',
    ),
  },
  'scalars-to-any': {
    before: one('{name: m, type: DECIMAL}', '{name: b, type: BOOL}', '{name: at, type: DATE_TIME}'),
    after: one('{name: m, type: ANY}', '{name: b, type: ANY}', '{name: at, type: ANY}'),
  },
  'date-to-date-time': {
    before: one('{name: day, type: DATE}'),
    after: one('{name: day, type: DATE_TIME}'),
  },
  'enum-values-added': {
    before: one('{name: status, type: ENUM, enums: [NEW, PAID]}'),
    after: one('{name: status, type: ENUM, enums: [NEW, PAID, SHIPPED]}'),
  },
  'enum-values-respelled': {
    before: one('{name: unit, type: ENUM, enums: [cm, in]}'),
    after: one('{name: unit, type: ENUM, enums: [CM, in]}'),
  },
  'enum-value-removed-refused': {
    before: one('{name: status, type: ENUM, enums: [NEW, PAID]}'),
    after: one('{name: status, type: ENUM, enums: [NEW]}'),
  },
  'enum-value-removed': {
    before: one('{name: status, type: ENUM, enums: [NEW, PAID]}'),
    after: one('{name: status, type: ENUM, enums: [NEW], required: true, default: NEW}'),
    allowDataLoss: true,
  },
  'string-to-select': {
    before: one('{name: size, type: STRING}'),
    after: one('{name: size, type: SELECT, select: {elems: [{value: S}, {value: M}]}}'),
    allowDataLoss: true,
  },
  'optional-to-required-with-default': {
    before: one('{name: email, type: STRING, index: true}', '{name: price, type: DECIMAL}'),
    after: one(
      '{name: email, type: STRING, index: true, required: true, default: none}',
      '{name: price, type: DECIMAL, required: true, default: "1.5"}',
    ),
  },
  'optional-to-required-without-default': {
    before: one('{name: email, type: STRING}'),
    after: one('{name: email, type: STRING, required: true}'),
  },
  'required-to-optional': {
    before: one('{name: email, type: STRING, required: true}'),
    after: one('{name: email, type: STRING}'),
  },
  'double-to-integer-refused': {
    before: one('{name: total, type: DOUBLE}'),
    after: one('{name: total, type: INTEGER}'),
  },
  'double-to-integer': {
    before: one('{name: total, type: DOUBLE}'),
    after: one('{name: total, type: INTEGER}'),
    allowDataLoss: true,
  },
  'string-to-integer-required-without-default': {
    before: one('{name: n, type: STRING, required: true}'),
    after: one('{name: n, type: INTEGER, required: true}'),
    allowDataLoss: true,
  },
  'json-to-string-refused': {
    before: one('{name: doc, type: OBJECT, object: {fields: [{name: a, type: STRING}]}}'),
    after: one('{name: doc, type: STRING}'),
  },
  'object-widened': {
    before: one(
      '{name: doc, type: OBJECT, object: {fields: [{name: a, type: INTEGER, required: true}]}}',
    ),
    after: one(
      '{name: doc, type: OBJECT, object: {fields: [{name: a, type: DOUBLE}, {name: b, type: STRING}]}}',
    ),
  },
  'object-inner-field-removed': {
    before: one(
      '{name: doc, type: OBJECT, object: {fields: [{name: a, type: INTEGER}, {name: b, type: STRING}]}}',
    ),
    after: one('{name: doc, type: OBJECT, object: {fields: [{name: a, type: INTEGER}]}}'),
    allowDataLoss: true,
  },
  'array-element-narrowed-refused': {
    before: one('{name: tags, type: ARRAY, array: {type: STRING}}'),
    after: one('{name: tags, type: ARRAY, array: {type: INTEGER}}'),
  },
  'key-change-refused': {
    before: schema(
      entity('LINE', ['id'], ['{name: id, type: INTEGER}', '{name: code, type: STRING}']),
    ),
    after: schema(
      entity('LINE', ['id', 'code'], ['{name: id, type: INTEGER}', '{name: code, type: STRING}']),
    ),
  },
  'key-change': {
    before: schema(
      entity(
        'LINE',
        ['id'],
        ['{name: id, type: INTEGER, index: true}', '{name: code, type: STRING, index: true}'],
      ),
    ),
    after: schema(
      entity(
        'LINE',
        ['code'],
        [
          '{name: id, type: STRING, index: true}',
          '{name: code, type: STRING, index: true}',
          '{name: note, type: STRING, default: "-"}',
        ],
      ),
    ),
    allowDataLoss: true,
  },
  'becomes-single-record-without-key': {
    before: schema(
      entity('PREF', ['id'], ['{name: id, type: STRING}', '{name: theme, type: STRING}']),
    ),
    after: schema(entity('PREF', [], ['{name: theme, type: STRING}'], 'singleRecord: true')),
    allowDataLoss: true,
  },
  'single-record-without-key-gains-a-field': {
    before: schema(entity('PREF', [], ['{name: theme, type: STRING}'], 'singleRecord: true')),
    after: schema(
      entity(
        'PREF',
        [],
        ['{name: theme, type: STRING}', '{name: size, type: INTEGER, default: 3}'],
        'singleRecord: true',
      ),
    ),
  },
  'leaves-single-record-without-key': {
    before: schema(
      entity('PREF', [], ['{name: theme, type: STRING}'], 'singleRecord: true\n  lkValue: main'),
    ),
    after: schema(
      entity(
        'PREF',
        ['id'],
        ['{name: id, type: STRING, default: main}', '{name: theme, type: STRING}'],
      ),
    ),
    allowDataLoss: true,
  },
  'leaves-single-record-without-key-refused': {
    before: schema(entity('PREF', [], ['{name: theme, type: STRING}'], 'singleRecord: true')),
    after: schema(
      entity(
        'PREF',
        ['id'],
        ['{name: id, type: STRING, default: main}', '{name: theme, type: STRING}'],
      ),
    ),
  },
  'composite-indexes-added-changed-removed': {
    before: schema(
      entity(
        'ITEM',
        ['id'],
        [id, '{name: c, type: STRING}', '{name: p, type: DECIMAL}', '{name: n, type: INTEGER}'],
        'indexes: [[c, -p], [n]]',
      ),
    ),
    after: schema(
      entity(
        'ITEM',
        ['id'],
        [id, '{name: c, type: STRING}', '{name: p, type: DECIMAL}', '{name: n, type: INTEGER}'],
        'indexes: [[c, p], [p, -n, c]]',
      ),
    ),
  },
  'composite-index-field-renamed-and-removed': {
    before: schema(
      entity(
        'ITEM',
        ['id'],
        [id, '{name: c, type: STRING}', '{name: p, type: DECIMAL}', '{name: n, type: INTEGER}'],
        'indexes: [[c, -p], [n, c]]',
      ),
    ),
    after: schema(
      entity(
        'ITEM',
        ['id'],
        [id, '{name: group, type: STRING, renamedFrom: c}', '{name: n, type: INTEGER}'],
        'indexes: [[n, group]]',
      ),
    ),
    allowDataLoss: true,
  },
  'index-added-and-removed': {
    before: one('{name: a, type: STRING, index: true}', '{name: b, type: DECIMAL}'),
    after: one('{name: a, type: STRING}', '{name: b, type: DECIMAL, index: true}'),
  },
  'ci-index-added-and-removed': {
    before: one('{name: a, type: STRING, index: ci}', '{name: b, type: STRING, index: true}'),
    after: one('{name: a, type: STRING}', '{name: b, type: STRING, index: ci}'),
  },
  'ambiguous-renames': {
    before: schema(
      entity('ITEM', ['id'], [id, '{name: a, type: STRING}', '{name: b, type: STRING}']),
      entity('OTHER', ['id'], [id]),
    ),
    after: schema(
      entity(
        'ITEM',
        ['id'],
        [
          id,
          '{name: a, type: STRING}',
          '{name: c, type: STRING, renamedFrom: a}',
          '{name: d, type: STRING, renamedFrom: b}',
          '{name: e, type: STRING, renamedFrom: b}',
          '{name: f, type: STRING, renamedFrom: zzz}',
        ],
      ),
      entity('THIRD', ['id'], [id], 'renamedFrom: NOPE'),
      entity('OTHER', ['id'], [id]),
    ),
  },
  'stale-renamed-from': {
    before: schema(
      entity(
        'CLIENT',
        ['id'],
        [id, '{name: cost, type: STRING, renamedFrom: price}'],
        'renamedFrom: CUSTOMER',
      ),
    ),
    after: schema(
      entity(
        'CLIENT',
        ['id'],
        [id, '{name: cost, type: STRING, renamedFrom: price}', '{name: note, type: STRING}'],
        'renamedFrom: CUSTOMER',
      ),
    ),
  },
};

describe('planMigrations: each kind of change', () => {
  it.each(Object.keys(CASES))('%s', (name) => {
    const testCase = CASES[name]!;
    const plan = planBetween(testCase.before, testCase.after, {
      allowDataLoss: testCase.allowDataLoss ?? false,
      existingMigrations: ['0001_first_0a1b2c3d.sqlite.sql', '0001_first_0a1b2c3d.postgres.sql'],
    });
    const text = render(plan);
    const path = join(GOLDEN, `${name}.txt`);
    if (UPDATE || !existsSync(path)) {
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(path, text);
      if (!UPDATE) throw new Error(`wrote missing golden file ${path}; review and commit it`);
      return;
    }
    expect(text).toBe(readFileSync(path, 'utf8'));
    // A refused plan writes nothing; an accepted one writes both dialects or none.
    if (plan.diagnostics.length > 0) expect(plan.files).toEqual([]);
    else expect([0, 2]).toContain(plan.files.length);
  });
});

describe('planMigrations: when and how files are written', () => {
  const before = one('{name: a, type: STRING}');

  it('plans nothing on the first generation (the service creates its tables)', () => {
    expect(
      planMigrations(undefined, modelOf(before), { allowDataLoss: false, existingMigrations: [] }),
    ).toEqual({ files: [], renames: [], steps: [], diagnostics: [] });
  });

  it('plans nothing when storage does not change', () => {
    const described = before.replace('type: STRING}', 'type: STRING, description: Hello}');
    expect(planBetween(before, described)).toEqual({
      files: [],
      renames: [],
      steps: [],
      diagnostics: [],
    });
    expect(planBetween(before, before)).toEqual({
      files: [],
      renames: [],
      steps: [],
      diagnostics: [],
    });
  });

  it('lists the entity and field renames, also when no SQL changes', () => {
    const before = schema(
      entity('A', ['id'], ['{name: id, type: STRING}', '{name: x, type: STRING}']),
    );
    const after = schema(
      entity(
        'ORDER_LINE',
        ['id'],
        ['{name: id, type: STRING}', '{name: y, type: STRING, renamedFrom: x}'],
        'renamedFrom: A',
      ),
    );
    const names = (name: string, typeName: string, camelName: string, fileName: string) => ({
      name,
      typeName,
      camelName,
      fileName,
    });
    const renames = {
      old: names('A', 'A', 'a', 'a'),
      new: names('ORDER_LINE', 'OrderLine', 'orderLine', 'order-line'),
    };
    expect(planBetween(before, after).renames).toEqual([
      { kind: 'entity', ...renames },
      { kind: 'field', ...renames, field: { old: 'x', new: 'y' } },
    ]);
  });

  it('treats an empty previous schema as "no entities"', () => {
    const plan = planMigrations([], modelOf(before), {
      allowDataLoss: false,
      existingMigrations: [],
    });
    expect(plan.files.map((file) => file.path.replace(/_[0-9a-f]{8}\./, '_<hash>.'))).toEqual([
      'migrations/0001_create-item_<hash>.sqlite.sql',
      'migrations/0001_create-item_<hash>.postgres.sql',
    ]);
  });

  it('numbers after the highest existing migration, with or without the folder', () => {
    expect(nextSequence([])).toBe(1);
    expect(
      nextSequence([
        '0002_a_11111111.sqlite.sql',
        'migrations/0009_b_22222222.postgres.sql',
        'README.md',
      ]),
    ).toBe(10);
    const plan = planBetween(before, one('{name: a, type: STRING}', '{name: b, type: INTEGER}'), {
      existingMigrations: ['0041_x_00000000.sqlite.sql'],
    });
    expect(plan.files[0]?.path).toMatch(/^migrations\/0042_add-item-b_[0-9a-f]{8}\.sqlite\.sql$/);
  });

  it('gives two branches changing the same base the same number but different names', () => {
    const existing = ['0001_first_0a1b2c3d.sqlite.sql'];
    const branchA = planBetween(
      before,
      one('{name: a, type: STRING}', '{name: b, type: INTEGER}'),
      {
        existingMigrations: existing,
      },
    );
    const branchB = planBetween(
      before,
      one('{name: a, type: STRING}', '{name: c, type: INTEGER}'),
      {
        existingMigrations: existing,
      },
    );
    const names = [...branchA.files, ...branchB.files].map((file) => file.path);
    expect(names.every((name) => name.startsWith('migrations/0002_'))).toBe(true);
    expect(new Set(names).size).toBe(4);
    // The same change on two branches is the same file: git merges it cleanly.
    const again = planBetween(before, one('{name: a, type: STRING}', '{name: b, type: INTEGER}'), {
      existingMigrations: existing,
    });
    expect(again).toEqual(branchA);
  });

  it('is pure: the same input gives the same plan and the input is not changed', () => {
    const previous = snapshotOf(modelOf(before));
    const frozen = JSON.stringify(previous);
    const model = modelOf(one('{name: b, type: STRING, renamedFrom: a}'));
    const options = { allowDataLoss: false, existingMigrations: [] };
    const first = planMigrations(previous, model, options);
    expect(planMigrations(previous, model, options)).toEqual(first);
    expect(JSON.stringify(previous)).toBe(frozen);
    expect(first.files.map((file) => file.contents.endsWith(';\n'))).toEqual([true, true]);
  });

  it('reports a previous schema that no longer loads', () => {
    const plan = planMigrations([{ type: 'ENTITY', entity: { name: 'X' } }], modelOf(before), {
      allowDataLoss: false,
      existingMigrations: [],
      previousSchemaFile: 'out/.entity-gen/manifest.json',
    });
    expect(plan.diagnostics.map(formatDiagnostic)).toEqual([
      "out/.entity-gen/manifest.json:1:1: The schema recorded by the previous generation does not load any more, so no migration can be planned from it: Entity X has no 'fields' (MISSING_KEY); Entity X has no 'lk'; name its logical key field(s), e.g. lk: [id] (MISSING_KEY) (MIGRATION_PREVIOUS_SCHEMA_INVALID)",
    ]);
  });

  it('lists destructive steps first and prominently', () => {
    const plan = planBetween(
      schema(
        entity('ITEM', ['id'], [id, '{name: old, type: STRING}']),
        entity('GONE', ['id'], [id]),
      ),
      one('{name: color, type: STRING}'),
      { allowDataLoss: true },
    );
    expect(describeSteps(plan.steps)).toBe(
      [
        '!! 2 DESTRUCTIVE step(s), stored data will be lost:',
        '  !! Remove entity GONE: table "gone" and all its records are deleted',
        '  !! Remove field ITEM.old: its stored values are deleted',
        '1 step(s) keeping all data:',
        '  - Add optional field ITEM.color (STRING)',
      ].join('\n'),
    );
  });
});

describe('docs/migrations.md', () => {
  it('shows the files the worked example really produces', () => {
    const doc = readFileSync(
      fileURLToPath(new URL('../../docs/migrations.md', import.meta.url)),
      'utf8',
    );
    const yaml = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const [v1, v2] = yaml;
    const plan = planMigrations(snapshotOf(modelOf(v1!, 'shop.yaml')), modelOf(v2!, 'shop.yaml'), {
      allowDataLoss: false,
      existingMigrations: [],
    });
    const shown = [
      ...doc.matchAll(/`(migrations\/[^`]+\.sql)`[^\n]*\n\n```sql\n([\s\S]*?)```/g),
    ].map((match) => ({ path: match[1]!, contents: match[2]! }));
    expect(shown).toEqual(plan.files);
    const lossy = planMigrations(
      snapshotOf(modelOf(v2!, 'shop.yaml')),
      modelOf(v2!.replace('type: DECIMAL', 'type: INTEGER'), 'shop.yaml'),
      { allowDataLoss: false, existingMigrations: plan.files.map((file) => file.path) },
    );
    expect(doc).toContain(
      `\`\`\`text\n${lossy.diagnostics.map(formatDiagnostic).join('\n')}\n\`\`\``,
    );
  });
});
