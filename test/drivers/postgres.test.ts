/**
 * The PostgreSQL driver against a real server: the shared driver contract plus PostgreSQL
 * specifics. Runs when `TEST_DATABASE_URL` names a PostgreSQL database, e.g.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/drivers/postgres
 *
 * Every contract case gets a fresh schema `eg_test_<pid>_<random>_<n>`; all of them are dropped
 * afterwards, so parallel runs against one database do not collide. The parts that need no server
 * (URL parsing, timestamp text) always run: test/runtime/postgres-url.test.ts.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { withPgClient } from '../helpers/pg-client.js';
import type { StorageDriver, TableDescriptor } from '../../runtime/src/driver.js';
import {
  isDuplicateKeyError,
  isHttpError,
  isStorageUnavailableError,
} from '../../runtime/src/errors.js';
import {
  PostgresDriver,
  openPostgres,
  parsePostgresUrl,
  type PostgresDriverOptions,
} from '../../runtime/src/postgres/index.js';
import { describeDriverContract } from './contract.js';

describeWith(POSTGRES, 'PostgreSQL driver', (url) => {
  const prefix = `eg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const schemas: string[] = [];
  const newSchema = (): string => {
    const schema = `${prefix}_${schemas.length}`;
    schemas.push(schema);
    return schema;
  };
  const driverFor = (
    schema: string,
    options: Partial<PostgresDriverOptions> = {},
  ): PostgresDriver => new PostgresDriver({ url, env: {}, schema, poolMax: 4, ...options });

  /** A raw client for set-up and inspection. */
  const admin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withPgClient(url, fn);

  afterAll(async () => {
    await admin(async (client) => {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
  });

  let current: string | undefined;
  describeDriverContract(
    'postgres',
    async () => {
      current = newSchema();
      return driverFor(current);
    },
    { reopen: async () => driverFor(current!) },
  );

  // ----------------------------------------------------------------------------------------------
  describe('PostgreSQL specifics', () => {
    const ITEMS: TableDescriptor = {
      entity: 'ITEMS',
      table: 'items',
      key: ['id'],
      columns: [
        { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
        { name: 'camelCase', kind: 'text', fieldType: 'STRING', required: false, indexed: true },
        { name: 'qty', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: true },
        { name: 'at', kind: 'datetime', fieldType: 'DATE_TIME', required: false, indexed: false },
        { name: 'day', kind: 'date', fieldType: 'DATE', required: false, indexed: false },
        { name: 'price', kind: 'decimal', fieldType: 'DECIMAL', required: false, indexed: false },
        { name: 'doc', kind: 'json', fieldType: 'OBJECT', required: false, indexed: true },
      ],
    };
    let schema: string;
    let driver: PostgresDriver;

    beforeAll(async () => {
      schema = newSchema();
      driver = driverFor(schema);
      await driver.open([ITEMS]);
    });

    afterAll(async () => {
      await driver.close();
    });

    it('getMany answers as get does, key by key, in the order asked, and sees its transaction', async () => {
      await driver.insert(
        ITEMS,
        Array.from({ length: 250 }, (_, i) => ({ id: `gm${i}`, qty: i, price: '1.50' })),
        1000,
      );
      const keys = Array.from({ length: 261 }, (_, i) => [`gm${(i * 37) % 261}`]);
      const one: unknown[] = [];
      for (const key of keys) one.push(await driver.get(ITEMS, key));
      const many = await driver.getMany(ITEMS, keys);
      expect(many).toEqual(one);
      expect(many.filter((found) => found === undefined)).toHaveLength(11);
      expect(await driver.getMany(ITEMS, [])).toEqual([]);
      const seven = await driver.get(ITEMS, ['gm7']);
      expect(seven?.record).toEqual({ id: 'gm7', qty: 7, price: '1.50' });
      expect(await driver.getMany(ITEMS, [['gm7'], ['gm7']])).toEqual([seven, seven]);
      await driver.transaction(async () => {
        await driver.insert(ITEMS, [{ id: 'gm-new', qty: 1 }], 1001);
        const [fresh, old] = await driver.getMany(ITEMS, [['gm-new'], ['gm1']]);
        expect(fresh?.record).toEqual({ id: 'gm-new', qty: 1 });
        expect(old?.version).toBe(1);
      });
    });

    it('updateMany: all records in one statement at their next versions with consecutive changes, or none', async () => {
      await driver.insert(
        ITEMS,
        [
          { id: 'um-a', qty: 1, price: '1.50', camelCase: 'x' },
          { id: 'um-b', qty: 2, doc: { deep: [1] } },
          { id: 'um-c', qty: 3 },
        ],
        1000,
      );
      const last = (await driver.changes!.bounds()).last;
      // Every column kind through the arrays; a field left out is cleared.
      expect(
        await driver.updateMany(
          ITEMS,
          [
            {
              key: ['um-a'],
              record: {
                id: 'um-a',
                qty: 10,
                price: '2.25',
                at: '2020-01-02T03:04:05.678Z',
                day: '2026-01-02',
              },
              expectedVersion: 1,
            },
            {
              key: ['um-b'],
              record: { id: 'um-b', qty: 20, doc: { deep: [2] } },
              expectedVersion: 1,
            },
            { key: ['um-c'], record: { id: 'um-c', camelCase: 'y' }, expectedVersion: 1 },
          ],
          2000,
        ),
      ).toEqual([2, 2, 2]);
      expect(
        (await driver.getMany(ITEMS, [['um-a'], ['um-b'], ['um-c']])).map((found) => [
          found?.version,
          found?.record,
        ]),
      ).toEqual([
        [
          2,
          { id: 'um-a', qty: 10, price: '2.25', at: '2020-01-02T03:04:05.678Z', day: '2026-01-02' },
        ],
        [2, { id: 'um-b', qty: 20, doc: { deep: [2] } }],
        [2, { id: 'um-c', camelCase: 'y' }],
      ]);
      expect((await driver.changes!.read(last, 10)).map((c) => [c.seq - last, c.op, c.id])).toEqual(
        [
          [1, 'updated', 'um-a'],
          [2, 'updated', 'um-b'],
          [3, 'updated', 'um-c'],
        ],
      );
      // um-b is no longer at version 1: nothing is written, um-a included, and no event.
      await driver.transaction(async () => {
        expect(
          await driver.updateMany(
            ITEMS,
            [
              { key: ['um-a'], record: { id: 'um-a', qty: 99 }, expectedVersion: 2 },
              { key: ['um-b'], record: { id: 'um-b', qty: 99 }, expectedVersion: 1 },
            ],
            3000,
          ),
        ).toBeUndefined();
        // The transaction goes on: the record can still be written.
        expect(
          await driver.updateMany(
            ITEMS,
            [{ key: ['um-c'], record: { id: 'um-c', qty: 5 }, expectedVersion: 2 }],
            3000,
          ),
        ).toEqual([3]);
      });
      expect(await driver.get(ITEMS, ['um-a'])).toMatchObject({ version: 2, record: { qty: 10 } });
      expect((await driver.changes!.read(last + 3, 10)).map((c) => [c.op, c.id])).toEqual([
        ['updated', 'um-c'],
      ]);
      // A rename is left to `update`, one record at a time: nothing is written here.
      expect(
        await driver.updateMany(
          ITEMS,
          [{ key: ['um-c'], record: { id: 'um-d', qty: 4 }, expectedVersion: 3 }],
          4000,
        ),
      ).toBeUndefined();
      expect((await driver.get(ITEMS, ['um-c']))?.version).toBe(3);
    });

    it('deleteMany: all records in one statement, answered as they were with consecutive changes, or none', async () => {
      await driver.insert(
        ITEMS,
        [
          { id: 'dm-a', qty: 1, price: '1.50', doc: { deep: [1] } },
          { id: 'dm-b', qty: 2, day: '2026-01-02' },
          { id: 'dm-c', qty: 3 },
          { id: 'dm-d', qty: 4 },
        ],
        1000,
      );
      await driver.update(ITEMS, ['dm-b'], { id: 'dm-b', qty: 20, day: '2026-01-02' }, 1, 1500);
      const last = (await driver.changes!.bounds()).last;
      // In the order given, not the table's: the records as they were, every column kind.
      expect(
        await driver.deleteMany(
          ITEMS,
          [
            { key: ['dm-b'], expectedVersion: 2 },
            { key: ['dm-a'], expectedVersion: 1 },
          ],
          2000,
        ),
      ).toEqual([
        {
          record: { id: 'dm-b', qty: 20, day: '2026-01-02' },
          version: 2,
          createdAt: 1000,
          updatedAt: 1500,
        },
        {
          record: { id: 'dm-a', qty: 1, price: '1.50', doc: { deep: [1] } },
          version: 1,
          createdAt: 1000,
          updatedAt: 1000,
        },
      ]);
      expect(await driver.getMany(ITEMS, [['dm-a'], ['dm-b'], ['dm-c']])).toEqual([
        undefined,
        undefined,
        expect.objectContaining({ version: 1 }),
      ]);
      expect((await driver.changes!.read(last, 10)).map((c) => [c.seq - last, c.op, c.id])).toEqual(
        [
          [1, 'deleted', 'dm-b'],
          [2, 'deleted', 'dm-a'],
        ],
      );
      expect((await driver.activity()).ITEMS?.lastDelete).toBeGreaterThanOrEqual(2000);
      // dm-c is not at version 2, dm-a is gone, dm-d is named twice: each deletes nothing, dm-d
      // included; the transaction goes on and can still delete it.
      await driver.transaction(async () => {
        for (const wrong of [
          [
            { key: ['dm-d'], expectedVersion: 1 },
            { key: ['dm-c'], expectedVersion: 2 },
          ],
          [
            { key: ['dm-d'], expectedVersion: 1 },
            { key: ['dm-a'], expectedVersion: 1 },
          ],
          [
            { key: ['dm-d'], expectedVersion: 1 },
            { key: ['dm-d'], expectedVersion: 1 },
          ],
        ])
          expect(await driver.deleteMany(ITEMS, wrong, 3000)).toBeUndefined();
        expect(
          (await driver.deleteMany(ITEMS, [{ key: ['dm-d'], expectedVersion: 1 }], 3000))?.map(
            (gone) => gone.record,
          ),
        ).toEqual([{ id: 'dm-d', qty: 4 }]);
        expect(await driver.deleteMany(ITEMS, [], 3000)).toEqual([]);
      });
      expect(await driver.get(ITEMS, ['dm-c'])).toMatchObject({ version: 1, record: { qty: 3 } });
      expect((await driver.changes!.read(last + 2, 10)).map((c) => [c.op, c.id])).toEqual([
        ['deleted', 'dm-d'],
      ]);
    });

    it('deleteMany declines tables whose deletes do more than remove the row, before writing', async () => {
      const soft: TableDescriptor = {
        ...ITEMS,
        entity: 'SOFT_ITEMS',
        table: 'soft_items',
        softDelete: true,
      };
      const kept: TableDescriptor = {
        ...ITEMS,
        entity: 'KEPT_ITEMS',
        table: 'kept_items',
        history: true,
      };
      // A table a reference names (RESTRICT here): its deletes check the referencing records.
      const named: TableDescriptor = { ...ITEMS, entity: 'NAMED_ITEMS', table: 'named_items' };
      const naming: TableDescriptor = {
        ...ITEMS,
        entity: 'NAMING_ITEMS',
        table: 'naming_items',
        columns: [
          ...ITEMS.columns,
          { name: 'named', kind: 'text', fieldType: 'ENTITY_REF', required: false, indexed: true },
        ],
        references: [{ field: 'named', entity: 'NAMED_ITEMS', onDelete: 'RESTRICT', array: false }],
      };
      const other = driverFor(newSchema());
      await other.open([soft, kept, named, naming]);
      try {
        // The referencing table itself is not declined.
        await other.insert(naming, [{ id: 'n', qty: 1 }], 1000);
        expect(
          (await other.deleteMany(naming, [{ key: ['n'], expectedVersion: 1 }], 2000))?.map(
            (deleted) => deleted.record.id,
          ),
        ).toEqual(['n']);
        for (const table of [soft, kept, named]) {
          await other.insert(table, [{ id: 'x', qty: 1 }], 1000);
          expect(
            await other.deleteMany(table, [{ key: ['x'], expectedVersion: 1 }], 2000),
          ).toBeUndefined();
          expect(await other.get(table, ['x'])).toMatchObject({ version: 1 });
        }
      } finally {
        await other.close();
      }
    });

    it('lets other writers of an entity go on while a transaction writes it, and folds its activity in at the commit', async () => {
      const before = (await driver.activity()).ITEMS;
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let wrote = (): void => undefined;
      const written = new Promise<void>((resolve) => {
        wrote = resolve;
      });
      const open = driver.transaction(async () => {
        await driver.insert(ITEMS, [{ id: 'tx-a', qty: 1 }], 5_000_000);
        // Writes of one time touch the transaction's row once; a later one raises its time, an
        // earlier one does not lower it.
        await driver.insert(ITEMS, [{ id: 'tx-a2', qty: 1 }], 5_000_000);
        await driver.insert(ITEMS, [{ id: 'tx-a3', qty: 1 }], 4_999_999);
        await driver.update(ITEMS, ['tx-a'], { id: 'tx-a', qty: 2 }, 1, 5_000_001);
        await driver.update(ITEMS, ['tx-a'], { id: 'tx-a', qty: 3 }, 2, 5_000_001);
        wrote();
        await held;
      });
      await written;
      // With the transaction open (and its writes of ITEMS done), a write of ITEMS outside it
      // does not wait for its commit; its own activity is there at once.
      await driver.insert(ITEMS, [{ id: 'tx-b', qty: 1 }], 4_000_000);
      expect((await driver.activity()).ITEMS?.lastCreate).toBe(
        Math.max(4_000_000, before?.lastCreate ?? 0),
      );
      release();
      await open;
      const after = await driver.activity();
      expect(after.ITEMS?.lastCreate).toBe(5_000_000);
      expect(after.ITEMS?.lastUpdate).toBe(Math.max(5_000_001, before?.lastUpdate ?? 0));
      expect(Object.keys(after).filter((entity) => entity.includes('#'))).toEqual([]);
      const rows = await admin(
        async (client) =>
          (await client.query(`SELECT "entity" FROM "${schema}"."_eg_activity"`)).rows,
      );
      expect(rows.map((row: { entity: string }) => row.entity)).toEqual(['ITEMS']);

      // A transaction that fails leaves no activity behind.
      await expect(
        driver.transaction(async () => {
          await driver.insert(ITEMS, [{ id: 'tx-c', qty: 1 }], 6_000_000);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await driver.activity()).ITEMS?.lastCreate).toBe(5_000_000);
    });

    it('uses its own schema and quoted identifiers', async () => {
      await driver.insert(ITEMS, [{ id: 'q1', camelCase: 'Mixed' }], 1);
      const columns = await admin(
        async (client) =>
          (
            await client.query<{
              column_name: string;
              data_type: string;
              collation_name: string | null;
            }>(
              `SELECT column_name, data_type, collation_name FROM information_schema.columns
              WHERE table_schema = $1 AND table_name = 'items' ORDER BY ordinal_position`,
              [schema],
            )
          ).rows,
      );
      expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([
        ['id', 'text'],
        ['camelCase', 'text'],
        ['qty', 'bigint'],
        ['at', 'timestamp with time zone'],
        ['day', 'date'],
        ['price', 'numeric'],
        ['doc', 'jsonb'],
        ['_eg_created_ms', 'bigint'],
        ['_eg_updated_ms', 'bigint'],
        ['_eg_version', 'integer'],
      ]);
      expect(columns[0]?.collation_name).toBe('C');
      const tables = await admin(async (client) =>
        (
          await client.query<{ tablename: string }>(
            'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1',
            [schema],
          )
        ).rows.map((r) => r.tablename),
      );
      expect(tables).toEqual([
        '_eg_activity',
        '_eg_event_seq',
        '_eg_events',
        '_eg_history',
        '_eg_pending',
        '_eg_secrets',
        'items',
      ]);
      const listed = await driver.list(ITEMS, {
        filters: [
          { anyOf: [{ path: ['camelCase'], operator: 'EQUALS', kind: 'text', value: 'Mixed' }] },
        ],
        orderBy: [{ column: 'camelCase', descending: true }],
      });
      expect(listed.map((r) => r.record['id'])).toEqual(['q1']);
    });

    it('reads DATE_TIME canonically whatever the session time zone', async () => {
      const kolkata = driverFor(schema, { options: '-c TimeZone=Asia/Kolkata' });
      try {
        await kolkata.open([ITEMS]);
        await kolkata.insert(
          ITEMS,
          [{ id: 'tz', at: '2024-02-29T23:30:00.123Z', day: '2024-02-29' }],
          1,
        );
        expect((await kolkata.get(ITEMS, ['tz']))?.record).toStrictEqual({
          id: 'tz',
          at: '2024-02-29T23:30:00.123Z',
          day: '2024-02-29',
        });
        const later = await kolkata.list(ITEMS, {
          filters: [
            {
              anyOf: [
                {
                  path: ['at'],
                  operator: 'GTE',
                  kind: 'datetime',
                  value: '2024-02-29T23:30:00.123Z',
                },
              ],
            },
          ],
          orderBy: [],
        });
        expect(later.map((r) => r.record['id'])).toEqual(['tz']);
      } finally {
        await kolkata.close();
      }
    });

    it('leaves the process-wide pg type parsers alone', () => {
      expect(pg.types.getTypeParser(20, 'text')('42')).toBe('42');
      expect(pg.types.getTypeParser(1082, 'text')('2024-01-01')).toBeInstanceOf(Date);
    });

    // How fast: the benchmark's PostgreSQL bulk POST (bench/run.mjs, section pg); here only what
    // happens.
    it('inserts 10 000 records in one call; a duplicate at the end inserts nothing', async () => {
      const records = Array.from({ length: 10_000 }, (_, i) => ({
        id: `bulk-${String(i).padStart(5, '0')}`,
        qty: i,
        price: `${i}.25`,
        doc: { n: i, text: `quote ' double " back \\ ${i}` },
      }));
      await driver.insert(ITEMS, records, 10);
      expect((await driver.get(ITEMS, ['bulk-09999']))?.record).toStrictEqual(records[9999]);

      const again = records.map((r) => ({ ...r, id: `again-${r.id}` }));
      again.push({ ...records[123]! });
      const error = await driver.insert(ITEMS, again, 11).catch((e: unknown) => e);
      expect(isDuplicateKeyError(error)).toBe(true);
      expect(error).toMatchObject({ table: 'items', index: 10_000 });
      expect(await driver.get(ITEMS, ['again-bulk-00000'])).toBeUndefined();
      const count = await driver.count(ITEMS, {
        filters: [
          { anyOf: [{ path: ['id'], operator: 'STARTS_WITH', kind: 'text', value: 'again-' }] },
        ],
      });
      expect(count).toBe(0);
    });

    it('concurrent inserts of the same key from several drivers: exactly one succeeds', async () => {
      const others = [driverFor(schema), driverFor(schema), driverFor(schema)];
      try {
        await Promise.all(others.map((d) => d.open([ITEMS])));
        for (let round = 0; round < 5; round++) {
          const results = await Promise.allSettled(
            [driver, ...others].map((d, i) =>
              d.insert(ITEMS, [{ id: `race-${round}`, qty: i }], 100 + round),
            ),
          );
          const ok = results.filter((r) => r.status === 'fulfilled');
          const duplicates = results.filter(
            (r) => r.status === 'rejected' && isDuplicateKeyError(r.reason),
          );
          expect(ok).toHaveLength(1);
          expect(duplicates).toHaveLength(3);
          for (const d of duplicates)
            expect((d as PromiseRejectedResult).reason).toMatchObject({ index: 0 });
        }
        // Overlapping batches in opposite orders neither deadlock nor half-apply.
        const a = Array.from({ length: 50 }, (_, i) => ({ id: `overlap-${i}` }));
        const results = await Promise.allSettled([
          driver.insert(ITEMS, a, 200),
          others[0]!.insert(ITEMS, [...a].reverse(), 200),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(isDuplicateKeyError(failed.reason)).toBe(true);
      } finally {
        await Promise.all(others.map((d) => d.close()));
      }
    });

    it('opens concurrently on a fresh schema from several drivers', async () => {
      const fresh = newSchema();
      const drivers = Array.from({ length: 4 }, () => driverFor(fresh));
      try {
        await Promise.all(drivers.map((d) => d.open([ITEMS])));
        await drivers[0]!.insert(ITEMS, [{ id: 'x' }], 1);
        expect((await drivers[3]!.get(ITEMS, ['x']))?.version).toBe(1);
      } finally {
        await Promise.all(drivers.map((d) => d.close()));
      }
    });

    it('answers an index entry beyond the server limit with a 400 naming the limit, not a 500', async () => {
      // The service refuses such keys before they reach the driver; this is the safety net. Random
      // text does not compress, so 3 000 characters exceed the btree limit of about 2 700 bytes.
      const long = randomBytes(2250).toString('base64url');
      const error = await driver
        .insert(ITEMS, [{ id: long }], 1)
        .catch((caught: unknown) => caught);
      expect(isHttpError(error)).toBe(true);
      expect(error).toMatchObject({
        status: 400,
        reason:
          "A key or indexed value is too large for the database's index; a key or indexed field holds at most 1024 bytes",
      });
      const indexed = await driver
        .insert(ITEMS, [{ id: 'short', camelCase: long }], 1)
        .catch((caught: unknown) => caught);
      expect(indexed).toMatchObject({ status: 400 });
      expect(await driver.get(ITEMS, ['short'])).toBeUndefined();
    });

    it('uses the primary key and NULLS FIRST indexes for ORDER BY', async () => {
      await admin((client) => client.query(`ANALYZE "${schema}"."items"`));
      const byKey = (await driver.explainList(ITEMS, { filters: [], orderBy: [], limit: 5 })).join(
        '\n',
      );
      expect(byKey).toMatch(/Index Scan using items_pkey/);
      const byKeyDesc = (
        await driver.explainList(ITEMS, {
          filters: [],
          orderBy: [{ column: 'id', descending: true }],
          limit: 5,
        })
      ).join('\n');
      expect(byKeyDesc).toMatch(/Index Scan Backward using items_pkey/);
      const byQty = (
        await driver.explainList(ITEMS, {
          filters: [],
          orderBy: [{ column: 'qty', descending: false }],
          limit: 5,
        })
      ).join('\n');
      expect(byQty).toMatch(/items__qty__idx/);
      const byQtyDesc = (
        await driver.explainList(ITEMS, {
          filters: [],
          orderBy: [{ column: 'qty', descending: true }],
          limit: 5,
        })
      ).join('\n');
      expect(byQtyDesc).toMatch(/Index Scan Backward using items__qty__idx/);
      const { sql } = driver.listSql(ITEMS, { filters: [], orderBy: [], limit: 5 });
      expect(sql).toContain(`FROM "${schema}"."items"`);
    });

    it('maps a statement timeout to a 503 naming the time budget (not an outage)', async () => {
      const impatient = driverFor(schema, { statementTimeoutMs: 200 });
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      try {
        await impatient.open([ITEMS]);
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${schema}"."items" IN ACCESS EXCLUSIVE MODE`);
        // The lock is held until after the answer: only the time budget can end the read.
        const error = await impatient.get(ITEMS, ['q1']).catch((e: unknown) => e);
        expect(isStorageUnavailableError(error), String(error)).toBe(false);
        expect(error).toMatchObject({
          status: 503,
          reason:
            'The query took longer than its time budget (QUERY_TIMEOUT_MS) and was stopped; narrow the filters or page with a smaller limit',
        });
        await locker.query('ROLLBACK');
        expect((await impatient.get(ITEMS, ['q1']))?.record['id']).toBe('q1');
      } finally {
        await locker.end();
        await impatient.close();
      }
    });

    it('survives idle connections being terminated by the server', async () => {
      const applicationName = `eg-test-idle-${randomBytes(3).toString('hex')}`;
      const errors: Error[] = [];
      const victim = driverFor(schema, { applicationName, onIdleError: (e) => errors.push(e) });
      try {
        await victim.open([ITEMS]);
        await Promise.all([victim.ping(), victim.ping(), victim.ping()]);
        const terminated = await admin(
          async (client) =>
            (
              await client.query<{ ok: boolean }>(
                'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
                [applicationName],
              )
            ).rows.length,
        );
        expect(terminated).toBeGreaterThan(0);
        // The pool reports the broken idle connections when it hears of them: waited for, not slept.
        await until('the broken idle connections reported', () => errors.length > 0, 20_000);
        await victim.ping();
        expect((await victim.get(ITEMS, ['q1']))?.record['id']).toBe('q1');
      } finally {
        await victim.close();
      }
    });

    /** Waits until `check` holds, at most `timeoutMs`. */
    const until = async (what: string, check: () => boolean, timeoutMs = 5000): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    it('a watcher hears of changes another driver committed (LISTEN/NOTIFY), also after its connection was cut', async () => {
      const applicationName = `eg-test-listen-${randomBytes(3).toString('hex')}`;
      const listening = driverFor(schema, { applicationName });
      const writer = driverFor(schema);
      await listening.open([ITEMS]);
      await writer.open([ITEMS]);
      let wakes = 0;
      const stop = listening.changes!.watch(() => {
        wakes++;
      });
      try {
        // Connecting counts as a notification: changes made meanwhile are read then.
        await until('the LISTEN connection is up', () => wakes >= 1);
        let before = wakes;
        await writer.insert(ITEMS, [{ id: `listen-${applicationName}-1` }], 1000);
        await until("the notification of the other driver's insert", () => wakes > before);
        const cut = await admin(
          async (client) =>
            (
              await client.query(
                `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
                [applicationName],
              )
            ).rowCount,
        );
        expect(cut).toBe(1);
        before = wakes;
        await until('the wake-up of the new LISTEN connection', () => wakes > before, 10_000);
        before = wakes;
        await writer.insert(ITEMS, [{ id: `listen-${applicationName}-2` }], 1001);
        await until('the notification after the reconnection', () => wakes > before);
      } finally {
        stop();
        await listening.close();
        await writer.close();
      }
    });

    it('a reader never sees a seq before all lower ones: seq order is commit order', async () => {
      const writers = [driverFor(schema), driverFor(schema)];
      for (const writer of writers) await writer.open([ITEMS]);
      const feed = driver.changes!;
      const start = (await feed.bounds()).last;
      let last = start;
      let writing = true;
      const gaps: string[] = [];
      const reading = (async () => {
        for (;;) {
          // Done only after an empty read that began once every write had returned: a read begun
          // earlier may have missed the last change.
          const done = !writing;
          const page = await feed.read(last, 500);
          for (const change of page) {
            if (change.seq !== last + 1) gaps.push(`${last} then ${change.seq}`);
            last = change.seq;
          }
          if (done && page.length === 0) return;
        }
      })();
      try {
        await Promise.all(
          writers.flatMap((writer, w) =>
            Array.from({ length: 6 }, async (_, t) => {
              for (let i = 0; i < 20; i++)
                await writer.insert(ITEMS, [{ id: `order-${w}-${t}-${i}` }], 1000 + i);
            }),
          ),
        );
      } finally {
        writing = false;
        await reading;
        for (const writer of writers) await writer.close();
      }
      expect(gaps).toEqual([]);
      expect(last - start).toBe(240);
    });

    it('a database from before change events gets its outbox when opened, and events start', async () => {
      const old = newSchema();
      const first = driverFor(old);
      await first.open([ITEMS]);
      await first.insert(ITEMS, [{ id: 'old' }], 1000);
      await first.close();
      // As a service that ran an older runtime left it: no outbox tables.
      await admin((client) =>
        client.query(`DROP TABLE "${old}"."_eg_events", "${old}"."_eg_event_seq"`),
      );
      const again = driverFor(old);
      try {
        await again.open([ITEMS]);
        expect(await again.changes.bounds()).toEqual({ first: 1, last: 0 });
        await again.update(ITEMS, ['old'], { id: 'old', qty: 2 }, 1, 2000);
        expect((await again.changes.read(0, 10)).map((c) => [c.seq, c.op, c.id])).toEqual([
          [1, 'updated', 'old'],
        ]);
      } finally {
        await again.close();
      }
    });

    it('openPostgres opens, and rejects with StorageUnavailableError when nothing listens', async () => {
      const opened = await openPostgres({ url, env: {}, schema }, [ITEMS]);
      await opened.ping();
      await opened.close();
      const error = await openPostgres(
        { url: 'postgres://postgres@127.0.0.1:1/none', env: {}, connectTimeoutMs: 1000 },
        [ITEMS],
      ).catch((e: unknown) => e);
      expect(isStorageUnavailableError(error), String(error)).toBe(true);
    });

    it('accepts the settings object of parsePostgresUrl', async () => {
      const settings = parsePostgresUrl(
        `${url}${url.includes('?') ? '&' : '?'}schema=${schema}&pool_max=2`,
        {},
      );
      const fromSettings: StorageDriver = new PostgresDriver(settings);
      try {
        await fromSettings.open([ITEMS]);
        expect((await fromSettings.get(ITEMS, ['q1']))?.record['id']).toBe('q1');
      } finally {
        await fromSettings.close();
      }
    });
  });
});
