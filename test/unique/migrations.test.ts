/**
 * Migrations of unique rules (SPEC §16): adding a unique field or combination creates its unique
 * index after a check that stops the start-up listing the stored records that share values (and
 * changes nothing); distinct or absent values let it pass; removing the rule drops the index.
 * Both drivers.
 */
import { describe, expect, it } from 'vitest';
import { planMigrations } from '../../cli/migrate/index.js';
import type { SchemaModel } from '../../cli/model/types.js';
import type { StorageDriver, TableDescriptor } from '../../runtime/src/driver.js';
import { isUniqueViolationError } from '../../runtime/src/errors.js';
import { isMigrationError } from '../../runtime/src/migrations.js';
import { describeOnBothDrivers } from '../helpers/drivers.js';
import { entity, modelOf, schema, snapshotOf } from '../migrate/helpers.js';

const plain = [
  '{name: id, type: STRING}',
  '{name: email, type: STRING}',
  '{name: category, type: STRING}',
  '{name: name, type: STRING}',
];
const before = schema(entity('CUSTOMER', ['id'], plain));
const after = schema(
  entity(
    'CUSTOMER',
    ['id'],
    [
      '{name: id, type: STRING}',
      '{name: email, type: STRING, unique: true}',
      '{name: category, type: STRING}',
      '{name: name, type: STRING}',
    ],
    'indexes: [{fields: [category, name], unique: true}]',
  ),
);

const planOf = (from: string, to: string) =>
  planMigrations(snapshotOf(modelOf(from)), modelOf(to), {
    allowDataLoss: false,
    existingMigrations: [],
  });

const tables = (model: SchemaModel): TableDescriptor[] => model.entities.map((e) => e.table);

describe('planning a migration that adds unique rules', () => {
  it('creates each unique index after its check line, and says so in the steps', () => {
    const planned = planOf(before, after);
    expect(planned.diagnostics).toEqual([]);
    expect(planned.steps.map((step) => step.description)).toEqual([
      'Create unique index [email] of entity CUSTOMER (the migration stops, listing them, if stored records share values)',
      'Create unique index [category, name] of entity CUSTOMER (the migration stops, listing them, if stored records share values)',
    ]);
    const sqlite = planned.files.find((file) => file.path.endsWith('.sqlite.sql'))!;
    expect(sqlite.contents).toContain(
      '-- entity-gen:check-unique CUSTOMER email\nCREATE UNIQUE INDEX IF NOT EXISTS "customer__email__uq" ON "customer" ("email");\n',
    );
    const postgres = planned.files.find((file) => file.path.endsWith('.postgres.sql'))!;
    expect(postgres.contents).toContain(
      '-- entity-gen:check-unique CUSTOMER category,name\nCREATE UNIQUE INDEX IF NOT EXISTS "customer__category__name__uq" ON "customer" ("category", "name");\n',
    );
  });

  it('drops the indexes when the rules are removed', () => {
    const back = planOf(after, before);
    expect(back.steps.map((step) => step.description)).toEqual([
      'Drop unique index [email] of entity CUSTOMER',
      'Drop unique index [category, name] of entity CUSTOMER',
    ]);
    for (const file of back.files) {
      expect(file.contents).toContain('DROP INDEX IF EXISTS "customer__email__uq";');
      expect(file.contents).toContain('DROP INDEX IF EXISTS "customer__category__name__uq";');
    }
  });
});

function describeDriver(name: string, make: () => StorageDriver, fresh: () => void) {
  describe(`running it (${name})`, () => {
    const migrationsOf = (from: string, to: string, dialect: string, start = 1) =>
      planMigrations(snapshotOf(modelOf(from)), modelOf(to), {
        allowDataLoss: false,
        existingMigrations: Array.from({ length: start - 1 }, (_, i) => `migrations/000${i + 1}_x`),
      })
        .files.filter((file) => file.path.endsWith(`.${dialect}.sql`))
        .map((file) => ({
          id: file.path.replace(/^migrations\/|\.\w+\.sql$/g, ''),
          sql: file.contents,
        }));
    const open = async (records: Record<string, unknown>[]): Promise<unknown> => {
      fresh();
      const first = make();
      await first.open(tables(modelOf(before)), { migrations: [] });
      await first.insert(tables(modelOf(before))[0]!, records, 1);
      await first.close();
      const driver = make();
      try {
        await driver.open(tables(modelOf(after)), {
          migrations: migrationsOf(before, after, driver.dialect),
        });
        return undefined;
      } catch (caught) {
        return caught;
      } finally {
        await driver.close();
      }
    };

    it('passes when stored values are distinct or absent, and the index then holds', async () => {
      const records = [
        { id: 'a', email: 'a@b.c', category: 'x', name: 'n' },
        { id: 'b', email: 'b@b.c', category: 'y', name: 'n' },
        { id: 'c', category: 'x' },
        { id: 'd', category: 'x' },
      ];
      expect(await open(records)).toBeUndefined();
      const driver = make();
      const table = tables(modelOf(after))[0]!;
      await driver.open([table], {
        migrations: migrationsOf(before, after, driver.dialect),
      });
      try {
        const error = await driver.insert(table, [{ id: 'e', email: 'a@b.c' }], 2).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(isUniqueViolationError(error)).toBe(true);
        expect((error as { fields: string[] }).fields).toEqual(['email']);
      } finally {
        await driver.close();
      }
    });

    it('stops listing the records that share values, and changes nothing', async () => {
      const error = await open([
        { id: 'a', email: 'same@b.c' },
        { id: 'b', email: 'same@b.c' },
        { id: 'c', email: 'same@b.c', category: 'x', name: 'n' },
        { id: 'd', category: 'x', name: 'n' },
      ]);
      expect(isMigrationError(error)).toBe(true);
      expect((error as { code: string }).code).toBe('DUPLICATE_VALUES');
      expect((error as Error).message).toMatch(
        /^Migration 0001_[\w-]+ makes field email of CUSTOMER unique, but stored records share values: email = "same@b\.c" is held by CUSTOMER "a", "b", "c"\. Change or remove those records, or drop the unique rule and regenerate \(docs\/migrations\.md\)$/,
      );
      // Nothing was applied: the old schema still opens with its records.
      const driver = make();
      const table = tables(modelOf(before))[0]!;
      await driver.open([table], { migrations: [] });
      try {
        expect(await driver.count(table, { filters: [] })).toBe(4);
      } finally {
        await driver.close();
      }
    });

    it('lists the combinations several records share', async () => {
      const error = await open([
        { id: 'a', email: '1', category: 'x', name: 'n' },
        { id: 'b', email: '2', category: 'x', name: 'n' },
      ]);
      expect((error as Error).message).toContain(
        'makes fields (category, name) of CUSTOMER unique, but stored records share values: category = "x", name = "n" is held by CUSTOMER "a", "b".',
      );
    });
  });
}

describeOnBothDrivers(
  { folderPrefix: 'eg-unique-migrations-', schemaPrefix: 'eg_uqmig_' },
  describeDriver,
);
