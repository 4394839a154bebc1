/**
 * Soft delete on PostgreSQL (SPEC §13): a page of a `softDelete` table in key order reads the
 * partial index of its live rows (`<table>__live`) — before and after the table has statistics —
 * and answers the same rows as a filter of every row would.
 */
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import type { ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { TestSchemas } from '../e2e/suites/postgres.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';

const SOFT: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'n', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
  key: ['id'],
  softDelete: true,
};

const ROWS = 10_000;
const id = (n: number): string => `r${String(n).padStart(5, '0')}`;

describeWith(POSTGRES, 'PostgreSQL soft delete', (url) => {
  const schemas = new TestSchemas(url, 'soft_live');
  afterAll(() => schemas.dropAll());

  it('pages the live rows in key order along their partial index, with or without statistics', async () => {
    const schema = schemas.next();
    const driver = new PostgresDriver({ url, env: {}, schema, poolMax: 4 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await driver.open([SOFT]);
      const rows = Array.from({ length: ROWS }, (_, n) => ({ id: id(n), n }));
      await driver.insert(SOFT, rows, 1000);
      // Every tenth row marked deleted, as deletes would (one statement: a driver delete each is slow).
      await driver.delete(SOFT, [id(5)], undefined, 2000);
      await client.query(
        `UPDATE "${schema}"."item" SET "_eg_deleted_ms" = 2000, "_eg_version" = 2 WHERE "n" % 10 = 5 AND "_eg_deleted_ms" IS NULL`,
      );
      const live = rows.filter((row) => row.n % 10 !== 5).map((row) => row.id);
      const page: ListQuery = { filters: [], orderBy: [], limit: 100, offset: 500 };
      const backwards: ListQuery = { ...page, orderBy: [{ column: 'id', descending: true }] };
      const keyset: ListQuery = { filters: [], orderBy: [], limit: 100, after: [id(700)] };
      for (const statistics of [false, true]) {
        if (statistics) await client.query(`ANALYZE "${schema}"."item"`);
        for (const [what, query] of [
          ['offset', page],
          ['descending', backwards],
          ['keyset', keyset],
        ] as const) {
          const plan = (await driver.explainList(SOFT, query)).join('\n');
          const label = `${what}, statistics ${statistics}:\n${plan}`;
          expect(plan, label).toMatch(/Index Scan (Backward )?using item__live on/);
          expect(plan, label).not.toMatch(/\bSort\b|Filter:/);
        }
        const ids = async (query: ListQuery) =>
          (await driver.list(SOFT, query)).map((row) => row.record['id']);
        expect(await ids(page)).toEqual(live.slice(500, 600));
        expect(await ids(backwards)).toEqual(live.toReversed().slice(500, 600));
        expect(await ids(keyset)).toEqual(live.filter((key) => key > id(700)).slice(0, 100));
        // Deleted rows stay out of the index, not out of reach.
        const only = await driver.list(SOFT, { filters: [], orderBy: [], deleted: 'only' });
        expect(only).toHaveLength(ROWS / 10);
        expect(await driver.count(SOFT, { filters: [], deleted: 'include' })).toBe(ROWS);
      }
    } finally {
      await client.end();
      await driver.close();
    }
  });
});
