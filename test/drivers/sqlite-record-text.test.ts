/**
 * Listed records as JSON text (SQLite): a reader writes each record's JSON itself, splicing a JSON
 * column's stored text in when it is already what `JSON.stringify` would write, so the text must
 * always equal `JSON.stringify` of the record `list()` returns — whoever wrote the stored text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { SqliteDriver } from '../../runtime/src/sqlite/driver.js';
import {
  canonicalJson,
  isCanonicalJson,
  lastRecordStart,
  recordText,
} from '../../runtime/src/sqlite/record-text.js';
import { TableLayout } from '../../runtime/src/sqlite/schema.js';

const CANONICAL_VALUES: unknown[] = [
  0,
  -5,
  1.5,
  1e21,
  5e-7,
  -1.25e-10,
  123456789012345680000,
  Number.MAX_SAFE_INTEGER,
  true,
  false,
  null,
  '',
  'plain',
  'quote " backslash \\ newline \n tab \t return \r feed \f back \b',
  'café ß ✓ \u2028 \u007f',
  [],
  {},
  [1, [2, [3, {}]], 'x', null],
  { width: 91, height: 41, unit: 'cm', nested: { list: [1.5, -2, { a: [] }] } },
  JSON.parse('{"__proto__":{"x":1},"b":[true]}'),
];

/** Valid JSON that JSON.stringify(JSON.parse(…)) writes differently, and invalid JSON. */
const NOT_CANONICAL = [
  ' [1]',
  '[1]\n',
  '[1, 2]',
  '{"a": 1}',
  '1.0',
  '1.50',
  '-0',
  '1E5',
  '1e5',
  '1e+2',
  '"\\u0041"',
  '"\\u001f"',
  '"\\/"',
  '"😀"',
  '"\ud800"',
  '{"a":1,"a":2}',
  '{"a":{"b":1},"c":2,"a":3}',
];
const INVALID = [
  '01',
  '"tab\tinside"',
  '',
  '[1,]',
  '{"a"1}',
  '{"a":}',
  'tru',
  'nul',
  '"open',
  '[1',
  '{',
  '[1]x',
  '-',
  '.5',
  '+1',
  'NaN',
  "{'a':1}",
  '{"a":1,}',
];

describe('canonical JSON text', () => {
  it('recognizes what JSON.stringify writes', () => {
    for (const value of CANONICAL_VALUES) {
      const text = JSON.stringify(value);
      expect(isCanonicalJson(text), text).toBe(true);
      expect(canonicalJson(text)).toBe(text);
    }
  });

  it('rewrites other valid JSON as JSON.stringify of its value, and rejects invalid JSON', () => {
    for (const text of NOT_CANONICAL) {
      expect(isCanonicalJson(text), text).toBe(false);
      expect(canonicalJson(text)).toBe(JSON.stringify(JSON.parse(text)));
    }
    for (const text of INVALID) {
      expect(isCanonicalJson(text), text).toBe(false);
      expect(() => canonicalJson(text), text).toThrow(SyntaxError);
    }
  });

  it('never takes text as canonical that a round trip changes (random texts)', () => {
    const pieces = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"a"',
      '"b"',
      '1',
      '-0',
      '0.5',
      '1e3',
      ' ',
      'true',
      'null',
      '"\\n"',
      '"\\u0062"',
      '10',
    ];
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    let canonical = 0;
    for (let n = 0; n < 20000; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 9);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(random() * pieces.length)];
      let parsed: string | undefined;
      try {
        parsed = JSON.stringify(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (isCanonicalJson(text)) {
        canonical++;
        expect(parsed, text).toBe(text);
      }
      if (parsed === undefined) expect(() => canonicalJson(text), text).toThrow(SyntaxError);
      else expect(canonicalJson(text), text).toBe(parsed);
    }
    expect(canonical).toBeGreaterThan(100);
  });

  it('is false for nesting too deep to scan, which parsing then decides', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(isCanonicalJson(deep)).toBe(false);
  });
});

const TEXT_NOTE = {
  name: 'note',
  kind: 'text',
  fieldType: 'STRING',
  required: false,
  indexed: false,
} as const;

const TABLE: TableDescriptor = {
  entity: 'THING',
  table: 'thing',
  key: ['id'],
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'count', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
    { name: 'ratio', kind: 'double', fieldType: 'DOUBLE', required: false, indexed: false },
    { name: 'price', kind: 'decimal', fieldType: 'DECIMAL', required: false, indexed: false },
    { name: 'on', kind: 'boolean', fieldType: 'BOOL', required: false, indexed: false },
    { name: '__proto__', kind: 'text', fieldType: 'STRING', required: false, indexed: false },
    { name: 'doc', kind: 'json', fieldType: 'OBJECT', required: false, indexed: false },
  ],
};

describe('record text of a raw row', () => {
  it('equals JSON.stringify of the decoded record', () => {
    const layout = new TableLayout(TABLE);
    const rows: unknown[][] = [
      ['a', 1, 0.5, '12.50', 1, 'p', '{"x":[1,2]}', 1, 2, 3],
      ['b"\n', null, null, null, 0, null, '{ "x" : 1.0, "x": "\\u0041" }', 1, 2, 3],
      ['c', -7, Infinity, '0', null, null, '"text"', 1, 2, 3],
      ['d', 0, -0, null, null, null, null, 1, 2, 3],
    ];
    for (const row of rows)
      expect(recordText(layout.shape, row)).toBe(JSON.stringify(layout.decode(row)));
  });
});

const dir = mkdtempSync(join(tmpdir(), 'eg-record-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['in a reader', 2],
  ['on the main thread', 0],
])('listTexts %s', (_, readers) => {
  it('answers the texts of list() records, also for JSON another program wrote', async () => {
    const file = join(dir, `things-${readers}.db`);
    const driver = new SqliteDriver({ filename: file, readers });
    // A plain object cannot hold a field named __proto__: that one is left to the unit test.
    const table = { ...TABLE, columns: TABLE.columns.filter((c) => c.name !== '__proto__') };
    await driver.open([table]);
    try {
      const records = [
        { id: 'a', count: 1, ratio: 0.25, price: '3.5', on: true, doc: { x: [1, 'two'] } },
        { id: 'b', on: false, doc: { y: { z: null } } },
        { id: 'c', count: 3 },
        { id: 'd', doc: { w: 1 } },
      ];
      await driver.insert(table, records, 1000);
      // Another program writes JSON with spaces, escapes and a repeated key.
      const other = new Database(file);
      other
        .prepare(`UPDATE thing SET doc = ? WHERE id = 'd'`)
        .run('{ "w" : 1.0, "w": "\\u0041\\/", "v": [ ] }');
      other.close();
      const query: ListQuery = { filters: [], orderBy: [], limit: 3, offset: 1 };
      const listed = await driver.list(table, query);
      // A list of keep + 2 records (a page and its look-ahead) is written whole.
      const page = await driver.listTexts(table, query, 1);
      expect(page.texts).toEqual([]);
      expect(page.joined).toEqual({
        text: listed
          .slice(0, 2)
          .map((stored) => JSON.stringify(stored.record))
          .join(','),
        records: 3,
      });
      expect(page.kept).toEqual({ record: listed[1]!.record });
      const { texts, kept } = await driver.listTexts(table, query, 0);
      expect(texts).toEqual(listed.map((stored) => JSON.stringify(stored.record)));
      expect(texts[2]).toBe('{"id":"d","doc":{"w":"A/","v":[]}}');
      expect(kept).toEqual({ record: listed[0]!.record });
      const none = await driver.listTexts(table, query, 5);
      expect(none.kept).toBeUndefined();
    } finally {
      await driver.close();
    }
  });

  it('with fields, reads only those columns and those its cursor needs (order, key)', async () => {
    const file = join(dir, `fields-${readers}.db`);
    const driver = new SqliteDriver({ filename: file, readers });
    const table = { ...TABLE, columns: TABLE.columns.filter((c) => c.name !== '__proto__') };
    await driver.open([table]);
    try {
      await driver.insert(
        table,
        [
          { id: 'a', count: 1, ratio: 0.25, price: '3.5', on: true, doc: { x: 1 } },
          { id: 'b', count: 2, ratio: 0.5, price: '1.25', on: false },
          { id: 'c', ratio: 2, doc: { y: [] } },
        ],
        1000,
      );
      const query: ListQuery = {
        filters: [],
        orderBy: [{ column: 'price', descending: true }],
        limit: 3,
        offset: 0,
      };
      const listed = await driver.list(table, query);
      const { texts, kept } = await driver.listTexts(table, query, 1, ['count', 'doc']);
      const pick = (record: Record<string, unknown>): Record<string, unknown> =>
        Object.fromEntries(
          Object.entries(record).filter(([name]) => ['count', 'doc'].includes(name)),
        );
      expect(texts).toEqual(listed.map((stored) => JSON.stringify(pick(stored.record))));
      // The cursor's record holds the order field and the key besides the selected fields: the
      // other columns were not read.
      expect(listed[1]!.record).toMatchObject({ ratio: 0.5, on: false });
      expect(kept).toEqual({ record: { id: 'b', count: 2, price: '1.25' } });
    } finally {
      await driver.close();
    }
  });
});

describe('listTextsNow', () => {
  it('reads each table its own records when asked with one query object for two tables', async () => {
    const columns = TABLE.columns.filter((c) => c.name === 'id' || c.name === 'count');
    const first: TableDescriptor = { entity: 'FIRST', table: 'first', key: ['id'], columns };
    const second: TableDescriptor = { entity: 'SECOND', table: 'second', key: ['id'], columns };
    // Without readers every list runs on the main connection, counted ones too.
    const driver = new SqliteDriver({ filename: join(dir, 'two.db'), readers: 0 });
    await driver.open([first, second]);
    try {
      await driver.insert(first, [{ id: 'a', count: 1 }], 1000);
      await driver.insert(second, [{ id: 'b', count: 2 }], 1000);
      // One parsed query, kept and passed again, as the fast path of list pages does.
      const query: ListQuery = { filters: [], orderBy: [], limit: 10, offset: 0 };
      for (let round = 0; round < 2; round++) {
        expect(driver.listTextsNow(first, query, 0)?.texts).toEqual(['{"id":"a","count":1}']);
        expect(driver.listTextsNow(second, query, 0, ['id'], true)).toMatchObject({
          texts: ['{"id":"b"}'],
          count: 1,
        });
        expect(driver.listTextsNow(second, query, 0)?.texts).toEqual(['{"id":"b","count":2}']);
      }
    } finally {
      await driver.close();
    }
  });

  it('answers what listTexts answers when the list runs on the main connection, else undefined', async () => {
    const file = join(dir, 'now.db');
    const table: TableDescriptor = {
      ...TABLE,
      columns: TABLE.columns
        .filter((c) => c.name !== '__proto__')
        .map((c) => (c.name === 'price' ? { ...c, indexed: true } : c)),
      indexes: [
        [
          { column: 'on', descending: false },
          { column: 'price', descending: true },
        ],
      ],
    };
    const driver = new SqliteDriver({ filename: file, readers: 1 });
    await driver.open([table]);
    try {
      await driver.insert(
        table,
        [
          { id: 'a', on: true, price: '2', count: 4 },
          { id: 'b', on: true, price: '10' },
          { id: 'c', on: false, price: '5' },
        ],
        1000,
      );
      const served: ListQuery = {
        filters: [{ anyOf: [{ path: ['on'], operator: 'EQUALS', kind: 'boolean', value: true }] }],
        orderBy: [{ column: 'price', descending: true }],
        limit: 10,
        offset: 0,
      };
      for (const fields of [undefined, ['count']]) {
        const now = driver.listTextsNow(table, served, 1, fields);
        expect(now).toEqual(await driver.listTexts(table, served, 1, fields));
      }
      expect(driver.listTextsNow(table, served, 0)?.texts).toEqual([
        '{"id":"b","price":"10","on":true}',
        '{"id":"a","count":4,"price":"2","on":true}',
      ]);
      // A sort no index serves runs in a reader: not now.
      const sorted: ListQuery = { ...served, orderBy: [{ column: 'count', descending: false }] };
      expect(driver.listTextsNow(table, sorted, 0)).toBeUndefined();
      // The table in key order, and in the order of a single-field index (its entries end with
      // the key), are read now too; a filter no index searches is not.
      const pages: ListQuery[] = [
        { filters: [], orderBy: [], limit: 2, offset: 1 },
        { filters: [], orderBy: [{ column: 'price', descending: true }], limit: 10, offset: 0 },
      ];
      for (const page of pages) {
        const now = driver.listTextsNow(table, page, 0);
        expect(now, JSON.stringify(page)).toBeDefined();
        expect(now).toEqual(await driver.listTexts(table, page, 0));
      }
      expect(driver.listTextsNow(table, pages[1]!, 0)?.texts.map((t) => JSON.parse(t).id)).toEqual([
        'b',
        'c',
        'a',
      ]);
      const unsearched: ListQuery = {
        filters: [{ anyOf: [{ path: ['count'], operator: 'EQUALS', kind: 'integer', value: 4 }] }],
        orderBy: [],
        limit: 10,
      };
      expect(driver.listTextsNow(table, unsearched, 0)).toBeUndefined();
      // While a transaction is open, the main connection would show others its uncommitted
      // writes: it throws outside the transaction, and answers inside it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inside: readonly string[] | undefined;
      const open = driver.transaction(async () => {
        await driver.insert(table, [{ id: 'd', on: true, price: '20' }], 2000);
        inside = driver.listTextsNow(table, served, 0)?.texts;
        await held;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(() => driver.listTextsNow(table, served, 0)).toThrow(/a transaction is open/);
      release();
      await open;
      expect(inside?.[0]).toBe('{"id":"d","price":"20","on":true}');
      expect(driver.listTextsNow(table, served, 0)?.texts).toHaveLength(3);
      // countNow: a count the index bounds, once a first count (in a reader) found it small.
      const onlyOn = { filters: served.filters };
      expect(driver.countNow(table, onlyOn)).toBeUndefined();
      expect(await driver.count(table, onlyOn)).toBe(3);
      expect(driver.countNow(table, onlyOn)).toBe(3);
      const ranged = {
        filters: [{ anyOf: [{ path: ['count'], operator: 'GT', kind: 'integer', value: 1 }] }],
      } as const;
      expect(await driver.count(table, ranged)).toBe(1);
      expect(driver.countNow(table, ranged)).toBeUndefined(); // no index: always in a reader
    } finally {
      await driver.close();
    }
  });
});

describe('where a list runs', () => {
  it('a page a composite index bounds runs on the main connection, any other list in a reader', async () => {
    const file = join(dir, 'where.db');
    const table: TableDescriptor = {
      ...TABLE,
      columns: TABLE.columns
        .filter((c) => c.name !== '__proto__')
        .map((c) => (c.name === 'price' ? { ...c, indexed: true } : c)),
      indexes: [
        [
          { column: 'on', descending: false },
          { column: 'price', descending: true },
        ],
      ],
    };
    const driver = new SqliteDriver({ filename: file, readers: 1 });
    await driver.open([table]);
    const readers = (): unknown => Reflect.get(driver, 'pool');
    try {
      await driver.insert(
        table,
        [
          { id: 'a', on: true, price: '2' },
          { id: 'b', on: true, price: '10' },
          { id: 'c', on: false, price: '5' },
        ],
        1000,
      );
      const served: ListQuery = {
        filters: [{ anyOf: [{ path: ['on'], operator: 'EQUALS', kind: 'boolean', value: true }] }],
        orderBy: [{ column: 'price', descending: true }],
        limit: 10,
        offset: 0,
      };
      const { texts } = await driver.listTexts(table, served, 0);
      expect(texts.map((text) => (JSON.parse(text) as { id: string }).id)).toEqual(['b', 'a']);
      expect(readers()).toBeUndefined(); // no reader was started for it
      const sorted: ListQuery = { ...served, orderBy: [{ column: 'id', descending: false }] };
      expect((await driver.list(table, sorted)).map((s) => s.record['id'])).toEqual(['a', 'b']);
      expect(readers()).toBeDefined();
    } finally {
      await driver.close();
    }
  });
});

/**
 * Pages SQLite writes whole (`joined`): every record's text is written by SQL, with the values
 * SQLite writes differently from `JSON.stringify` handed back to JavaScript. The stored values
 * here are written with SQL, as another program could: the texts must still be byte for byte
 * `JSON.stringify` of the records `list()` decodes.
 */
describe('pages written whole by SQLite', () => {
  const WIDE_JSON: TableDescriptor = {
    entity: 'WIDE',
    table: 'wide',
    key: ['id'],
    columns: [
      { name: 'note', kind: 'text', fieldType: 'STRING', required: false, indexed: false },
      { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
      { name: 'n', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
      { name: 'x', kind: 'double', fieldType: 'DOUBLE', required: false, indexed: false },
      { name: 'd', kind: 'decimal', fieldType: 'DECIMAL', required: false, indexed: false },
      { name: 'on', kind: 'boolean', fieldType: 'BOOL', required: false, indexed: false },
      { name: 'day', kind: 'date', fieldType: 'DATE', required: false, indexed: false },
      { name: "it's", kind: 'text', fieldType: 'STRING', required: false, indexed: false },
      { name: 'doc', kind: 'json', fieldType: 'OBJECT', required: false, indexed: false },
    ],
  };
  const DOUBLES = [
    0,
    -0,
    100,
    -2.5,
    0.1,
    0.1 + 0.2,
    1 / 3,
    1e-5,
    1e-7,
    1e21,
    123456789012345680000,
    1e15,
    2 ** 53 + 2,
    5e-324,
    Number.MAX_VALUE,
    10000.44,
    Infinity,
    -Infinity,
  ];
  const STRINGS = [
    '',
    'plain',
    'quote " backslash \\ / newline \n tab \t \u0000 \u001f \u007f',
    'café ß ✓ 😀 \u2028 \u2029',
    'ends like a record boundary },{',
    '},{"id":"fake"}',
    "it's",
  ];
  const DOCS = [
    '[{"id":1},{"id":2}]',
    '{"a":"},{","b":[{"id":"x"},{"note":"y"}]}',
    '{ "spaced" : 1.0 }',
    '"},{\\"id\\":"',
  ];

  it.each([
    ['with a JSON column', true],
    ['without JSON columns', false],
  ])(
    "writes each record as JSON.stringify of list()'s record, page after page (%s)",
    async (_, withJson) => {
      const file = join(dir, `whole-${withJson}.db`);
      const driver = new SqliteDriver({ filename: file, readers: 0 });
      const WIDE: TableDescriptor = withJson
        ? WIDE_JSON
        : { ...WIDE_JSON, columns: WIDE_JSON.columns.filter((c) => c.kind !== 'json') };
      await driver.open([WIDE]);
      try {
        await driver.insert(WIDE, [{ id: 'seed' }], 1000);
        const other = new Database(file);
        const insert = other.prepare(
          `INSERT INTO wide (note, id, n, x, d, _eg_dec_d, "on", day, "it's"${withJson ? ', doc' : ''}, _eg_created_ms, _eg_updated_ms, _eg_version)
         VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?${withJson ? ', ?' : ''}, 1, 1, 1)`,
        );
        const rows = 60;
        for (let i = 0; i < rows; i++) {
          const pick = <T>(list: readonly T[], salt: number): T => list[(i * salt) % list.length]!;
          insert.run(
            i % 5 === 0 ? null : pick(STRINGS, 3),
            `r${String(i).padStart(3, '0')}${pick(STRINGS, 1)}`,
            // Beyond the safe range, text or a REAL in an INTEGER column: another program's values.
            [null, 7, -42, 2 ** 53 + 1, 'twelve', 2.5][i % 6],
            i % 7 === 0 ? null : pick(DOUBLES, 5),
            i % 4 === 0 ? null : `${i}.50`,
            [null, 0, 1, 2, 'yes'][i % 5],
            i % 3 === 0 ? null : '2026-11-28',
            i % 2 === 0 ? null : pick(STRINGS, 2),
            ...(withJson ? [i % 3 === 1 ? null : pick(DOCS, 7)] : []),
          );
        }
        other.close();
        const all = await driver.list(WIDE, { filters: [], orderBy: [], limit: 1000, offset: 0 });
        expect(all).toHaveLength(rows + 1);
        for (const orderBy of [[], [{ column: 'x', descending: true }]]) {
          const listed = await driver.list(WIDE, { filters: [], orderBy, limit: 1000, offset: 0 });
          for (const size of [1, 2, 7]) {
            for (let offset = 0; offset <= listed.length; offset += size) {
              const query: ListQuery = { filters: [], orderBy, limit: size + 1, offset };
              const page = await driver.listTexts(WIDE, query, size - 1, undefined, true);
              const expected = listed.slice(offset, offset + size);
              expect(page.joined?.text).toBe(
                expected.map((stored) => JSON.stringify(stored.record)).join(','),
              );
              expect(page.joined?.records).toBe(listed.slice(offset, offset + size + 1).length);
              // The kept record is read back from its text: a value JSON cannot hold (another
              // program's Infinity) is null there, as it is in the cursor's JSON.
              expect(page.kept).toEqual(
                expected.length === size
                  ? { record: JSON.parse(JSON.stringify(expected[size - 1]!.record)) }
                  : undefined,
              );
              expect(page.count).toBe(listed.length);
              const now = driver.listTextsNow(WIDE, query, size - 1);
              expect(now?.joined).toEqual(page.joined);
            }
          }
        }
      } finally {
        await driver.close();
      }
    },
  );

  it.each([
    ['a BOOL key first', 'boolean', 'BOOL', [{ k: true, v: 1 }, { k: false }]],
    ['an INTEGER key first', 'integer', 'INTEGER', [{ k: -3, v: 2 }, { k: 7 }, { k: 0 }]],
    ['a DATE key first', 'date', 'DATE', [{ k: '2026-01-02' }, { k: '2026-01-01', v: 0 }]],
  ] as const)(
    'opens the record right with %s, and with every other field NULL',
    async (_, kind, fieldType, records) => {
      const table: TableDescriptor = {
        entity: 'KEYED',
        table: `keyed_${kind}`,
        key: ['k'],
        columns: [
          { name: 'k', kind, fieldType, required: true, indexed: false },
          { name: 'v', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
        ],
      };
      const driver = new SqliteDriver({ filename: join(dir, `keyed-${kind}.db`), readers: 0 });
      await driver.open([table]);
      try {
        await driver.insert(table, [...records], 1000);
        const query: ListQuery = { filters: [], orderBy: [], limit: records.length + 1, offset: 0 };
        const listed = await driver.list(table, query);
        const page = await driver.listTexts(table, query, records.length - 1);
        expect(page.joined?.text).toBe(
          listed.map((stored) => JSON.stringify(stored.record)).join(','),
        );
      } finally {
        await driver.close();
      }
    },
  );

  it.each([0, 1])(
    'writes a page holding a BLOB another program wrote into a text column record by record (%i readers)',
    async (readers) => {
      const file = join(dir, `blob-${readers}.db`);
      const table: TableDescriptor = {
        ...TABLE,
        columns: [...TABLE.columns.filter((c) => c.name === 'id'), TEXT_NOTE],
      };
      const driver = new SqliteDriver({ filename: file, readers });
      await driver.open([table]);
      try {
        await driver.insert(
          table,
          [{ id: 'a' }, { id: 'b', note: 'plain' }, { id: 'c', note: 'x' }],
          1000,
        );
        const other = new Database(file);
        other.prepare(`UPDATE thing SET note = ? WHERE id = 'b'`).run(Buffer.from([0, 255]));
        other.close();
        // SQLite's json_quote refuses the BLOB: the page is written as a read by key writes it.
        const query: ListQuery = { filters: [], orderBy: [], limit: 3, offset: 0 };
        const listed = (await driver.list(table, query)).map((stored) =>
          JSON.stringify(stored.record),
        );
        expect(listed[1]).toBe('{"id":"b","note":{"type":"Buffer","data":[0,255]}}');
        const page = await driver.listTexts(table, query, 1);
        expect(page.texts).toEqual(listed);
        expect(page.kept?.record).toEqual({ id: 'b', note: Buffer.from([0, 255]) });
        if (readers === 0) {
          const now = driver.listTextsNow(table, query, 1);
          expect(now?.texts).toEqual(listed);
        }
        // A page without the BLOB is still written whole by SQLite.
        const rest: ListQuery = { ...query, offset: 2, limit: 2 };
        expect((await driver.listTexts(table, rest, 0)).joined?.text).toBe(listed[2]);
      } finally {
        await driver.close();
      }
    },
  );

  it('finds where the last record starts, past look-alikes inside JSON values', () => {
    const records = [
      { id: 'a', doc: [{ id: 1 }, { id: 2 }] },
      { id: 'b},{', doc: { s: '},{"id":' } },
      { id: 'c', note: 'x},{' },
    ];
    const cut = (texts: string[], nested: boolean): void => {
      const page = texts.join(',');
      let end = page.length;
      for (let i = texts.length - 1; i >= 0; i--) {
        const start = lastRecordStart(page, end, nested);
        expect(page.slice(start, end)).toBe(texts[i]);
        end = start - 1;
      }
    };
    cut(
      records.map((record) => JSON.stringify(record)),
      true,
    );
    // Without JSON values, only strings ending like a boundary look like one.
    cut(
      [{ id: 'a},{' }, { id: 'b', note: '},{"id":"x"},{' }, { id: '},{' }].map((record) =>
        JSON.stringify(record),
      ),
      false,
    );
  });
});
