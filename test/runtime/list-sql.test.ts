/**
 * The tail of a list statement: SQLite writes LIMIT as a number (its planner reads a bound LIMIT's
 * value, so a bound one would have every page parse and plan its statement again), PostgreSQL binds
 * it; OFFSET is bound on both, and a limit that is not a non-negative safe integer is refused.
 */
import { describe, expect, it } from 'vitest';
import type { ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { postgresDialect } from '../../runtime/src/postgres/dialect.js';
import { buildListSql } from '../../runtime/src/sql/query.js';
import { sqliteDialect } from '../../runtime/src/sqlite/dialect.js';

const ITEM: TableDescriptor = {
  entity: 'ITEM',
  table: 'item',
  key: ['id'],
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'available', kind: 'boolean', fieldType: 'BOOL', required: false, indexed: false },
  ],
  indexes: [],
};

const available: ListQuery['filters'] = [
  { anyOf: [{ path: ['available'], operator: 'EQUALS', kind: 'boolean', value: true }] },
];

describe('LIMIT and OFFSET of a list statement', () => {
  const cases: {
    name: string;
    query: ListQuery;
    sqlite: { tail: string; params: unknown[] };
    postgres: { tail: string; params: unknown[] };
  }[] = [
    {
      name: 'a page size',
      query: { filters: available, orderBy: [], limit: 101 },
      sqlite: { tail: 'LIMIT 101', params: [1] },
      postgres: { tail: 'LIMIT $2', params: [true, 101] },
    },
    {
      name: 'a page size and an offset',
      query: { filters: available, orderBy: [], limit: 20, offset: 40 },
      sqlite: { tail: 'LIMIT 20 OFFSET ?', params: [1, 40] },
      postgres: { tail: 'LIMIT $2 OFFSET $3', params: [true, 20, 40] },
    },
    {
      name: 'an offset alone',
      query: { filters: [], orderBy: [], offset: 5 },
      sqlite: { tail: 'LIMIT -1 OFFSET ?', params: [5] },
      postgres: { tail: 'OFFSET $1', params: [5] },
    },
    {
      name: 'a limit of 0',
      query: { filters: [], orderBy: [], limit: 0 },
      sqlite: { tail: 'LIMIT 0', params: [] },
      postgres: { tail: 'LIMIT $1', params: [0] },
    },
  ];

  for (const { name, query, sqlite, postgres } of cases) {
    it(`${name}: SQLite writes the limit, PostgreSQL binds it`, () => {
      const lite = buildListSql(sqliteDialect, ITEM, query, '*');
      expect(lite.sql.endsWith(` ${sqlite.tail}`), lite.sql).toBe(true);
      expect(
        lite.params.map((value) => (typeof value === 'bigint' ? Number(value) : value)),
      ).toEqual(sqlite.params);
      const pg = buildListSql(postgresDialect(ITEM), ITEM, query, '*');
      expect(pg.sql.endsWith(` ${postgres.tail}`), pg.sql).toBe(true);
      expect(pg.params).toEqual(postgres.params);
    });
  }

  it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN])(
    'a limit of %s is refused, never written into the statement',
    (limit) => {
      expect(() =>
        buildListSql(sqliteDialect, ITEM, { filters: [], orderBy: [], limit }, '*'),
      ).toThrow(/Invalid limit/);
    },
  );
});
