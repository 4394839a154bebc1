/**
 * Listing, round 2 (SPEC §17) over HTTP on both drivers: `filter=` expressions, `fields=`
 * selection, `count=true`. The property test draws random expressions over a random data set and
 * checks that the list and recordCounts return exactly the records an in-memory evaluator of the
 * same expression selects.
 *
 * Each run draws a fresh seed (printed in every failure); `PROPERTY_SEED=<n>` replays a run and
 * `PROPERTY_RUNS=<n>` changes how many expressions it tries per driver (default 150).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootedService } from '../helpers/service.js';
import { bootListing, describeOnListingDrivers } from '../helpers/listing.js';

const SEED = Number(process.env['PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 150);
const replay = `replay with PROPERTY_SEED=${SEED} PROPERTY_RUNS=${RUNS}`;

type Item = Record<string, unknown> & { code: string };

const NAMES = [
  'Hammer',
  'hammer',
  'Ham "big"',
  'back\\slash',
  '100%',
  'a_b',
  "O'Brien",
  'Zeta',
  'éclair',
];
const NOTES = ['plain', 'PLAIN', 'say "hi"', '%', '_', 'x\\y', ''];
const PRICES = ['10.5', '9.75', '-1', '0.001', '100', '0'];
const DAYS = ['2024-01-15', '2024-02-29', '2025-01-01'];
const STATUSES = ['NEW', 'Open', 'closed'];
const CITIES = ['Pisa', 'Rome', 'pisa'];
const TAGS = ['red', 'blue', 'Red', '%'];

/** A record of ITEM with every optional field drawn present or absent. */
const itemArbitrary = (code: string): fc.Arbitrary<Item> =>
  fc
    .record(
      {
        name: fc.constantFrom(...NAMES),
        note: fc.constantFrom(...NOTES),
        qty: fc.integer({ min: -3, max: 12 }),
        price: fc.constantFrom(...PRICES),
        active: fc.boolean(),
        day: fc.constantFrom(...DAYS),
        status: fc.constantFrom(...STATUSES),
        address: fc.record(
          { city: fc.constantFrom(...CITIES), zip: fc.integer({ min: 0, max: 3 }) },
          { requiredKeys: [] },
        ),
        tags: fc.subarray(TAGS),
      },
      { requiredKeys: ['name'] },
    )
    .map((fields) => ({ code, ...fields }));

const ITEMS: Item[] = fc.sample(
  fc.tuple(
    ...Array.from({ length: 40 }, (_, i) => itemArbitrary(`p${String(i).padStart(2, '0')}`)),
  ),
  { seed: SEED, numRuns: 1 },
)[0]!;

/** A generated expression: its text and its meaning, evaluated in memory. */
interface Generated {
  readonly text: string;
  readonly test: (item: Item) => boolean;
}

function literal(value: string | number | boolean): string {
  return typeof value === 'string'
    ? `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
    : String(value);
}

function valueAt(item: Item, path: string): unknown {
  let value: unknown = item;
  for (const name of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

type Comparable = string | number | boolean;

/** The comparison of a present value as the service defines it. */
function compare(actual: Comparable, operator: string, expected: Comparable): boolean {
  switch (operator) {
    case '=':
      return actual === expected;
    case '!=':
      return actual !== expected;
    case '>':
      return actual > expected;
    case '>=':
      return actual >= expected;
    case '<':
      return actual < expected;
    case '<=':
      return actual <= expected;
    case '~':
      return String(actual).includes(String(expected));
    case '!~':
      return !String(actual).includes(String(expected));
    case '~*':
      return String(actual).toLowerCase().includes(String(expected).toLowerCase());
    case '!~*':
      return !String(actual).toLowerCase().includes(String(expected).toLowerCase());
    default:
      throw new Error(operator);
  }
}

/** One field of the fixture: how its values are drawn and read for comparison. */
interface FieldSpec {
  readonly path: string;
  readonly operators: readonly string[];
  /** Values as written in an expression. */
  readonly values: readonly Comparable[];
  /** The stored value as the comparison sees it (DECIMAL as a number, ENUM in schema spelling). */
  readonly read: (value: unknown) => Comparable;
  /** The written value converted as the service converts it. */
  readonly convert: (value: Comparable) => Comparable;
}

const ORDER = ['=', '!=', '>', '>=', '<', '<='];
const TEXT = [...ORDER, '~', '!~', '~*', '!~*'];
const same = (value: unknown): Comparable => value as Comparable;
const enumSpelling = (value: Comparable): Comparable =>
  STATUSES.find((status) => status.toLowerCase() === String(value).toLowerCase()) ?? '';

const FIELDS: readonly FieldSpec[] = [
  {
    path: 'name',
    operators: TEXT,
    values: [...NAMES, 'Ham', 'am', '"', '\\', '%', '_', '', 'M'],
    read: same,
    convert: same,
  },
  { path: 'note', operators: TEXT, values: [...NOTES, 'lai', 'P'], read: same, convert: same },
  { path: 'qty', operators: ORDER, values: [-3, 0, 1, 5, 12, 13], read: same, convert: same },
  {
    path: 'price',
    operators: ORDER,
    values: [10.5, 9.75, -1, 0.001, 0, 50],
    read: (v) => Number(v),
    convert: (v) => Number(v),
  },
  { path: 'active', operators: ['=', '!='], values: [true, false], read: same, convert: same },
  { path: 'day', operators: ORDER, values: [...DAYS, '2024-02-01'], read: same, convert: same },
  {
    path: 'status',
    operators: TEXT.filter((op) => !op.includes('~')),
    values: ['NEW', 'new', 'OPEN', 'closed'],
    read: same,
    convert: enumSpelling,
  },
  {
    path: 'address.city',
    operators: TEXT,
    values: [...CITIES, 'is', 'P'],
    read: same,
    convert: same,
  },
  { path: 'address.zip', operators: ORDER, values: [0, 1, 2, 3], read: same, convert: same },
];

const comparisonArbitrary: fc.Arbitrary<Generated> = fc.constantFrom(...FIELDS).chain((field) =>
  fc.oneof(
    fc.tuple(fc.constantFrom(...field.operators), fc.constantFrom(...field.values)).map(
      ([operator, value]): Generated => ({
        text: `${field.path} ${operator} ${literal(value)}`,
        test: (item) => {
          const stored = valueAt(item, field.path);
          // An absent field matches only the negated operators.
          if (stored === undefined) return operator === '!=' || operator.startsWith('!~');
          return compare(field.read(stored), operator, field.convert(value));
        },
      }),
    ),
    fc
      .tuple(
        fc.boolean(),
        fc.subarray([...field.values], {
          minLength: 1,
          maxLength: Math.min(3, field.values.length),
        }),
      )
      .map(
        ([negated, values]): Generated => ({
          text: `${field.path} ${negated ? 'not in' : 'in'} (${values.map(literal).join(', ')})`,
          test: (item) => {
            const stored = valueAt(item, field.path);
            const found =
              stored !== undefined &&
              values.some((value) => field.read(stored) === field.convert(value));
            return negated ? !found : found;
          },
        }),
      ),
    fc.boolean().map(
      (negated): Generated => ({
        text: `${field.path} is ${negated ? 'not ' : ''}null`,
        test: (item) => (valueAt(item, field.path) === undefined) !== negated,
      }),
    ),
  ),
);

const membershipArbitrary: fc.Arbitrary<Generated> = fc
  .tuple(fc.constantFrom('~', '!~'), fc.constantFrom(...TAGS, 'green'))
  .map(([operator, tag]) => ({
    text: `tags ${operator} ${literal(tag)}`,
    test: (item) => {
      const tags = (item['tags'] as string[] | undefined) ?? [];
      return operator === '~' ? tags.includes(tag) : !tags.includes(tag);
    },
  }));

const expressionArbitrary: fc.Arbitrary<Generated> = fc.letrec<{ node: Generated }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    comparisonArbitrary,
    membershipArbitrary,
    fc
      .tuple(
        fc.constantFrom('and', 'or', 'AND', 'Or'),
        fc.array(tie('node'), { minLength: 2, maxLength: 3 }),
      )
      .map(
        ([word, operands]): Generated => ({
          text: operands.map((operand) => `(${operand.text})`).join(` ${word} `),
          test: (item) =>
            word.toLowerCase() === 'and'
              ? operands.every((operand) => operand.test(item))
              : operands.some((operand) => operand.test(item)),
        }),
      ),
    tie('node').map(
      (operand): Generated => ({
        text: `not (${operand.text})`,
        test: (item) => !operand.test(item),
      }),
    ),
  ),
})).node;

let service: BootedService;

async function listCodes(query: string): Promise<string[]> {
  const response = await service.request('GET', `/data/ITEM?${query}`);
  expect(response.status, `${query}: ${response.text}`).toBe(200);
  return (response.body.data as { code: string }[]).map((record) => record.code);
}

async function expect400(path: string): Promise<string> {
  const response = await service.request('GET', path);
  expect(response.status, `${path}: ${response.text}`).toBe(400);
  expect(response.body.status).toBe('error');
  return response.body.error.reason as string;
}

const filter = (text: string): string => `filter=${encodeURIComponent(text)}`;

describeOnListingDrivers((driverName) => {
  beforeAll(async () => {
    service = await bootListing(driverName, 'e2e-listing-expressions');
    const post = async (entity: string, data: unknown): Promise<void> => {
      const response = await service.request('POST', `/data/${entity}`, { body: { data } });
      expect(response.status, response.text).toBe(200);
    };
    await post('OWNER', [
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);
    await post('ITEM', ITEMS);
    await post('ITEM', [
      { code: 'r1', name: 'ref one', owner: 1, qty: 100 },
      { code: 'r2', name: 'ref two', owner: 2, qty: 100 },
    ]);
  });
  afterAll(async () => {
    await service.close();
  });

  describe('filter= property', () => {
    it(`returns the records an in-memory evaluator selects (${replay})`, async () => {
      const expressions = fc.sample(expressionArbitrary, { seed: SEED + 1, numRuns: RUNS });
      for (const expression of expressions) {
        // The two reference records are left out by a condition the evaluator need not know.
        const query = `${filter(expression.text)}&code[STARTS_WITH]=p&orderBy=name&limit=1000`;
        const expected = ITEMS.filter((item) => expression.test(item))
          .map((item) => item.code)
          .sort();
        const codes = await listCodes(query);
        expect([...codes].sort(), `${driverName}: ${expression.text} (${replay})`).toEqual(
          expected,
        );
        const counted = await service.request('GET', `/entity/ITEM/recordCounts?${query}`);
        expect(counted.body.data.count, `${driverName}: ${expression.text}`).toBe(expected.length);
      }
    });
  });

  describe('filter=', () => {
    it('is ANDed with the bracket filters', async () => {
      const codes = await listCodes(`${filter('qty = 100 or qty = 99')}&name[CONTAINS]=two`);
      expect(codes).toEqual(['r2']);
    });

    it('goes through a reference as the bracket syntax does', async () => {
      expect(await listCodes(filter('owner.name = "one" or owner.name = "none"'))).toEqual(['r1']);
      expect(await listCodes(filter('not (owner.name ~ "o") and qty = 100'))).toEqual([]);
    });

    it('pages by cursor with the expression bound into the cursor', async () => {
      const query = `${filter('qty >= 0 or qty is null')}&orderBy=name&limit=5`;
      const first = await service.request('GET', `/data/ITEM?${query}`);
      expect(first.status).toBe(200);
      const next = first.body.meta.next as string;
      const second = await service.request(
        'GET',
        `/data/ITEM?${query}&cursor=${encodeURIComponent(next)}`,
      );
      expect(second.status, second.text).toBe(200);
      // Another expression with the same cursor is refused.
      const reason = await expect400(
        `/data/ITEM?${filter('qty >= 1')}&orderBy=name&limit=5&cursor=${encodeURIComponent(next)}`,
      );
      expect(reason).toMatch(/cursor/i);
    });

    it.each([
      ['name = "a" and price >', "filter: expected a value after '>' at column 23"],
      ['nope = 1', 'filter: Unknown field nope in Entity ITEM at column 1'],
      ['qty = "many"', 'filter: Value "many" is not a valid INTEGER at column 1'],
      ['qty ~ 1', 'filter: Operator CONTAINS does not apply to field qty of type INTEGER'],
      ['status = "maybe"', 'is not a valid ENUM (one of NEW, Open, closed) at column 1'],
      ['address = 1', 'filter: Field address of type OBJECT cannot be filtered'],
      ['nope is null', 'filter: unknown field nope in Entity ITEM at column 1'],
    ])('answers 400 for %s', async (text, mention) => {
      expect(await expect400(`/data/ITEM?${filter(text)}`)).toContain(mention);
      expect(await expect400(`/entity/ITEM/recordCounts?${filter(text)}`)).toContain(mention);
    });

    it('may be given once', async () => {
      expect(await expect400(`/data/ITEM?${filter('qty = 1')}&${filter('qty = 2')}`)).toBe(
        'Parameter filter may be given only once',
      );
    });

    it('treats quotes, percent signs and SQL in values as plain text', async () => {
      for (const text of [
        'name = "x\\" OR 1=1 --"',
        "name = \"x' OR '1'='1\"",
        'name ~ "%"',
        'name ~ "_"',
      ]) {
        const expected = ITEMS.filter((item) => {
          const value = (text.match(/"(.*)"$/)?.[1] ?? '').replaceAll('\\"', '"');
          return text.includes('~')
            ? item['name'] === undefined
              ? false
              : String(item['name']).includes(value)
            : item['name'] === value;
        }).map((item) => item.code);
        expect((await listCodes(filter(text))).sort(), text).toEqual(expected.sort());
      }
    });
  });

  describe('case-insensitive operators', () => {
    it.each([
      ['name[IEQUALS]=HAMMER', ['hammer', 'Hammer']],
      ['name[ICONTAINS]=AM', ['am']],
      ['name[ISTARTS_WITH]=ha', ['ha']],
      ['name[IENDS_WITH]=MER', ['mer']],
      ['address.city[IEQUALS]=PISA', ['pisa']],
      ['name[ICONTAINS]=%C3%89CL', ['écl']],
    ])('%s', async (query, _needles) => {
      const [parameter, raw] = query.split('=') as [string, string];
      const needle = decodeURIComponent(raw).toLowerCase();
      const path = parameter.slice(0, parameter.indexOf('['));
      const operator = parameter.slice(parameter.indexOf('[') + 1, -1);
      const expected = ITEMS.filter((item) => {
        const value = valueAt(item, path);
        if (typeof value !== 'string') return false;
        const folded = value.toLowerCase();
        if (operator === 'IEQUALS') return folded === needle;
        if (operator === 'ICONTAINS') return folded.includes(needle);
        if (operator === 'ISTARTS_WITH') return folded.startsWith(needle);
        return folded.endsWith(needle);
      }).map((item) => item.code);
      expect((await listCodes(`${query}&code[STARTS_WITH]=p`)).sort()).toEqual(expected.sort());
    });

    it('folds Unicode case: accented capitals and the Greek final sigma', async () => {
      const post = await service.request('POST', '/data/ITEM', {
        body: { data: [{ code: 'u1', name: 'ΣΟΦΟΣ ÉCLAIR' }] },
      });
      expect(post.status, post.text).toBe(200);
      try {
        expect(await listCodes('name[IEQUALS]=σοφος%20éclair')).toEqual(['u1']);
        expect(await listCodes(filter('name ~* "οσ écl" and code ~ "u"'))).toEqual(['u1']);
        expect(await listCodes('name[IENDS_WITH]=%C3%A9clair&code[STARTS_WITH]=u')).toEqual(['u1']);
        expect(await listCodes('name[CONTAINS]=%C3%A9clair&code[STARTS_WITH]=u')).toEqual([]);
      } finally {
        await service.request('DELETE', '/data/ITEM/u1');
      }
    });

    it('refuses them on types that are not text', async () => {
      expect(await expect400('/data/ITEM?qty[ICONTAINS]=1')).toContain(
        'Operator ICONTAINS does not apply to field qty of type INTEGER',
      );
    });
  });

  describe('count=true', () => {
    it('adds meta.count, the number of matching records, next to a page', async () => {
      const response = await service.request('GET', '/data/ITEM?qty[GTE]=100&limit=1&count=true');
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(1);
      expect(response.body.meta).toMatchObject({ start: 0, limit: 1, count: 2 });
      expect(response.body.meta.next).toBeTypeOf('string');
    });

    it('counts every matching record past the page, with a filter expression too', async () => {
      const all = ITEMS.length + 2;
      const deep = await service.request('GET', `/data/ITEM?start=${all + 5}&limit=3&count=true`);
      expect(deep.body.data).toEqual([]);
      expect(deep.body.meta.count).toBe(all);
      const expected = ITEMS.filter((item) => item['qty'] === undefined).length;
      const nulls = await service.request(
        'GET',
        `/data/ITEM?${filter('qty is null')}&limit=2&count=true`,
      );
      expect(nulls.body.meta.count).toBe(expected);
    });

    it('is left out without count=true, and count=false is the same', async () => {
      const plain = await service.request('GET', '/data/ITEM?limit=1');
      expect(plain.body.meta.count).toBeUndefined();
      const off = await service.request('GET', '/data/ITEM?limit=1&count=false');
      expect(off.body.meta.count).toBeUndefined();
      expect(await expect400('/data/ITEM?count=yes')).toBe(
        'Parameter count must be true or false, not "yes"',
      );
    });
  });

  describe('fields=', () => {
    it('returns only the named fields of each record, dotted paths into OBJECT fields', async () => {
      const response = await service.request(
        'GET',
        '/data/ITEM?fields=code,address.city,qty&orderBy=name&limit=1000',
      );
      expect(response.status).toBe(200);
      const records = response.body.data as Record<string, unknown>[];
      const byCode = new Map(ITEMS.map((item) => [item.code, item]));
      for (const record of records) {
        const item = byCode.get(record['code'] as string);
        if (item === undefined) continue;
        const expected: Record<string, unknown> = { code: item.code };
        if (item['qty'] !== undefined) expected['qty'] = item['qty'];
        const address = item['address'] as Record<string, unknown> | undefined;
        if (address !== undefined)
          expected['address'] = address['city'] === undefined ? {} : { city: address['city'] };
        expect(record).toEqual(expected);
      }
    });

    it('answers a selection of top-level fields exactly as the full records, cut down', async () => {
      const query = 'orderBy=name&limit=15&code[STARTS_WITH]=p';
      const full = await service.request('GET', `/data/ITEM?${query}`);
      const part = await service.request(
        'GET',
        `/data/ITEM?${query}&fields=tags,active,code,price,address`,
      );
      expect(part.status).toBe(200);
      const keep = ['code', 'price', 'active', 'address', 'tags'];
      const expected = (full.body.data as Record<string, unknown>[]).map((record) =>
        Object.fromEntries(Object.entries(record).filter(([name]) => keep.includes(name))),
      );
      expect(part.body.data).toEqual(expected);
      // Field order is the record's, whatever the order of fields=.
      expect(JSON.stringify(part.body.data)).toBe(JSON.stringify(expected));
      expect(part.body.meta).toEqual(full.body.meta);
    });

    it('selects inside expanded references, and the reference as a whole', async () => {
      const response = await service.request(
        'GET',
        '/data/ITEM?fields=code,owner.name&expand=owner&qty[EQUALS]=100',
      );
      expect(response.status, response.text).toBe(200);
      expect(response.body.data).toEqual([
        { code: 'r1', owner: { name: 'one' } },
        { code: 'r2', owner: { name: 'two' } },
      ]);
      const whole = await service.request('GET', '/data/ITEM/r1?fields=owner&expand=owner');
      expect(whole.body.data).toEqual({ owner: { id: 1, name: 'one' } });
      const id = await service.request('GET', '/data/ITEM/r1?fields=owner,name');
      expect(id.body.data).toEqual({ name: 'ref one', owner: 1 });
    });

    it('applies to GET by key, with an ETag of its own representation', async () => {
      const full = await service.request('GET', '/data/ITEM/r1');
      const part = await service.request('GET', '/data/ITEM/r1?fields=name');
      expect(part.status).toBe(200);
      expect(part.body.data).toEqual({ name: 'ref one' });
      const tag = part.headers.get('etag') as string;
      expect(tag).not.toBe(full.headers.get('etag'));
      const again = await service.request('GET', '/data/ITEM/r1?fields=name', {
        headers: { 'If-None-Match': tag },
      });
      expect(again.status).toBe(304);
      const other = await service.request('GET', '/data/ITEM/r1?fields=qty', {
        headers: { 'If-None-Match': tag },
      });
      expect(other.status).toBe(200);
      // A name spelled with escapes is still the parameter.
      const escaped = await service.request('GET', '/data/ITEM/r1?%66ields=qty');
      expect(escaped.body.data).toEqual({ qty: 100 });
    });

    it.each([
      ['fields=code,nope', '"nope" is not a field in Entity ITEM'],
      ['fields=address.nope', '"nope" is not a field in field address'],
      ['fields=qty.x', 'qty is a INTEGER, not an OBJECT or an expanded reference'],
      ['fields=owner.name', 'expand it (expand=owner)'],
      ['fields=code,,name', 'Parameter fields has an empty field name'],
    ])('answers 400 for %s', async (query, mention) => {
      expect(await expect400(`/data/ITEM?${query}`)).toContain(mention);
      expect(await expect400(`/data/ITEM/r1?${query}`)).toContain(mention);
    });
  });
});
