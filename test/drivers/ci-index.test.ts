/**
 * `index: ci` on SQLite: the driver creates an index on the folded text (`eg_fold(name)`, the
 * expression the case-insensitive operators compare), `EXPLAIN QUERY PLAN` shows IEQUALS and
 * ISTARTS_WITH searching it, and every case-insensitive operator answers exactly what a table
 * without the index answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilterCondition } from '../../runtime/src/driver.js';
import { sqliteDdl } from '../../runtime/src/ddl.js';
import { tableOf } from '../../runtime/src/schema.js';
import { prefixSuccessor } from '../../runtime/src/sqlite/dialect.js';
import { openSqlite, type SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { entity, expectedCodes, INDEXED, PLAIN, query, record, ROWS } from './ci-index-fixture.js';

const root = mkdtempSync(join(tmpdir(), 'eg-ci-index-'));

let driver: SqliteDriver;

beforeAll(async () => {
  driver = await openSqlite({ filename: join(root, 'service.db') }, [INDEXED, PLAIN]);
  const records = Array.from({ length: ROWS }, (_, i) => record(i));
  await driver.insert(INDEXED, records, 1);
  await driver.insert(PLAIN, records, 1);
});

afterAll(async () => {
  await driver.close();
  rmSync(root, { recursive: true, force: true });
});

describe('index: ci DDL', () => {
  it('indexes the folded text under <table>__<field>__ci_idx', () => {
    expect(sqliteDdl.indexes(INDEXED)).toEqual([
      { field: 'name', name: 'person__name__ci_idx', column: 'name', ci: true },
    ]);
    expect(sqliteDdl.createIndexes(INDEXED)).toEqual([
      'CREATE INDEX IF NOT EXISTS "person__name__ci_idx" ON "person" (eg_fold("name"))',
    ]);
    expect(sqliteDdl.createIndexes(PLAIN)).toEqual([]);
  });

  it('keeps index: true and index: ci apart, also on the first key field', () => {
    const table = tableOf(
      {
        name: 'PERSON',
        lk: ['code'],
        fields: [
          { name: 'code', type: 'STRING', required: true, index: 'ci' },
          { name: 'name', type: 'STRING', index: true },
        ],
      },
      new Set(),
    );
    expect(sqliteDdl.createIndexes(table)).toEqual([
      'CREATE INDEX IF NOT EXISTS "person__name__idx" ON "person" ("name")',
      'CREATE INDEX IF NOT EXISTS "person__code__ci_idx" ON "person" (eg_fold("code"))',
    ]);
  });

  it('shortens a long name to at most 63 bytes, deterministically', () => {
    const long = 'a_rather_long_field_name_that_goes_on_and_on_and_on_and_on';
    const table = tableOf(
      {
        ...entity(),
        fields: [...entity().fields, { name: long, type: 'STRING', index: 'ci' }],
      },
      new Set(),
    );
    const [index] = sqliteDdl.indexes(table);
    expect(index!.name).toMatch(/^person_[0-9a-f]{12}_ci$/);
    expect(sqliteDdl.indexes(table)[0]!.name).toBe(index!.name);
  });

  it('creates the index when the driver opens the table', () => {
    const db = new Database(join(root, 'service.db'), { readonly: true });
    const sql = db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'person'`)
      .pluck()
      .all();
    db.close();
    expect(sql).toContain('CREATE INDEX "person__name__ci_idx" ON "person" (eg_fold("name"))');
  });
});

describe('the ci operators read the index', () => {
  const plan = (operator: FilterCondition['operator'], value: string): string =>
    driver
      .explainList(INDEXED, query(operator, value))
      .plan.map((row) => row.detail)
      .join(' | ');

  it('IEQUALS searches the index by equality', () => {
    expect(plan('IEQUALS', 'NAME 1234')).toContain(
      'SEARCH person USING INDEX person__name__ci_idx (<expr>=?)',
    );
  });

  it('ISTARTS_WITH searches the index by range', () => {
    expect(plan('ISTARTS_WITH', 'name 123')).toContain(
      'SEARCH person USING INDEX person__name__ci_idx (<expr>>? AND <expr><?)',
    );
  });

  it('without the index the same filter scans the table', () => {
    const details = driver
      .explainList(PLAIN, query('IEQUALS', 'NAME 1234'))
      .plan.map((row) => row.detail)
      .join(' | ');
    expect(details).not.toContain('INDEX');
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

  it('the prefix successor bounds every text starting with the prefix', () => {
    expect(prefixSuccessor('abc')).toBe('abd');
    expect(prefixSuccessor('a\u{d7ff}')).toBe('a\u{e000}');
    expect(prefixSuccessor('a\u{10ffff}')).toBeUndefined();
    expect(prefixSuccessor('')).toBeUndefined();
  });
});
