/**
 * `index: ci` on PostgreSQL: the driver creates an index on the folded text
 * (`lower(upper(name COLLATE "default"))`, bytewise), `EXPLAIN` shows IEQUALS and ISTARTS_WITH
 * reading it, and every case-insensitive operator answers exactly what a table without the index
 * answers. The table is large enough (and ANALYZEd) that the planner's choice means something.
 * Runs when `TEST_DATABASE_URL` names a PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import type { FilterCondition } from '../../runtime/src/driver.js';
import { postgresDdl } from '../../runtime/src/ddl.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { expectedCodes, INDEXED, PLAIN, query, record, ROWS } from './ci-index-fixture.js';

describeWith(POSTGRES, 'PostgreSQL index: ci', (url) => {
  const schema = `eg_test_${process.pid}_${randomBytes(4).toString('hex')}_ci`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };

  let driver: PostgresDriver;

  beforeAll(async () => {
    driver = new PostgresDriver({ url, env: {}, schema, poolMax: 2 });
    await driver.open([INDEXED, PLAIN]);
    const records = Array.from({ length: ROWS }, (_, i) => record(i));
    for (let from = 0; from < ROWS; from += 5_000) {
      await driver.insert(INDEXED, records.slice(from, from + 5_000), 1);
      await driver.insert(PLAIN, records.slice(from, from + 5_000), 1);
    }
    await admin(async (client) => {
      await client.query(`ANALYZE "${schema}"."person"`);
      await client.query(`ANALYZE "${schema}"."person_plain"`);
    });
  });

  afterAll(async () => {
    await driver?.close();
    await admin((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  });

  it('creates the index on the folded text, bytewise', async () => {
    expect(postgresDdl.createIndexes(INDEXED)).toEqual([
      'CREATE INDEX IF NOT EXISTS "person__name__ci_idx" ON "person" ((lower(upper(("name")::TEXT COLLATE "default")) COLLATE "C") NULLS FIRST)',
    ]);
    const definitions = await admin(async (client) => {
      const result = await client.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'person'`,
        [schema],
      );
      return result.rows.map((row) => row.indexdef);
    });
    expect(definitions).toContain(
      `CREATE INDEX person__name__ci_idx ON ${schema}.person USING btree (lower(upper((name COLLATE "default"))) COLLATE "C" NULLS FIRST)`,
    );
  });

  const plan = async (operator: FilterCondition['operator'], value: string): Promise<string> =>
    (await driver.explainList(INDEXED, query(operator, value))).join('\n');

  it('IEQUALS reads the index', async () => {
    const text = await plan('IEQUALS', 'NAME 1234');
    expect(text).toMatch(/(Index Scan using|Bitmap Index Scan on) person__name__ci_idx/);
    expect(text).toMatch(/Index Cond: .* = 'name 1234'::text COLLATE "C"\)/);
  });

  it('ISTARTS_WITH reads the index by range', async () => {
    const text = await plan('ISTARTS_WITH', 'name 123');
    expect(text).toMatch(/(Index Scan using|Bitmap Index Scan on) person__name__ci_idx/);
    // The planner turned the LIKE of the folded, escaped prefix into an index range.
    expect(text).toMatch(/Index Cond: .*>= 'name 123'::text\) AND .*< 'name 124'::text\)/);
  });

  it('without the index the same filter scans the table', async () => {
    const text = (await driver.explainList(PLAIN, query('IEQUALS', 'NAME 1234'))).join('\n');
    expect(text).not.toMatch(/person_plain__name/);
    expect(text).toMatch(/Seq Scan/);
  });

  it.each<[FilterCondition['operator'], string]>([
    ['IEQUALS', 'NAME 1234'],
    ['IEQUALS', 'émile'],
    ['IEQUALS', 'σΟφΊα'],
    ['ISTARTS_WITH', 'name 123'],
    ['ISTARTS_WITH', 'ÉMI'],
    ['ISTARTS_WITH', 'σοφ'],
    ['ISTARTS_WITH', '50%'],
    ['ISTARTS_WITH', '50'],
    ['ISTARTS_WITH', 'A!'],
    ['ICONTAINS', 'ZOË'],
    ['IENDS_WITH', '_OFF'],
  ])('%s %s: the rows a table without the index gives', async (operator, value) => {
    const indexed = await driver.list(INDEXED, query(operator, value));
    const plain = await driver.list(PLAIN, query(operator, value));
    const codes = indexed.map((r) => r.record['code']);
    expect(codes.length).toBeGreaterThan(0);
    expect(codes).toEqual(expectedCodes(operator, value));
    expect(indexed.map((r) => r.record)).toEqual(plain.map((r) => r.record));
  });
});
