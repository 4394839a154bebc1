/**
 * Migrations of constraints (SPEC §16): a top-level field that gains or changes constraints gets a
 * check in the migration, which stops the start-up listing the stored records that break them
 * and changes nothing; records that meet them let it pass. Both drivers.
 */
import { describe, expect, it } from 'vitest';
import { planMigrations } from '../../cli/migrate/index.js';
import type { SchemaModel } from '../../cli/model/types.js';
import type { StorageDriver, TableDescriptor } from '../../runtime/src/driver.js';
import { isMigrationError } from '../../runtime/src/migrations.js';
import { describeOnBothDrivers } from '../helpers/drivers.js';
import { entity, modelOf, schema, snapshotOf } from '../migrate/helpers.js';

const FIELDS = [
  '{name: id, type: STRING}',
  '{name: pages, type: INTEGER}',
  '{name: price, type: DECIMAL}',
  '{name: published, type: DATE_TIME}',
  '{name: title, type: STRING}',
  '{name: tags, type: ARRAY, array: {type: STRING}}',
];
const before = schema(entity('BOOK', ['id'], FIELDS));
const after = schema(
  entity(
    'BOOK',
    ['id'],
    [
      '{name: id, type: STRING}',
      '{name: pages, type: INTEGER, min: 1}',
      '{name: price, type: DECIMAL, max: 0.3}',
      '{name: published, type: DATE_TIME, min: "2000-01-01T00:00:00Z"}',
      '{name: title, type: STRING, pattern: "^[A-Z]"}',
      '{name: tags, type: ARRAY, maxItems: 2, array: {type: STRING}}',
    ],
  ),
);

const plan = () =>
  planMigrations(snapshotOf(modelOf(before)), modelOf(after), {
    allowDataLoss: false,
    existingMigrations: [],
  });

const tables = (model: SchemaModel): TableDescriptor[] => model.entities.map((e) => e.table);

describe('planning a migration that adds constraints', () => {
  it('writes a check line per field whose constraints change', () => {
    const planned = plan();
    expect(planned.diagnostics).toEqual([]);
    expect(planned.steps.map((step) => step.description)).toEqual([
      'Check that every stored value of BOOK.pages meets its constraints (min 1)',
      'Check that every stored value of BOOK.price meets its constraints (max "0.3")',
      'Check that every stored value of BOOK.published meets its constraints (min "2000-01-01T00:00:00.000Z")',
      'Check that every stored value of BOOK.title meets its constraints (pattern "^[A-Z]")',
      'Check that every stored value of BOOK.tags meets its constraints (maxItems 2)',
    ]);
    const sqlite = planned.files.find((file) => file.path.endsWith('.sqlite.sql'))!;
    expect(sqlite.path).toMatch(
      /^migrations\/0001_check-constraints-book_[0-9a-f]{8}\.sqlite\.sql$/,
    );
    expect(sqlite.contents).toContain(
      '-- entity-gen:check-constraints BOOK.pages {"type":"INTEGER","min":1}\n',
    );
  });

  it('writes nothing when constraints are removed or stay', () => {
    const back = planMigrations(snapshotOf(modelOf(after)), modelOf(before), {
      allowDataLoss: false,
      existingMigrations: [],
    });
    expect(back.files).toEqual([]);
    const same = planMigrations(snapshotOf(modelOf(after)), modelOf(after), {
      allowDataLoss: false,
      existingMigrations: [],
    });
    expect(same.files).toEqual([]);
  });
});

function describeDriver(name: string, make: () => StorageDriver, fresh: () => void) {
  describe(`running it (${name})`, () => {
    const book = tables(modelOf(before))[0]!;
    const open = async (records: Record<string, unknown>[]): Promise<unknown> => {
      fresh();
      const first = make();
      await first.open(tables(modelOf(before)), { migrations: [] });
      await first.insert(book, records, 1);
      await first.close();
      const driver = make();
      const migrations = plan()
        .files.filter((file) => file.path.endsWith(`.${driver.dialect}.sql`))
        .map((file) => ({
          id: file.path.replace(/^migrations\/|\.\w+\.sql$/g, ''),
          sql: file.contents,
        }));
      try {
        await driver.open(tables(modelOf(after)), { migrations });
        return undefined;
      } catch (caught) {
        return caught;
      } finally {
        await driver.close();
      }
    };
    const good = {
      id: 'ok',
      pages: 1,
      price: '0.3',
      published: '2000-01-01T00:00:00.000Z',
      title: 'Abc',
      tags: ['a', 'b'],
    };

    it('passes when every stored record meets the constraints', async () => {
      expect(await open([good, { id: 'empty' }])).toBeUndefined();
    });

    it('stops listing the records that break them', async () => {
      for (const [bad, message] of [
        [{ pages: 0 }, 'BOOK "bad": Field pages of Entity BOOK must be at least 1, not 0'],
        [
          { price: '0.30000000000000004' },
          'BOOK "bad": Field price of Entity BOOK must be at most "0.3", not "0.30000000000000004"',
        ],
        [
          { published: '1999-12-31T23:59:59.999Z' },
          'BOOK "bad": Field published of Entity BOOK must be at least "2000-01-01T00:00:00.000Z", not "1999-12-31T23:59:59.999Z"',
        ],
        [
          { title: 'abc' },
          'BOOK "bad": Field title of Entity BOOK must match the pattern ^[A-Z], not "abc"',
        ],
        [
          { tags: ['a', 'b', 'c'] },
          'BOOK "bad": Field tags of Entity BOOK must have at most 2 items, not 3',
        ],
      ] as const) {
        const error = await open([good, { id: 'bad', ...bad }]);
        expect(isMigrationError(error)).toBe(true);
        expect((error as Error).message).toContain(message);
      }
    });
  });
}

describeOnBothDrivers(
  { folderPrefix: 'eg-constraint-migrations-', schemaPrefix: 'eg_conmig_' },
  describeDriver,
);
