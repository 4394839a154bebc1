import { expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import type { FilterCondition } from '../../runtime/src/driver.js';
import { postgresDdl } from '../../runtime/src/ddl.js';
import { indexedTables } from '../helpers/pg-indexed-tables.js';
import { expectedCodes, INDEXED, PLAIN, query, record, ROWS } from './ci-index-fixture.js';

describeWith(POSTGRES, 'PostgreSQL index: ci', (url) => {
  const tables = indexedTables(url, 'ci', { indexed: INDEXED, plain: PLAIN }, ROWS, record);
  const { schema, admin } = tables;

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
    (await tables.driver().explainList(INDEXED, query(operator, value))).join('\n');

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
    const text = (await tables.driver().explainList(PLAIN, query('IEQUALS', 'NAME 1234'))).join(
      '\n',
    );
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
    const indexed = await tables.driver().list(INDEXED, query(operator, value));
    const plain = await tables.driver().list(PLAIN, query(operator, value));
    const codes = indexed.map((r) => r.record['code']);
    expect(codes.length).toBeGreaterThan(0);
    expect(codes).toEqual(expectedCodes(operator, value));
    expect(indexed.map((r) => r.record)).toEqual(plain.map((r) => r.record));
  });
});
