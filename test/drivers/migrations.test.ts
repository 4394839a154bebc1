/**
 * Migrations against real databases: the SQL `entity-gen generate` writes for each kind of schema
 * change, applied by the SQLite driver and (when TEST_DATABASE_URL is set) the PostgreSQL driver
 * to tables holding records, which must read back in their new shape; and the runtime's
 * bookkeeping (baseline, pending, ahead of the code, changed files, failures, two branches).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { tableDescriptor } from '../../cli/migrate/tables.js';
import type {
  KeyValue,
  MigrationScript,
  StorageDriver,
  StoredFields,
  TableDescriptor,
} from '../../runtime/src/driver.js';
import {
  isMigrationError,
  loadMigrations,
  migrationChecksum,
} from '../../runtime/src/migrations.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { SQLITE_COLUMN_TYPES, SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { entity, modelOf, planBetween, schema } from '../migrate/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'eg-migrations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const url = POSTGRES.value;
const pgSchemas: string[] = [];

afterAll(async () => {
  if (pgSchemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const name of pgSchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await client.end();
  }
});

/** `describe` for the PostgreSQL groups: skipped, saying why, without TEST_DATABASE_URL. */
const describeWithPostgres = (title: string, factory: () => void): void =>
  describeWith(POSTGRES, title, factory);

/** Makes drivers that all open one fresh database (a SQLite file, or a PostgreSQL schema). */
type Database = (() => StorageDriver) & {
  /** The tables, columns (type, NOT NULL, key) and indexes, for comparing two databases. */
  readonly layout: () => Promise<string[]>;
};

let databases = 0;
const DIALECTS: { name: 'sqlite' | 'postgres'; fresh: () => Database }[] = [
  {
    name: 'sqlite',
    fresh: () => {
      const filename = join(root, `db-${++databases}.db`);
      return Object.assign(() => new SqliteDriver({ filename }), {
        layout: async () => sqliteLayout(filename),
      });
    },
  },
  // Skipped, saying why, when TEST_DATABASE_URL is not set (see the groups below).
  {
    name: 'postgres',
    fresh: () => {
      const name = `eg_mig_${process.pid}_${randomBytes(3).toString('hex')}_${++databases}`;
      pgSchemas.push(name);
      return Object.assign(() => new PostgresDriver({ url, env: {}, schema: name, poolMax: 2 }), {
        layout: () => postgresLayout(name),
      });
    },
  },
];

const sqliteType = (kind: keyof typeof SQLITE_COLUMN_TYPES): string => SQLITE_COLUMN_TYPES[kind];

function sqliteLayout(filename: string): string[] {
  const db = new BetterSqlite(filename, { readonly: true });
  try {
    const tables = db
      .prepare(
        `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_eg_migrations' ORDER BY name`,
      )
      .pluck()
      .all() as string[];
    const lines: string[] = [];
    for (const table of tables) {
      const options = /WITHOUT ROWID\s*$/i.test(
        db.prepare(`SELECT sql FROM sqlite_schema WHERE name = ?`).pluck().get(table) as string,
      );
      lines.push(`table ${table}${options ? ' without rowid' : ''}`);
      const columns = db
        .prepare(`SELECT name, type, "notnull", pk FROM pragma_table_xinfo(?)`)
        .all(table) as {
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }[];
      for (const c of columns) {
        lines.push(
          `column ${table}.${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.pk ? ` pk${c.pk}` : ''}`,
        );
      }
      const indexes = db
        .prepare(
          `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
        )
        .pluck()
        .all(table) as string[];
      for (const index of indexes) {
        const on = db
          .prepare(
            `SELECT name || CASE WHEN "desc" THEN ' DESC' ELSE '' END FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`,
          )
          .pluck()
          .all(index);
        lines.push(`index ${index} on ${table} (${on.join(', ')})`);
      }
    }
    return lines.sort();
  } finally {
    db.close();
  }
}

async function postgresLayout(schemaName: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query<{ line: string }>(
      `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type ||
              COALESCE(' collate ' || collation_name, '') ||
              CASE WHEN is_nullable = 'NO' THEN ' NOT NULL' ELSE '' END ||
              COALESCE(' default ' || column_default, '') AS line
         FROM information_schema.columns
        WHERE table_schema = $1 AND table_name <> '_eg_migrations'`,
      [schemaName],
    );
    const indexes = await client.query<{ line: string }>(
      `SELECT 'index ' || replace(indexdef, quote_ident($1) || '.', '') AS line
         FROM pg_indexes WHERE schemaname = $1 AND indexname NOT LIKE '%pkey'`,
      [schemaName],
    );
    const keys = await client.query<{ line: string }>(
      `SELECT 'key ' || c.conrelid::regclass::text || ' ' ||
              (SELECT string_agg(a.attname, ', ' ORDER BY k.ordinality)
                 FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ordinality)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS line
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = $1 AND c.contype = 'p'`,
      [schemaName],
    );
    return [...columns.rows, ...indexes.rows, ...keys.rows]
      .map((row) => row.line.replace(`${schemaName}.`, '').replace(`"${schemaName}".`, ''))
      .sort();
  } finally {
    await client.end();
  }
}

async function withDriver<T>(
  database: Database,
  fn: (driver: StorageDriver) => Promise<T>,
): Promise<T> {
  const driver = database();
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

function tablesOf(text: string): TableDescriptor[] {
  return modelOf(text).entities.map(tableDescriptor);
}

/** The migration `planBetween` writes for one dialect, as the runtime loads it. */
function migrationFor(
  dialect: 'sqlite' | 'postgres',
  before: string,
  after: string,
  options: { allowDataLoss?: boolean; existingMigrations?: readonly string[] } = {},
): MigrationScript {
  const migration = maybeMigration(dialect, before, after, options);
  if (migration === undefined) throw new Error('no migration planned');
  return migration;
}

/** The same, or `undefined` when the change needs no migration. */
function maybeMigration(
  dialect: 'sqlite' | 'postgres',
  before: string,
  after: string,
  options: { allowDataLoss?: boolean; existingMigrations?: readonly string[] } = {},
): MigrationScript | undefined {
  const plan = planBetween(before, after, options);
  expect(plan.diagnostics).toEqual([]);
  const file = plan.files.find((candidate) => candidate.path.endsWith(`.${dialect}.sql`));
  if (file === undefined) return undefined;
  const name = file.path.slice('migrations/'.length);
  return { id: name.slice(0, -`.${dialect}.sql`.length), sql: file.contents };
}

/** One field change: `f` of entity T goes from `before` to `after`; each row's value `[stored, read back]`. */
interface ConversionCase {
  readonly before: string;
  readonly after: string;
  readonly rows: readonly (readonly [unknown, unknown])[];
  readonly allowDataLoss?: boolean;
  /** Ids in the order `orderBy f` must list them after the migration (checks sortable keys). */
  readonly order?: readonly string[];
}

const T = (field: string): string =>
  schema(entity('T', ['id'], ['{name: id, type: STRING}', field]));

const CASES: Record<string, ConversionCase> = {
  'INTEGER to DOUBLE': {
    before: '{name: f, type: INTEGER}',
    after: '{name: f, type: DOUBLE}',
    rows: [
      [5, 5],
      [-3, -3],
      [undefined, undefined],
    ],
  },
  'INTEGER to DECIMAL (indexed, sortable)': {
    before: '{name: f, type: INTEGER}',
    after: '{name: f, type: DECIMAL, index: true}',
    rows: [
      [42, '42'],
      [-7, '-7'],
      [100, '100'],
    ],
    order: ['r1', 'r0', 'r2'],
  },
  'STRING gains index: ci (a case-insensitive index on the folded text)': {
    before: '{name: f, type: STRING}',
    after: '{name: f, type: STRING, index: ci}',
    rows: [
      ['Émile', 'Émile'],
      ['zoë', 'zoë'],
      [undefined, undefined],
    ],
  },
  'index: ci becomes index: true': {
    before: '{name: f, type: STRING, index: ci}',
    after: '{name: f, type: STRING, index: true}',
    rows: [['Émile', 'Émile']],
  },
  'index: ci removed, from an ENUM that becomes STRING': {
    before: '{name: f, type: ENUM, enums: [A, B], index: ci}',
    after: '{name: f, type: STRING}',
    rows: [['A', 'A']],
  },
  'DOUBLE to DECIMAL (shortest round-trip digits)': {
    before: '{name: f, type: DOUBLE}',
    after: '{name: f, type: DECIMAL}',
    rows: [
      [0.1, '0.1'],
      [1e21, '1000000000000000000000'],
      [0.30000000000000004, '0.30000000000000004'],
      [2, '2'],
      [1.5e-7, '0.00000015'],
      [-0.5, '-0.5'],
    ],
    order: ['r5', 'r4', 'r0', 'r2', 'r3', 'r1'],
  },
  'DOUBLE to STRING': {
    before: '{name: f, type: DOUBLE}',
    after: '{name: f, type: STRING}',
    rows: [
      [0.1, '0.1'],
      [1e21, '1000000000000000000000'],
      [2, '2'],
      [-1.25, '-1.25'],
    ],
  },
  'INTEGER to STRING': {
    before: '{name: f, type: INTEGER}',
    after: '{name: f, type: STRING}',
    rows: [
      [42, '42'],
      [-1, '-1'],
    ],
  },
  'DECIMAL to STRING': {
    before: '{name: f, type: DECIMAL, index: true}',
    after: '{name: f, type: STRING}',
    rows: [
      ['19.99', '19.99'],
      ['-0.001', '-0.001'],
    ],
  },
  'BOOL to STRING': {
    before: '{name: f, type: BOOL}',
    after: '{name: f, type: STRING}',
    rows: [
      [true, 'true'],
      [false, 'false'],
      [undefined, undefined],
    ],
  },
  'DATE and DATE_TIME to STRING': {
    before: '{name: f, type: DATE_TIME}',
    after: '{name: f, type: STRING}',
    rows: [['2024-05-01T10:20:30.123Z', '2024-05-01T10:20:30.123Z']],
  },
  'DATE to STRING': {
    before: '{name: f, type: DATE}',
    after: '{name: f, type: STRING}',
    rows: [['0999-12-31', '0999-12-31']],
  },
  'DATE to DATE_TIME': {
    before: '{name: f, type: DATE}',
    after: '{name: f, type: DATE_TIME}',
    rows: [['2024-05-01', '2024-05-01T00:00:00.000Z']],
  },
  'ENUM to STRING': {
    before: '{name: f, type: ENUM, enums: [A, B]}',
    after: '{name: f, type: STRING}',
    rows: [['A', 'A']],
  },
  'ENUM values added and respelled': {
    before: '{name: f, type: ENUM, enums: [cm, in]}',
    after: '{name: f, type: ENUM, enums: [CM, in, mm]}',
    rows: [
      ['cm', 'CM'],
      ['in', 'in'],
    ],
  },
  'scalars to ANY': {
    before: '{name: f, type: DECIMAL}',
    after: '{name: f, type: ANY}',
    rows: [
      ['1.5', '1.5'],
      [undefined, undefined],
    ],
  },
  'BOOL to ANY': {
    before: '{name: f, type: BOOL}',
    after: '{name: f, type: ANY}',
    rows: [
      [true, true],
      [false, false],
    ],
  },
  'STRING to ANY': {
    before: '{name: f, type: STRING}',
    after: '{name: f, type: ANY}',
    rows: [["it's", "it's"]],
  },
  'OBJECT widened (optional inner field added) then to ANY': {
    before: '{name: f, type: OBJECT, object: {fields: [{name: a, type: INTEGER}]}}',
    after: '{name: f, type: ANY}',
    rows: [[{ a: 1 }, { a: 1 }]],
  },
  'OBJECT loses an inner field (allowed)': {
    before:
      '{name: f, type: OBJECT, object: {fields: [{name: a, type: INTEGER}, {name: b, type: STRING}]}}',
    after: '{name: f, type: OBJECT, object: {fields: [{name: a, type: INTEGER}]}}',
    rows: [
      [{ a: 1, b: 'x' }, { a: 1 }],
      [{ b: 'y' }, {}],
    ],
    allowDataLoss: true,
  },
  'DOUBLE to INTEGER (allowed): truncated': {
    before: '{name: f, type: DOUBLE}',
    after: '{name: f, type: INTEGER}',
    rows: [
      [2.7, 2],
      [-2.7, -2],
      [3, 3],
    ],
    allowDataLoss: true,
  },
  'DECIMAL to INTEGER (allowed): truncated': {
    before: '{name: f, type: DECIMAL}',
    after: '{name: f, type: INTEGER}',
    rows: [
      ['19.99', 19],
      ['-1.5', -1],
    ],
    allowDataLoss: true,
  },
  'DECIMAL to DOUBLE (allowed)': {
    before: '{name: f, type: DECIMAL}',
    after: '{name: f, type: DOUBLE}',
    rows: [['0.1', 0.1]],
    allowDataLoss: true,
  },
  'DATE_TIME to DATE (allowed)': {
    before: '{name: f, type: DATE_TIME}',
    after: '{name: f, type: DATE}',
    rows: [['2024-05-01T23:59:59.000Z', '2024-05-01']],
    allowDataLoss: true,
  },
  'STRING to ENUM (allowed): others reset to the default': {
    before: '{name: f, type: STRING}',
    after: '{name: f, type: ENUM, enums: [NEW, PAID], default: NEW}',
    rows: [
      ['paid', 'PAID'],
      ['PAID', 'PAID'],
      ['other', 'NEW'],
      [undefined, undefined],
    ],
    allowDataLoss: true,
  },
  'ENUM loses a value (allowed): reset to absent': {
    before: '{name: f, type: ENUM, enums: [A, B]}',
    after: '{name: f, type: ENUM, enums: [A]}',
    rows: [
      ['A', 'A'],
      ['B', undefined],
    ],
    allowDataLoss: true,
  },
  'STRING to INTEGER (allowed): no conversion, values discarded': {
    before: '{name: f, type: STRING}',
    after: '{name: f, type: INTEGER}',
    rows: [['5', undefined]],
    allowDataLoss: true,
  },
  'optional to required with default (DECIMAL, sortable)': {
    before: '{name: f, type: DECIMAL, index: true}',
    after: '{name: f, type: DECIMAL, index: true, required: true, default: "2.50"}',
    rows: [
      [undefined, '2.5'],
      ['10', '10'],
      ['-1', '-1'],
    ],
    order: ['r2', 'r0', 'r1'],
  },
  'required to optional': {
    before: '{name: f, type: STRING, required: true}',
    after: '{name: f, type: STRING}',
    rows: [['x', 'x']],
  },
  'optional to required with default (BOOL)': {
    before: '{name: f, type: BOOL}',
    after: '{name: f, type: BOOL, required: true, default: false}',
    rows: [
      [undefined, false],
      [true, true],
    ],
  },
};

for (const dialect of DIALECTS) {
  const describeOn = dialect.name === 'postgres' ? describeWithPostgres : describe;
  describeOn(`migrations on ${dialect.name}`, () => {
    it.each(Object.entries(CASES))('%s', async (_name, testCase) => {
      const before = T(testCase.before);
      const after = T(testCase.after);
      const database = dialect.fresh();
      const [oldTable] = tablesOf(before);
      const [newTable] = tablesOf(after);
      await withDriver(database, async (driver) => {
        await driver.open([oldTable!], { migrations: [] });
        const records = testCase.rows.map(([stored], index) =>
          stored === undefined ? { id: `r${index}` } : { id: `r${index}`, f: stored },
        );
        await driver.insert(oldTable!, records as StoredFields[], 1000);
      });
      const migration = maybeMigration(dialect.name, before, after, testCase);
      await withDriver(database, async (driver) => {
        const applied: string[] = [];
        await driver.open([newTable!], {
          migrations: migration === undefined ? [] : [migration],
          onMigrationsApplied: (ids) => applied.push(...ids),
        });
        expect(applied).toEqual(migration === undefined ? [] : [migration.id]);
        for (const [index, [, expected]] of testCase.rows.entries()) {
          const stored = await driver.get(newTable!, [`r${index}`]);
          expect(stored?.record).toEqual(
            expected === undefined ? { id: `r${index}` } : { id: `r${index}`, f: expected },
          );
          expect(stored?.version).toBe(1);
          expect(stored?.createdAt).toBe(1000);
        }
        if (testCase.order !== undefined) {
          const listed = await driver.list(newTable!, {
            filters: [],
            orderBy: [{ column: 'f', descending: false }],
          });
          expect(listed.map((row) => row.record['id'])).toEqual(testCase.order);
        }
        // The table is exactly what the driver would create for the new schema.
        const fresh = dialect.fresh();
        await withDriver(fresh, (other) => other.open([newTable!], { migrations: [] }));
        const layout = await database.layout();
        if (dialect.name === 'sqlite') {
          const f = newTable!.columns[1]!;
          expect(layout).toContain(
            `column t.f ${sqliteType(f.kind)}${f.required ? ' NOT NULL' : ''}`,
          );
        } else {
          expect(layout.some((line) => line.startsWith('column t.f '))).toBe(true);
        }
        expect(layout).toEqual(await fresh.layout());
        if (process.env['SHOW_LAYOUT'] === '1') console.log(layout);
        // The table takes writes in its new shape.
        const sample = testCase.rows.find(([, expected]) => expected !== undefined)?.[1];
        await driver.insert(
          newTable!,
          [{ id: 'new', ...(sample === undefined ? {} : { f: sample }) }],
          2000,
        );
        expect((await driver.get(newTable!, ['new']))?.record['f']).toEqual(sample);
      });
    });

    /** The database's tables are exactly what the driver creates for `tables` in a new one. */
    const expectLayoutOf = async (database: Database, tables: TableDescriptor[]): Promise<void> => {
      const fresh = dialect.fresh();
      await withDriver(fresh, (driver) => driver.open(tables, { migrations: [] }));
      expect(await database.layout()).toEqual(await fresh.layout());
    };

    it('switches softDelete on and off, keeping the live records (SPEC §13)', async () => {
      const fields = ['{name: id, type: STRING}', '{name: name, type: STRING}'];
      const plain = schema(entity('CUSTOMER', ['id'], fields));
      const soft = schema(entity('CUSTOMER', ['id'], fields, 'softDelete: true'));
      const database = dialect.fresh();
      const [plainTable] = tablesOf(plain);
      const [softTable] = tablesOf(soft);
      expect(softTable!.softDelete).toBe(true);
      await withDriver(database, async (driver) => {
        await driver.open([plainTable!], { migrations: [] });
        await driver.insert(plainTable!, [{ id: 'a', name: 'Ann' }, { id: 'b' }], 1);
      });
      const on = migrationFor(dialect.name, plain, soft);
      await withDriver(database, async (driver) => {
        await driver.open([softTable!], { migrations: [on] });
        expect((await driver.get(softTable!, ['a']))?.record).toEqual({ id: 'a', name: 'Ann' });
        await driver.delete(softTable!, ['a'], undefined, 2, { by: 'ann' });
        expect(await driver.get(softTable!, ['a'])).toBeUndefined();
        expect(await driver.getDeleted?.(softTable!, ['a'])).toMatchObject({
          record: { id: 'a', name: 'Ann' },
          version: 2,
          deletedAt: 2,
          deletedBy: 'ann',
        });
        expect(await driver.count(softTable!, { filters: [], deleted: 'include' })).toBe(2);
      });
      await expectLayoutOf(database, [softTable!]);
      // Off again: the soft-deleted record would be purged, so it needs --allow-data-loss.
      const refused = planBetween(soft, plain);
      expect(refused.diagnostics.map((diagnostic) => diagnostic.code)).toEqual([
        'MIGRATION_REMOVES_SOFT_DELETE',
      ]);
      const off = migrationFor(dialect.name, soft, plain, {
        allowDataLoss: true,
        existingMigrations: [on.id],
      });
      await withDriver(database, async (driver) => {
        await driver.open([plainTable!], { migrations: [on, off] });
        expect(await driver.get(plainTable!, ['a'])).toBeUndefined();
        expect(await driver.count(plainTable!, { filters: [] })).toBe(1);
        expect((await driver.get(plainTable!, ['b']))?.record).toEqual({ id: 'b' });
      });
      await expectLayoutOf(database, [plainTable!]);
    });

    it('creates a searchable entity as the driver would (SPEC §17)', async () => {
      const note = entity('NOTE', ['id'], ['{name: id, type: STRING}']);
      const article = entity(
        'ARTICLE',
        ['id'],
        ['{name: id, type: STRING}', '{name: title, type: STRING}'],
        'search: [title]',
      );
      const tables = tablesOf(schema(note, article));
      const noteTable = tables.find((table) => table.entity === 'NOTE')!;
      const articleTable = tables.find((table) => table.entity === 'ARTICLE')!;
      const database = dialect.fresh();
      await withDriver(database, (driver) => driver.open([noteTable], { migrations: [] }));
      const add = migrationFor(dialect.name, schema(note), schema(note, article));
      await withDriver(database, async (driver) => {
        await driver.open(tables, { migrations: [add] });
        await driver.insert(articleTable, [{ id: 'a', title: 'Steel hammer' }], 1);
        expect(await driver.count(articleTable, { filters: [], search: ['hamm'] })).toBe(1);
      });
      await expectLayoutOf(database, tables);
    });

    it('switches full-text search on and off, indexing the records already stored (SPEC §17)', async () => {
      const fields = [
        '{name: id, type: STRING}',
        '{name: title, type: STRING}',
        '{name: body, type: STRING}',
      ];
      const renamedFields = [
        '{name: id, type: STRING}',
        '{name: heading, type: STRING, renamedFrom: title}',
        '{name: body, type: STRING}',
      ];
      const plain = schema(entity('ARTICLE', ['id'], fields));
      const searchable = schema(entity('ARTICLE', ['id'], fields, 'search: [title, body]'));
      const renamed = schema(
        entity('ARTICLE', ['id'], renamedFields, 'search: [heading]\n  searchLanguage: english'),
      );
      const [plainTable] = tablesOf(plain);
      const [searchTable] = tablesOf(searchable);
      const [renamedTable] = tablesOf(renamed);
      expect(searchTable!.search).toEqual({ fields: ['title', 'body'], language: 'simple' });
      const found = async (driver: StorageDriver, table: TableDescriptor, words: string[]) =>
        (await driver.list(table, { filters: [], orderBy: [], search: words })).map(
          (row) => row.record['id'],
        );
      const database = dialect.fresh();
      await withDriver(database, async (driver) => {
        await driver.open([plainTable!], { migrations: [] });
        await driver.insert(
          plainTable!,
          [
            { id: 'a', title: 'Steel hammers', body: 'Heavy' },
            { id: 'b', title: 'Wooden spoon' },
            { id: 'c', body: 'steel wool' },
          ],
          1,
        );
      });
      const on = migrationFor(dialect.name, plain, searchable);
      await withDriver(database, async (driver) => {
        await driver.open([searchTable!], { migrations: [on] });
        expect((await found(driver, searchTable!, ['steel'])).sort()).toEqual(['a', 'c']);
        expect(await found(driver, searchTable!, ['hea'])).toEqual(['a']);
        await driver.insert(searchTable!, [{ id: 'd', title: 'Steel heart' }], 2);
        expect(await driver.count(searchTable!, { filters: [], search: ['steel', 'hea'] })).toBe(2);
      });
      await expectLayoutOf(database, [searchTable!]);
      // A searched field renamed, the search narrowed and its language changed: built again.
      const rename = migrationFor(dialect.name, searchable, renamed, {
        existingMigrations: [on.id],
      });
      await withDriver(database, async (driver) => {
        await driver.open([renamedTable!], { migrations: [on, rename] });
        expect((await found(driver, renamedTable!, ['steel'])).sort()).toEqual(['a', 'd']);
        // The english configuration stems on PostgreSQL (hammers → hammer); SQLite does not.
        expect(await found(driver, renamedTable!, ['hammers'])).toEqual(['a']);
        await driver.delete(renamedTable!, ['a'], undefined, 3);
        expect(await found(driver, renamedTable!, ['steel'])).toEqual(['d']);
      });
      await expectLayoutOf(database, [renamedTable!]);
      const [plainRenamed] = tablesOf(schema(entity('ARTICLE', ['id'], renamedFields)));
      const off = migrationFor(
        dialect.name,
        renamed,
        schema(entity('ARTICLE', ['id'], renamedFields)),
        {
          existingMigrations: [on.id, rename.id],
        },
      );
      await withDriver(database, async (driver) => {
        await driver.open([plainRenamed!], { migrations: [on, rename, off] });
        await driver.insert(plainRenamed!, [{ id: 'e', heading: 'Steel' }], 4);
        expect(await driver.count(plainRenamed!, { filters: [] })).toBe(4);
      });
      await expectLayoutOf(database, [plainRenamed!]);
    });

    it("renames and re-keys a softDelete table with its live rows' index (SPEC §13)", async () => {
      const fields = ['{name: id, type: STRING}', '{name: code, type: STRING}'];
      const soft = schema(entity('CUSTOMER', ['id'], fields, 'softDelete: true'));
      const renamed = schema(
        entity('CLIENT', ['id'], fields, 'softDelete: true\n  renamedFrom: CUSTOMER'),
      );
      const rekeyed = schema(entity('CLIENT', ['code'], fields, 'softDelete: true'));
      const database = dialect.fresh();
      const [softTable] = tablesOf(soft);
      const [renamedTable] = tablesOf(renamed);
      const [rekeyedTable] = tablesOf(rekeyed);
      await withDriver(database, async (driver) => {
        await driver.open([softTable!], { migrations: [] });
        await driver.insert(
          softTable!,
          [
            { id: 'a', code: 'A' },
            { id: 'b', code: 'B' },
          ],
          1,
        );
        await driver.delete(softTable!, ['b'], undefined, 2);
      });
      const rename = migrationFor(dialect.name, soft, renamed);
      if (dialect.name === 'postgres') {
        // The index follows the table instead of staying behind under the old name.
        expect(rename.sql).toContain(
          'ALTER INDEX IF EXISTS "customer__live" RENAME TO "client__live"',
        );
      }
      await withDriver(database, async (driver) => {
        await driver.open([renamedTable!], { migrations: [rename] });
        const listed = await driver.list(renamedTable!, { filters: [], orderBy: [] });
        expect(listed.map((row) => row.record['id'])).toEqual(['a']);
      });
      await expectLayoutOf(database, [renamedTable!]);
      const rekey = migrationFor(dialect.name, renamed, rekeyed, {
        allowDataLoss: true,
        existingMigrations: [rename.id],
      });
      await withDriver(database, async (driver) => {
        await driver.open([rekeyedTable!], { migrations: [rename, rekey] });
        const listed = await driver.list(rekeyedTable!, { filters: [], orderBy: [] });
        expect(listed.map((row) => row.record['code'])).toEqual(['A']);
        expect(await driver.count(rekeyedTable!, { filters: [], deleted: 'only' })).toBe(1);
      });
      await expectLayoutOf(database, [rekeyedTable!]);
    });

    it('switches history on without a migration, follows a renamed entity and deletes the versions when switched off (SPEC §13)', async () => {
      const fields = ['{name: id, type: STRING}', '{name: name, type: STRING}'];
      const plain = schema(entity('CUSTOMER', ['id'], fields));
      const kept = schema(entity('CUSTOMER', ['id'], fields, 'history: true'));
      const renamed = schema(
        entity('CLIENT', ['id'], fields, 'history: true\n  renamedFrom: CUSTOMER'),
      );
      const renamedPlain = schema(entity('CLIENT', ['id'], fields));
      const database = dialect.fresh();
      const [plainTable] = tablesOf(plain);
      const [keptTable] = tablesOf(kept);
      const [renamedTable] = tablesOf(renamed);
      const [renamedPlainTable] = tablesOf(renamedPlain);
      expect(keptTable!.history).toBe(true);
      await withDriver(database, async (driver) => {
        await driver.open([plainTable!], { migrations: [] });
        await driver.insert(plainTable!, [{ id: 'a', name: 'Ann' }], 1);
      });
      // On: nothing to migrate; versions are kept from the next write on.
      expect(maybeMigration(dialect.name, plain, kept)).toBeUndefined();
      await withDriver(database, async (driver) => {
        await driver.open([keptTable!], { migrations: [] });
        expect(await driver.history!(keptTable!, ['a'], 10)).toEqual([]);
        await driver.update(keptTable!, ['a'], { id: 'a', name: 'Anna' }, 1, 2, { by: 'ann' });
        expect(await driver.history!(keptTable!, ['a'], 10)).toEqual([
          { version: 1, op: 'updated', timeUnix: 2, by: 'ann', record: '{"id":"a","name":"Anna"}' },
        ]);
      });
      // A renamed entity keeps its versions.
      const rename = migrationFor(dialect.name, kept, renamed);
      await withDriver(database, async (driver) => {
        await driver.open([renamedTable!], { migrations: [rename] });
        expect((await driver.history!(renamedTable!, ['a'], 10)).map((v) => v.version)).toEqual([
          1,
        ]);
      });
      // Off: the versions would be deleted, so it needs --allow-data-loss.
      const refused = planBetween(renamed, renamedPlain, { existingMigrations: [rename.id] });
      expect(refused.diagnostics.map((diagnostic) => diagnostic.code)).toEqual([
        'MIGRATION_REMOVES_HISTORY',
      ]);
      const off = migrationFor(dialect.name, renamed, renamedPlain, {
        allowDataLoss: true,
        existingMigrations: [rename.id],
      });
      await withDriver(database, async (driver) => {
        await driver.open([renamedPlainTable!], { migrations: [rename, off] });
        expect(await driver.history!(renamedTable!, ['a'], 10)).toEqual([]);
        expect((await driver.get(renamedPlainTable!, ['a']))?.record).toEqual({
          id: 'a',
          name: 'Anna',
        });
      });
    });

    it('adds, renames and removes fields and entities, keeping records', async () => {
      const before = schema(
        entity(
          'CUSTOMER',
          ['id'],
          [
            '{name: id, type: STRING}',
            '{name: name, type: STRING, required: true, index: true}',
            '{name: price, type: DECIMAL, index: true}',
            '{name: legacy, type: DECIMAL, index: true}',
          ],
        ),
        entity('OLD', ['id'], ['{name: id, type: INTEGER}']),
      );
      const after = schema(
        entity(
          'CLIENT',
          ['id'],
          [
            '{name: id, type: STRING}',
            '{name: fullName, type: STRING, required: true, index: true, renamedFrom: name}',
            '{name: cost, type: DECIMAL, index: true, renamedFrom: price}',
            '{name: tier, type: INTEGER, required: true, default: 1, index: true}',
            '{name: amount, type: DECIMAL, required: true, default: "0.5", index: true}',
          ],
          'renamedFrom: CUSTOMER',
        ),
        entity(
          'NEW',
          ['id'],
          ['{name: id, type: STRING}', '{name: at, type: DATE_TIME, index: true}'],
        ),
      );
      const database = dialect.fresh();
      await withDriver(database, async (driver) => {
        const tables = tablesOf(before);
        await driver.open(tables, { migrations: [] });
        await driver.insert(
          tables[0]!,
          [
            { id: 'a', name: 'Ann', price: '10', legacy: '1' },
            { id: 'b', name: 'Bob', price: '9.5' },
          ],
          1,
        );
        await driver.insert(tables[1]!, [{ id: 1 }], 1);
      });
      const migration = migrationFor(dialect.name, before, after, { allowDataLoss: true });
      await withDriver(database, async (driver) => {
        const tables = tablesOf(after);
        await driver.open(tables, { migrations: [migration] });
        const client = tables.find((table) => table.entity === 'CLIENT')!;
        expect((await driver.get(client, ['a']))?.record).toEqual({
          id: 'a',
          fullName: 'Ann',
          cost: '10',
          tier: 1,
          amount: '0.5',
        });
        const byCost = await driver.list(client, {
          filters: [
            { anyOf: [{ path: ['cost'], operator: 'GT', kind: 'decimal', value: '9.75' }] },
          ],
          orderBy: [{ column: 'cost', descending: true }],
        });
        expect(byCost.map((row) => row.record['id'])).toEqual(['a']);
        expect(Object.keys(await driver.activity())).toContain('CLIENT');
        const fresh = tables.find((table) => table.entity === 'NEW')!;
        await driver.insert(fresh, [{ id: 'x', at: '2024-01-01T00:00:00.000Z' }], 2);
        expect((await driver.get(fresh, ['x']))?.record).toEqual({
          id: 'x',
          at: '2024-01-01T00:00:00.000Z',
        });
      });
      await expectLayoutOf(database, tablesOf(after));
    });

    /** Table T keyed by id with the given fields (besides id) and `indexes:` entries. */
    const indexed = (fields: string[], indexes: string[]): string =>
      schema(
        entity(
          'T',
          ['id'],
          ['{name: id, type: STRING}', ...fields],
          indexes.length === 0 ? '' : `indexes: [${indexes.join(', ')}]`,
        ),
      );
    const C = '{name: c, type: STRING}';
    const P = '{name: p, type: DECIMAL}';
    const N = '{name: n, type: INTEGER}';

    it.each<[string, { before: string; after: string }]>([
      [
        'an index is added',
        { before: indexed([C, P, N], []), after: indexed([C, P, N], ['[c, -p]']) },
      ],
      [
        'an index is removed',
        { before: indexed([C, P, N], ['[c, -p]']), after: indexed([C, P, N], []) },
      ],
      [
        'an index changes direction and gains a field',
        { before: indexed([C, P, N], ['[c, -p]']), after: indexed([C, P, N], ['[c, p, n]']) },
      ],
      [
        'a field of an index is renamed',
        {
          before: indexed(['{name: c0, type: STRING}', P, N], ['[c0, -p]']),
          after: indexed(['{name: c, type: STRING, renamedFrom: c0}', P, N], ['[c, -p]']),
        },
      ],
      [
        'a field of an index is removed',
        { before: indexed([C, P, N], ['[c, -p]', '[n, p]']), after: indexed([C, N], ['[n]']) },
      ],
      [
        'a field of an index changes type',
        {
          before: indexed([C, P, N], ['[c, -n]']),
          after: indexed([C, P, '{name: n, type: DOUBLE}'], ['[c, -n]']),
        },
      ],
    ])('composite indexes: %s', async (_name, { before, after }) => {
      const ids = Array.from({ length: 30 }, (_, i) => i);
      const id = (i: number): string => `r${String(i).padStart(2, '0')}`;
      const database = dialect.fresh();
      await withDriver(database, async (driver) => {
        const [table] = tablesOf(before);
        await driver.open([table!], { migrations: [] });
        const c = table!.columns[1]!.name;
        await driver.insert(
          table!,
          ids.map((i) => ({ id: id(i), [c]: `c${i % 3}`, p: String(i % 7), n: i % 5 })),
          1,
        );
      });
      const migration = migrationFor(dialect.name, before, after, { allowDataLoss: true });
      await withDriver(database, async (driver) => {
        const [table] = tablesOf(after);
        await driver.open([table!], { migrations: [migration] });
        // A filtered, sorted page still answers as before the migration.
        const page = await driver.list(table!, {
          filters: [{ anyOf: [{ path: ['c'], operator: 'EQUALS', kind: 'text', value: 'c1' }] }],
          orderBy: [{ column: 'n', descending: true }],
          limit: 4,
        });
        const expected = ids
          .filter((i) => i % 3 === 1)
          .sort((x, y) => (y % 5) - (x % 5) || y - x)
          .slice(0, 4)
          .map(id);
        expect(page.map((row) => row.record['id'])).toEqual(expected);
      });
      // Exactly the indexes (names, columns, directions) the driver creates in a new database.
      await expectLayoutOf(database, tablesOf(after));
    });

    it('re-keys a table (allowed), dropping records without or with a duplicate new key', async () => {
      const before = schema(
        entity('ITEM', ['id'], ['{name: id, type: INTEGER}', '{name: code, type: STRING}']),
      );
      const after = schema(
        entity('ITEM', ['code'], ['{name: id, type: INTEGER}', '{name: code, type: STRING}']),
      );
      const database = dialect.fresh();
      await withDriver(database, async (driver) => {
        const [table] = tablesOf(before);
        await driver.open([table!], { migrations: [] });
        await driver.insert(
          table!,
          [{ id: 1, code: 'a' }, { id: 2, code: 'b' }, { id: 3, code: 'a' }, { id: 4 }],
          1,
        );
      });
      const migration = migrationFor(dialect.name, before, after, { allowDataLoss: true });
      await withDriver(database, async (driver) => {
        const [table] = tablesOf(after);
        await driver.open([table!], { migrations: [migration] });
        const rows = await driver.list(table!, { filters: [], orderBy: [] });
        expect(rows.map((row) => row.record)).toEqual([
          { id: 1, code: 'a' },
          { id: 2, code: 'b' },
        ]);
      });
      await expectLayoutOf(database, tablesOf(after));
    });

    it('moves an entity to and from single-record without a key field, keeping its record', async () => {
      const fields = ['{name: theme, type: STRING, required: true}'];
      const steps = [
        // A plain entity with two records.
        schema(entity('PREF', ['id'], ['{name: id, type: STRING}', ...fields])),
        // Becomes single-record without a key field (as Gemini declares one): one record stays.
        schema(entity('PREF', [], fields, 'singleRecord: true')),
        // Gains a field.
        schema(
          entity(
            'PREF',
            [],
            [...fields, '{name: size, type: INTEGER, default: 3}'],
            'singleRecord: true',
          ),
        ),
        // Its record gets another id.
        schema(
          entity(
            'PREF',
            [],
            [...fields, '{name: size, type: INTEGER, default: 3}'],
            'singleRecord: true\n  lkValue: main',
          ),
        ),
        // Back to a plain entity keyed by a new field.
        schema(
          entity(
            'PREF',
            ['id'],
            [
              '{name: id, type: STRING, default: main}',
              ...fields,
              '{name: size, type: INTEGER, default: 3}',
            ],
          ),
        ),
      ];
      const database = dialect.fresh();
      await withDriver(database, async (driver) => {
        const [table] = tablesOf(steps[0]!);
        await driver.open([table!], { migrations: [] });
        await driver.insert(
          table!,
          [
            { id: 'b', theme: 'light' },
            { id: 'a', theme: 'dark' },
          ],
          1,
        );
      });
      const migrations: MigrationScript[] = [];
      const expected: [KeyValue, StoredFields][] = [
        ['_singlerec_lk', { theme: 'dark' }],
        ['_singlerec_lk', { theme: 'dark', size: 3 }],
        ['main', { theme: 'dark', size: 3 }],
        ['main', { id: 'main', theme: 'dark', size: 3 }],
      ];
      for (const [index, [id, record]] of expected.entries()) {
        migrations.push(
          migrationFor(dialect.name, steps[index]!, steps[index + 1]!, {
            allowDataLoss: true,
            existingMigrations: migrations.map((migration) => migration.id),
          }),
        );
        const [table] = tablesOf(steps[index + 1]!);
        await withDriver(database, async (driver) => {
          await driver.open([table!], { migrations });
          const rows = await driver.list(table!, { filters: [], orderBy: [] });
          expect(rows.map((row) => row.record)).toEqual([record]);
          expect((await driver.get(table!, [id]))?.record).toEqual(record);
          expect(await driver.count(table!, { filters: [] })).toBe(1);
        });
        await expectLayoutOf(database, [table!]);
      }
    });

    describe('bookkeeping', () => {
      const ONE = tablesOf(T('{name: f, type: STRING}'));
      const addColumn = (id: string, column: string): MigrationScript => ({
        id,
        sql:
          dialect.name === 'sqlite'
            ? `ALTER TABLE "t" ADD COLUMN "${column}" TEXT;`
            : `ALTER TABLE "t" ADD COLUMN "${column}" TEXT COLLATE "C";`,
      });
      const columnsOf = async (driver: StorageDriver): Promise<string[]> => {
        // A table with every column: read one row back through a raw descriptor.
        const probe = await driver.list(ONE[0]!, { filters: [], orderBy: [] });
        return probe.map((row) => String(row.record['id']));
      };

      it('records every migration of a new database as applied without running it', async () => {
        const database = dialect.fresh();
        const broken: MigrationScript = { id: '0002_broken_00000000', sql: 'THIS IS NOT SQL;' };
        await withDriver(database, async (driver) => {
          const applied: string[] = [];
          await driver.open(ONE, {
            migrations: [broken],
            onMigrationsApplied: (ids) => applied.push(...ids),
          });
          expect(applied).toEqual([]);
          await driver.insert(ONE[0]!, [{ id: 'x', f: 'y' }], 1);
        });
        // The baseline is recorded: the same migrations start cleanly again.
        await withDriver(database, async (driver) => {
          await driver.open(ONE, { migrations: [broken] });
          expect(await columnsOf(driver)).toEqual(['x']);
        });
      });

      it('refuses to start when the database is ahead of the code', async () => {
        const database = dialect.fresh();
        await withDriver(database, (driver) => driver.open(ONE, { migrations: [] }));
        await withDriver(database, (driver) =>
          driver.open(ONE, { migrations: [addColumn('0002_extra_11111111', 'extra')] }),
        );
        const error = await withDriver(database, (driver) =>
          driver.open(ONE, { migrations: [] }).then(
            () => undefined,
            (failure: unknown) => failure,
          ),
        );
        expect(isMigrationError(error)).toBe(true);
        expect((error as Error).message).toContain('The database is ahead of the code');
        expect((error as Error).message).toContain('0002_extra_11111111');
      });

      it('refuses an applied migration whose file changed', async () => {
        const database = dialect.fresh();
        const original = addColumn('0002_extra_11111111', 'extra');
        await withDriver(database, (driver) => driver.open(ONE, { migrations: [] }));
        await withDriver(database, (driver) => driver.open(ONE, { migrations: [original] }));
        const edited = { ...original, sql: `${original.sql}\n-- edited` };
        await expect(
          withDriver(database, (driver) => driver.open(ONE, { migrations: [edited] })),
        ).rejects.toThrow(/0002_extra_11111111 changed after they were applied/);
        // Line ends do not count.
        const crlf = { ...original, sql: original.sql.replace(/\n/g, '\r\n') };
        expect(migrationChecksum(crlf.sql)).toBe(migrationChecksum(original.sql));
      });

      it('rolls back every pending migration when one fails', async () => {
        const database = dialect.fresh();
        await withDriver(database, (driver) => driver.open(ONE, { migrations: [] }));
        const good = addColumn('0002_good_11111111', 'good');
        const bad: MigrationScript = {
          id: '0003_bad_22222222',
          sql: 'ALTER TABLE "nowhere" ADD COLUMN "x" TEXT;',
        };
        const error = await withDriver(database, (driver) =>
          driver.open(ONE, { migrations: [good, bad] }).then(
            () => undefined,
            (failure: unknown) => failure,
          ),
        );
        expect(isMigrationError(error) && error.code).toBe('MIGRATION_FAILED');
        expect((error as Error).message).toMatch(
          /^Migration 0003_bad_22222222 failed, nothing was changed: /,
        );
        // Neither ran: applying the good one alone works (its column does not exist yet).
        await withDriver(database, (driver) => driver.open(ONE, { migrations: [good] }));
      });

      it('applies the migrations of two branches in either order', async () => {
        const base = T('{name: f, type: STRING}');
        const branchA = schema(
          entity(
            'T',
            ['id'],
            [
              '{name: id, type: STRING}',
              '{name: f, type: STRING}',
              '{name: a, type: INTEGER, default: 7}',
            ],
          ),
        );
        const branchB = schema(
          entity('T', ['id'], ['{name: id, type: STRING}', '{name: f, type: STRING, index: true}']),
          entity('U', ['id'], ['{name: id, type: STRING}']),
        );
        const merged = schema(
          entity(
            'T',
            ['id'],
            [
              '{name: id, type: STRING}',
              '{name: f, type: STRING, index: true}',
              '{name: a, type: INTEGER, default: 7}',
            ],
          ),
          entity('U', ['id'], ['{name: id, type: STRING}']),
        );
        const existing = [
          '0001_create-t_01234567.sqlite.sql',
          '0001_create-t_01234567.postgres.sql',
        ];
        const a = migrationFor(dialect.name, base, branchA, { existingMigrations: existing });
        const b = migrationFor(dialect.name, base, branchB, { existingMigrations: existing });
        expect(a.id.slice(0, 5)).toBe('0002_');
        expect(b.id.slice(0, 5)).toBe('0002_');
        expect(a.id).not.toBe(b.id);
        const tables = tablesOf(merged);
        for (const order of [
          [a, b],
          [b, a],
        ]) {
          const database = dialect.fresh();
          await withDriver(database, async (driver) => {
            await driver.open(tablesOf(base), { migrations: [] });
            await driver.insert(tablesOf(base)[0]!, [{ id: 'x', f: '1.50' }], 1);
          });
          // One developer applied their branch first, then the merge brought the other one.
          await withDriver(database, (driver) =>
            driver.open(order[0]!.id === a.id ? tablesOf(branchA) : tablesOf(branchB), {
              migrations: [order[0]!],
            }),
          );
          await withDriver(database, async (driver) => {
            await driver.open(tables, { migrations: [a, b] });
            expect((await driver.get(tables[0]!, ['x']))?.record).toEqual({
              id: 'x',
              f: '1.50',
              a: 7,
            });
          });
          await expectLayoutOf(database, tables);
        }
      });

      it('loads the files of one dialect from a folder, in order', async () => {
        const { mkdirSync, writeFileSync } = await import('node:fs');
        const dir = join(root, `files-${dialect.name}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, '0010_b_22222222.sqlite.sql'), 'SELECT 10;');
        writeFileSync(join(dir, '0002_a_11111111.sqlite.sql'), 'SELECT 2;');
        writeFileSync(join(dir, '0002_a_11111111.postgres.sql'), 'SELECT 2;');
        writeFileSync(join(dir, 'README.md'), '');
        expect((await loadMigrations(dir, 'sqlite')).map((m) => m.id)).toEqual([
          '0002_a_11111111',
          '0010_b_22222222',
        ]);
        expect(await loadMigrations(join(dir, 'missing'), 'sqlite')).toEqual([]);
      });
    });
  });
}

describe('a database created before migrations existed', () => {
  it('gets every migration applied (its tables are at the first generation)', async () => {
    const database = DIALECTS[0]!.fresh();
    const before = T('{name: f, type: STRING}');
    const after = T('{name: f, type: STRING}\n    - {name: g, type: INTEGER, default: 3}');
    await withDriver(database, async (driver) => {
      await driver.open(tablesOf(before)); // no migration bookkeeping at all
      await driver.insert(tablesOf(before)[0]!, [{ id: 'x' }], 1);
    });
    const migration = migrationFor('sqlite', before, after);
    await withDriver(database, async (driver) => {
      await driver.open(tablesOf(after), { migrations: [migration] });
      expect((await driver.get(tablesOf(after)[0]!, ['x']))?.record).toEqual({ id: 'x', g: 3 });
    });
  });
});
