/**
 * Migrations of references (SPEC §11): a reference that gains `onDelete` gets a check in the
 * migration, which stops the start-up listing the stored values that name no record; with
 * `--clear-dangling-references` the migration clears them first. Both drivers.
 */
import { describe, expect, it } from 'vitest';
import { planMigrations } from '../../cli/migrate/index.js';
import type { SchemaModel } from '../../cli/model/types.js';
import type { StorageDriver, TableDescriptor } from '../../runtime/src/driver.js';
import { isMigrationError } from '../../runtime/src/migrations.js';
import { describeOnBothDrivers } from '../helpers/drivers.js';
import { entity, modelOf, schema, snapshotOf } from '../migrate/helpers.js';

const CATEGORY = entity('CATEGORY', ['name'], ['{name: name, type: STRING}']);
const before = schema(
  CATEGORY,
  entity(
    'PRODUCT',
    ['code'],
    [
      '{name: code, type: STRING}',
      '{name: category, type: ENTITY_REF, entityRef: {entity: CATEGORY}}',
      '{name: tags, type: ARRAY, array: {type: ENTITY_REF, entityRef: {entity: CATEGORY}}}',
    ],
  ),
);
const after = schema(
  CATEGORY,
  entity(
    'PRODUCT',
    ['code'],
    [
      '{name: code, type: STRING}',
      '{name: category, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: RESTRICT}}',
      '{name: tags, type: ARRAY, array: {type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: EMPTY}}}',
    ],
  ),
);

function plan(clear: boolean) {
  return planMigrations(snapshotOf(modelOf(before)), modelOf(after), {
    allowDataLoss: false,
    clearDanglingReferences: clear,
    existingMigrations: [],
  });
}

const tables = (model: SchemaModel): TableDescriptor[] => model.entities.map((e) => e.table);

describe('planning a migration that adds onDelete', () => {
  it('writes a check per reference, and the clearing SQL when asked', () => {
    const checked = plan(false);
    expect(checked.diagnostics).toEqual([]);
    expect(checked.steps.map((step) => step.description)).toEqual([
      'Check that every value of PRODUCT.category names a CATEGORY record (onDelete: RESTRICT)',
      'Check that every value of PRODUCT.tags names a CATEGORY record (onDelete: EMPTY)',
    ]);
    const sqlite = checked.files.find((file) => file.path.endsWith('.sqlite.sql'))!;
    expect(sqlite.path).toMatch(
      /^migrations\/0001_check-references-product_[0-9a-f]{8}\.sqlite\.sql$/,
    );
    expect(sqlite.contents).toContain('-- entity-gen:check-references PRODUCT.category\n');
    expect(sqlite.contents).toContain('-- entity-gen:check-references PRODUCT.tags\n');
    expect(sqlite.contents).not.toContain('UPDATE');
    const cleared = plan(true);
    expect(cleared.steps.every((step) => step.destructive)).toBe(true);
    for (const file of cleared.files) expect(file.contents).toContain('UPDATE "product" SET');
  });

  it('writes nothing when onDelete is removed or stays', () => {
    const back = planMigrations(snapshotOf(modelOf(after)), modelOf(before), {
      allowDataLoss: false,
      existingMigrations: [],
    });
    expect(back.files).toEqual([]);
  });
});

/** Stores dangling references with the old schema, then opens with the new one and its migration. */
function describeDriver(name: string, make: () => StorageDriver, fresh: () => void) {
  describe(`running it (${name})`, () => {
    const seed = async (): Promise<StorageDriver> => {
      fresh();
      const driver = make();
      await driver.open(tables(modelOf(before)), { migrations: [] });
      await driver.insert(tables(modelOf(before))[0]!, [{ name: 'tools' }], 1);
      await driver.insert(
        tables(modelOf(before))[1]!,
        [
          { code: 'p1', category: 'tools', tags: ['tools'] },
          { code: 'p2', category: 'gone', tags: ['tools', 'lost'] },
        ],
        1,
      );
      return driver;
    };
    const migrations = (clear: boolean, dialect: string) =>
      plan(clear)
        .files.filter((file) => file.path.endsWith(`.${dialect}.sql`))
        .map((file) => ({
          id: file.path.replace(/^migrations\/|\.\w+\.sql$/g, ''),
          sql: file.contents,
        }));

    it('stops listing the dangling values', async () => {
      const first = await seed();
      await first.close();
      const driver = make();
      let error: unknown;
      try {
        await driver.open(tables(modelOf(after)), {
          migrations: migrations(false, driver.dialect),
        });
      } catch (caught) {
        error = caught;
      } finally {
        await driver.close();
      }
      expect(isMigrationError(error)).toBe(true);
      expect((error as Error).message).toContain(
        'gives PRODUCT.category an onDelete rule, but stored values name no record: PRODUCT "p2" category = "gone"',
      );
    });

    it('clears them with --clear-dangling-references', async () => {
      const first = await seed();
      await first.close();
      const driver = make();
      try {
        await driver.open(tables(modelOf(after)), { migrations: migrations(true, driver.dialect) });
        const product = tables(modelOf(after))[1]!;
        expect((await driver.get(product, ['p2']))?.record).toEqual({
          code: 'p2',
          tags: ['tools'],
        });
        expect((await driver.get(product, ['p1']))?.record).toEqual({
          code: 'p1',
          category: 'tools',
          tags: ['tools'],
        });
      } finally {
        await driver.close();
      }
    });
  });
}

describeOnBothDrivers(
  { folderPrefix: 'eg-ref-migrations-', schemaPrefix: 'eg_refmig_' },
  describeDriver,
);
