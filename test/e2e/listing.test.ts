/**
 * GET /data/{entity} and GET /entity/{entity}/recordCounts over HTTP (SPEC §4.2, §4.4): every
 * operator on every type it applies to, OR / AND, dotted paths, array membership, sorting, offset
 * paging, the 400s, and injection attempts. Keyset paging under concurrent writes is in
 * listing-paging.test.ts.
 *
 * The data set below (ITEM records a–j) is small and hand-made so that every expectation can be
 * checked by reading it; each filter case also checks that recordCounts agrees with the list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootedService } from '../helpers/service.js';
import { bootListing, describeOnListingDrivers } from '../helpers/listing.js';

let service: BootedService;

const BIG = '123456789012345678901234567890';

/** ITEM records as sent (values deliberately not canonical where the type allows it). */
const ITEMS: Record<string, unknown>[] = [
  {
    code: 'a',
    name: 'Alpha',
    note: 'plain text',
    qty: 10,
    score: 1.5,
    price: '10.5',
    active: true,
    day: '2024-01-15',
    at: '2024-03-01T01:30:00+02:00',
    status: 'new',
    size: 'S',
    owner: 1,
    group: 'g1',
    address: {
      city: 'Pisa',
      zip: 56100,
      fee: '2.50',
      since: '2020-01-01',
      verified: true,
      seen: '2024-01-01T10:00:00+01:00',
      labels: ['old', 'center'],
      geo: { lat: 43.7, country: 'it' },
    },
    tags: ['red', 'blue'],
    ratings: [5, 3],
    amounts: ['2.50', 10],
    days: ['2024-02-29'],
    owners: [1, '10'],
    states: ['new'],
    limit: 7,
  },
  {
    code: 'b',
    name: 'beta',
    note: '100% sure',
    qty: '2',
    score: -0.5,
    price: 9.75,
    active: false,
    day: '2024-02-29',
    at: '2024-02-29T23:30:00Z',
    status: 'OPEN',
    size: 'M',
    owner: 2,
    group: 'g2',
    address: {
      city: 'Paris',
      zip: 75001,
      fee: 10,
      since: '2021-06-30',
      verified: false,
      seen: '2024-01-01T09:00:00Z',
      labels: ['new'],
      geo: { lat: 48.85, country: 'FR' },
    },
    tags: ['blue'],
    ratings: [1],
    amounts: ['10.0'],
    days: ['2024-01-01', '2024-02-29'],
    owners: [2],
    states: ['OPEN', 'closed'],
    limit: 3,
  },
  {
    code: 'c',
    name: 'Gamma',
    note: 'under_score',
    qty: -5,
    score: 100,
    price: `${BIG}.000000000000000000001`,
    active: 'true',
    day: '2023-12-31',
    at: '2024-02-29T23:29:59.999Z',
    status: 'closed',
    size: 'L',
    owner: 10,
    group: 'g10',
    address: { city: 'pisa', labels: ['center'], geo: { country: 'DE' } },
    tags: [],
    ratings: [10, 2],
    amounts: [],
    owners: [10],
  },
  {
    code: 'd',
    name: "O'Brien",
    note: 'back\\slash',
    qty: 0,
    score: 0,
    price: BIG,
    active: false,
    day: '2024-03-01',
    at: '2024-03-01T00:00:00-05:00',
    status: 'NEW',
    size: 'M',
    owner: 2,
    group: 'g1',
    tags: ['Red', 'x'],
    ratings: [3],
    amounts: ['-0.50'],
  },
  {
    code: 'e',
    name: 'delta',
    note: 'say "hi"',
    qty: 10,
    score: 2.25,
    price: '10.50',
    status: 'Open',
    size: 'S',
    group: 'g2',
    address: { city: 'Rome', zip: 100, fee: '2.5' },
    tags: ['red'],
  },
  { code: 'f', name: 'Epsilon' },
  {
    code: 'g',
    name: 'zeta',
    note: '%',
    qty: 7,
    price: '-1',
    day: '2025-01-01',
    tags: ['%'],
    ratings: [7],
  },
  {
    code: 'h',
    name: 'Eta',
    note: '_',
    qty: 8,
    price: '0.001',
    active: true,
    at: '2023-01-01T00:00:00Z',
  },
  {
    code: 'i',
    name: 'theta',
    note: 'PLAIN TEXT',
    qty: 10,
    price: '9.750',
    status: 'closed',
    owner: 1,
  },
  { code: 'j', name: "x' OR '1'='1", note: "it's", qty: 1 },
];

const ALL = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];

/** Every code but the given ones. */
function except(...codes: string[]): string[] {
  return ALL.filter((code) => !codes.includes(code));
}

/** A query string from name/value pairs, every name and value percent-encoded. */
function qs(pairs: readonly (readonly [string, string])[]): string {
  return pairs
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
}

/** GET /data/ITEM?<query>: asserts 200 and returns the codes in response order. */
async function listCodes(query: string): Promise<string[]> {
  const response = await service.request('GET', `/data/ITEM?${query}`);
  expect(response.status, `${query}: ${response.text}`).toBe(200);
  expect(response.body.status).toBe('success');
  return (response.body.data as { code: string }[]).map((record) => record.code);
}

async function countOf(query: string): Promise<number> {
  const response = await service.request('GET', `/entity/ITEM/recordCounts?${query}`);
  expect(response.status, `${query}: ${response.text}`).toBe(200);
  return response.body.data.count as number;
}

/** Asserts a 400 in the error envelope whose reason mentions `mention`; returns the reason. */
async function expect400(path: string, mention: string): Promise<string> {
  const response = await service.request('GET', path);
  expect(response.status, `${path}: ${response.text}`).toBe(400);
  expect(response.body.status).toBe('error');
  const reason = response.body.error.reason as string;
  expect(reason, path).toContain(mention);
  return reason;
}

describeOnListingDrivers((driverName) => {
  beforeAll(async () => {
    service = await bootListing(driverName, 'e2e-listing');
    const post = async (entity: string, data: unknown): Promise<void> => {
      const response = await service.request('POST', `/data/${entity}`, { body: { data } });
      expect(response.status, response.text).toBe(200);
    };
    await post('OWNER', [
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
      { id: 10, name: 'ten' },
    ]);
    await post('GROUP', [{ name: 'g1' }, { name: 'g2' }, { name: 'g10' }]);
    await post('ITEM', ITEMS);
  });
  afterAll(async () => {
    await service.close();
  });

  /** [description, query pairs, expected codes (any order)]. */
  type FilterCase = readonly [string, readonly (readonly [string, string])[], readonly string[]];

  /** Runs filter cases against the list and the count. */
  function filterCases(cases: readonly FilterCase[]): void {
    it.each(cases)('%s', async (_title, pairs, expected) => {
      const query = qs(pairs);
      const codes = await listCodes(query);
      expect([...codes].sort()).toEqual([...expected].sort());
      expect(new Set(codes).size).toBe(codes.length);
      expect(await countOf(query)).toBe(expected.length);
    });
  }

  describe('the data set', () => {
    it('lists every record in key order, with an empty meta, when nothing is asked', async () => {
      const response = await service.request('GET', '/data/ITEM');
      expect(response.status).toBe(200);
      expect(response.body.meta).toEqual({});
      expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(ALL);
      expect(await countOf('')).toBe(10);
    });

    it('stores the canonical values the filters compare with', async () => {
      const response = await service.request('GET', '/data/ITEM/c');
      expect(response.body.data).toMatchObject({
        price: `${BIG}.000000000000000000001`,
        status: 'closed',
        at: '2024-02-29T23:29:59.999Z',
      });
      const a = await service.request('GET', '/data/ITEM/a');
      expect(a.body.data).toMatchObject({
        status: 'NEW',
        at: '2024-02-29T23:30:00.000Z',
        price: '10.5',
      });
    });
  });

  describe('STRING filters', () => {
    filterCases([
      ['name=Alpha (EQUALS by default)', [['name', 'Alpha']], ['a']],
      ['EQUALS is case-sensitive', [['name', 'alpha']], []],
      ['name[EQUALS]', [['name[EQUALS]', 'beta']], ['b']],
      ['operator names are case-insensitive', [['name[equals]', 'beta']], ['b']],
      ['NOT_EQUALS', [['name[NOT_EQUALS]', 'Alpha']], except('a')],
      ['alias !', [['name[!]', 'Alpha']], except('a')],
      ['alias NOT', [['name[NOT]', 'Alpha']], except('a')],
      ['alias not (any case)', [['name[not]', 'Alpha']], except('a')],
      ['CONTAINS is case-sensitive', [['name[CONTAINS]', 'eta']], ['b', 'g', 'i']],
      ['CONTAINS with capitals', [['name[Contains]', 'Eta']], ['h']],
      ['NOT_CONTAINS', [['name[NOT_CONTAINS]', 'eta']], except('b', 'g', 'i')],
      ['STARTS_WITH', [['name[STARTS_WITH]', 'E']], ['f', 'h']],
      ['ENDS_WITH', [['name[ENDS_WITH]', 'a']], ['a', 'b', 'c', 'e', 'g', 'h', 'i']],
      ['GT compares by code point', [['name[GT]', 'a']], ['b', 'e', 'g', 'i', 'j']],
      ['GTE', [['name[GTE]', 'beta']], ['b', 'e', 'g', 'i', 'j']],
      ['LT', [['name[LT]', 'B']], ['a']],
      ['LTE', [['name[LTE]', 'Alpha']], ['a']],
      [
        'OR over a repeated parameter',
        [
          ['name', 'Alpha'],
          ['name', 'beta'],
        ],
        ['a', 'b'],
      ],
      [
        '= and [EQUALS] count as the same parameter',
        [
          ['name', 'Alpha'],
          ['name[EQUALS]', 'beta'],
        ],
        ['a', 'b'],
      ],
    ]);
  });

  describe('text matching is literal', () => {
    filterCases([
      ['% is not a wildcard', [['note[CONTAINS]', '%']], ['b', 'g']],
      ['_ is not a wildcard', [['note[CONTAINS]', '_']], ['c', 'h']],
      ['STARTS_WITH _', [['note[STARTS_WITH]', '_']], ['h']],
      ['ENDS_WITH %', [['note[ENDS_WITH]', '%']], ['g']],
      ['EQUALS %', [['note', '%']], ['g']],
      ['backslash', [['note[CONTAINS]', '\\']], ['d']],
      ['double quote', [['note[CONTAINS]', '"']], ['e']],
      ['single quote', [['note[CONTAINS]', "'"]], ['j']],
      ['CONTAINS is case-sensitive', [['note[CONTAINS]', 'plain']], ['a']],
      ['the empty text is contained in every present value', [['note[CONTAINS]', '']], except('f')],
      [
        'NOT_CONTAINS includes records without the field',
        [['note[NOT_CONTAINS]', '%']],
        except('b', 'g'),
      ],
      ['NOT_EQUALS includes records without the field', [['note[NOT_EQUALS]', '%']], except('g')],
      ['% after %', [['note[CONTAINS]', '0%']], ['b']],
      ['%_ matches nothing', [['note[CONTAINS]', '%_']], []],
    ]);
  });

  describe('INTEGER, DOUBLE and DECIMAL filters compare numerically', () => {
    filterCases([
      ['qty=10', [['qty', '10']], ['a', 'e', 'i']],
      ['qty=+10 (sign allowed)', [['qty', '+10']], ['a', 'e', 'i']],
      ['qty NOT_EQUALS', [['qty[NOT_EQUALS]', '10']], except('a', 'e', 'i')],
      ['qty GT', [['qty[GT]', '7']], ['a', 'e', 'h', 'i']],
      ['qty GTE', [['qty[GTE]', '7']], ['a', 'e', 'g', 'h', 'i']],
      ['qty LT (negative)', [['qty[LT]', '0']], ['c']],
      ['qty LTE', [['qty[LTE]', '0']], ['c', 'd']],
      ['qty GT -1', [['qty[GT]', '-1']], except('c', 'f')],
      [
        'qty OR',
        [
          ['qty', '2'],
          ['qty', '7'],
        ],
        ['b', 'g'],
      ],
      [
        'qty range (AND of two operators)',
        [
          ['qty[GTE]', '1'],
          ['qty[LT]', '10'],
        ],
        ['b', 'g', 'h', 'j'],
      ],
      ['score GT', [['score[GT]', '1.5']], ['c', 'e']],
      ['score GTE', [['score[GTE]', '1.5']], ['a', 'c', 'e']],
      ['score LT', [['score[LT]', '0']], ['b']],
      ['score LTE with exponent', [['score[LTE]', '1e2']], ['a', 'b', 'c', 'd', 'e']],
      ['score EQUALS -0', [['score', '-0']], ['d']],
      ['price "10.5" > "9.8" numerically', [['price[GT]', '9.8']], ['a', 'c', 'd', 'e']],
      ['price LT 10', [['price[LT]', '10']], ['b', 'g', 'h', 'i']],
      ['price EQUALS in another spelling', [['price', '10.500']], ['a', 'e']],
      ['price EQUALS 9.75', [['price', '9.75']], ['b', 'i']],
      ['price NOT_EQUALS', [['price[NOT]', '9.75']], except('b', 'i')],
      ['big exact decimal GT', [['price[GT]', BIG]], ['c']],
      ['big exact decimal GTE', [['price[GTE]', BIG]], ['c', 'd']],
      ['big exact decimal EQUALS', [['price', `${BIG}.0`]], ['d']],
      [
        'big exact decimal LT by 10^-21',
        [['price[LT]', `${BIG}.000000000000000000001`]],
        except('c', 'f', 'j'),
      ],
      ['price LT 0', [['price[LT]', '0']], ['g']],
      ['price LTE 0.001', [['price[LTE]', '0.001']], ['g', 'h']],
      ['price GT -1.5', [['price[GT]', '-1.5']], except('f', 'j')],
      ['limit[EQUALS] filters the field named limit', [['limit[EQUALS]', '7']], ['a']],
      ['limit[GT] filters the field named limit', [['limit[GT]', '1']], ['a', 'b']],
    ]);
  });

  describe('BOOL, DATE and DATE_TIME filters', () => {
    filterCases([
      ['active=true', [['active', 'true']], ['a', 'c', 'h']],
      ['active=false', [['active', 'false']], ['b', 'd']],
      ['active NOT_EQUALS true', [['active[NOT_EQUALS]', 'true']], except('a', 'c', 'h')],
      [
        'active OR',
        [
          ['active', 'true'],
          ['active', 'false'],
        ],
        ['a', 'b', 'c', 'd', 'h'],
      ],
      ['day EQUALS a leap day', [['day', '2024-02-29']], ['b']],
      ['day GT', [['day[GT]', '2024-01-15']], ['b', 'd', 'g']],
      ['day LT', [['day[LT]', '2024-01-01']], ['c']],
      [
        'day range',
        [
          ['day[GTE]', '2024-02-29'],
          ['day[LTE]', '2024-03-01'],
        ],
        ['b', 'd'],
      ],
      ['day NOT', [['day[NOT]', '2024-02-29']], except('b')],
      ['at EQUALS with an offset', [['at', '2024-03-01T01:30:00+02:00']], ['a', 'b']],
      ['at EQUALS in UTC', [['at', '2024-02-29T23:30:00Z']], ['a', 'b']],
      ['at EQUALS with milliseconds', [['at', '2024-02-29T23:30:00.000Z']], ['a', 'b']],
      ['at GT by one millisecond', [['at[GT]', '2024-02-29T23:29:59.999Z']], ['a', 'b', 'd']],
      ['at GTE', [['at[GTE]', '2024-02-29T23:29:59.999Z']], ['a', 'b', 'c', 'd']],
      ['at LT with an offset', [['at[LT]', '2024-03-01T01:30:00+02:00']], ['c', 'h']],
      [
        'at LTE with a negative offset',
        [['at[LTE]', '2024-03-01T00:00:00-05:00']],
        ['a', 'b', 'c', 'd', 'h'],
      ],
      ['at GT with a positive offset', [['at[GT]', '2024-03-01T05:00:00+05:00']], ['d']],
      ['at NOT', [['at[NOT]', '2024-02-29T23:30:00Z']], except('a', 'b')],
    ]);
  });

  describe('ENUM and SELECT filters', () => {
    filterCases([
      ['ENUM value matched case-insensitively', [['status', 'new']], ['a', 'd']],
      ['ENUM canonical spelling Open', [['status', 'OPEN']], ['b', 'e']],
      ['ENUM canonical spelling closed', [['status', 'CLOSED']], ['c', 'i']],
      [
        'ENUM OR',
        [
          ['status', 'new'],
          ['status', 'Closed'],
        ],
        ['a', 'c', 'd', 'i'],
      ],
      ['ENUM NOT', [['status[NOT]', 'new']], except('a', 'd')],
      [
        'ENUM NOT repeated: neither value',
        [
          ['status[NOT]', 'new'],
          ['status[!]', 'open'],
        ],
        except('a', 'b', 'd', 'e'),
      ],
      ['ENUM CONTAINS on the canonical text', [['status[CONTAINS]', 'pe']], ['b', 'e']],
      ['ENUM CONTAINS is case-sensitive', [['status[CONTAINS]', 'PE']], []],
      ['ENUM STARTS_WITH', [['status[STARTS_WITH]', 'N']], ['a', 'd']],
      ['ENUM GT compares the text', [['status[GT]', 'Open']], ['c', 'i']],
      ['SELECT EQUALS', [['size', 'M']], ['b', 'd']],
      ['SELECT NOT', [['size[NOT]', 'M']], except('b', 'd')],
      [
        'SELECT OR',
        [
          ['size', 'S'],
          ['size', 'L'],
        ],
        ['a', 'c', 'e'],
      ],
      ['SELECT ENDS_WITH', [['size[ENDS_WITH]', 'L']], ['c']],
    ]);
  });

  describe('ENTITY_REF filters', () => {
    filterCases([
      ['integer ref EQUALS', [['owner', '2']], ['b', 'd']],
      ['integer ref GT compares numbers (10 > 2)', [['owner[GT]', '2']], ['c']],
      ['integer ref LT', [['owner[LT]', '10']], ['a', 'b', 'd', 'i']],
      ['integer ref NOT', [['owner[NOT]', '1']], except('a', 'i')],
      [
        'integer ref OR',
        [
          ['owner', '1'],
          ['owner', '10'],
        ],
        ['a', 'c', 'i'],
      ],
      ['text ref EQUALS', [['group', 'g1']], ['a', 'd']],
      ['text ref GT compares text (g10 > g1)', [['group[GT]', 'g1']], ['b', 'c', 'e']],
      ['text ref GT g10', [['group[GT]', 'g10']], ['b', 'e']],
      ['text ref STARTS_WITH', [['group[STARTS_WITH]', 'g1']], ['a', 'c', 'd']],
      ['text ref NOT', [['group[NOT]', 'g1']], except('a', 'd')],
    ]);
  });

  describe('dotted paths into OBJECT fields', () => {
    filterCases([
      ['address.city', [['address.city', 'Pisa']], ['a']],
      ['address.city STARTS_WITH', [['address.city[STARTS_WITH]', 'P']], ['a', 'b']],
      [
        'address.city NOT includes records without address',
        [['address.city[NOT]', 'Pisa']],
        except('a'),
      ],
      [
        'address.city OR',
        [
          ['address.city', 'Pisa'],
          ['address.city', 'pisa'],
        ],
        ['a', 'c'],
      ],
      ['address.zip GT', [['address.zip[GT]', '1000']], ['a', 'b']],
      ['address.fee DECIMAL EQUALS', [['address.fee', '2.50']], ['a', 'e']],
      ['address.fee DECIMAL GT numerically', [['address.fee[GT]', '9']], ['b']],
      ['address.since DATE LT', [['address.since[LT]', '2021-01-01']], ['a']],
      ['address.verified true', [['address.verified', 'true']], ['a']],
      ['address.verified false', [['address.verified', 'false']], ['b']],
      [
        'address.seen DATE_TIME with an offset',
        [['address.seen', '2024-01-01T10:00:00+01:00']],
        ['a', 'b'],
      ],
      ['address.seen GT', [['address.seen[GT]', '2024-01-01T08:59:59.999Z']], ['a', 'b']],
      ['address.seen LT', [['address.seen[LT]', '2024-01-01T04:00:00-05:00']], []],
      ['address.seen LTE', [['address.seen[LTE]', '2024-01-01T04:00:00-05:00']], ['a', 'b']],
      ['nested object ENUM (case-insensitive)', [['address.geo.country', 'it']], ['a']],
      ['nested object DOUBLE', [['address.geo.lat[GT]', '45']], ['b']],
      [
        'nested object OR',
        [
          ['address.geo.country', 'IT'],
          ['address.geo.country', 'de'],
        ],
        ['a', 'c'],
      ],
      ['array inside an object', [['address.labels[CONTAINS]', 'center']], ['a', 'c']],
      [
        'array inside an object NOT_CONTAINS',
        [['address.labels[NOT_CONTAINS]', 'center']],
        except('a', 'c'),
      ],
    ]);
  });

  describe('ARRAY membership', () => {
    filterCases([
      ['tags CONTAINS', [['tags[CONTAINS]', 'red']], ['a', 'e']],
      ['membership is case-sensitive', [['tags[contains]', 'Red']], ['d']],
      ['membership is not a substring test', [['tags[CONTAINS]', 're']], []],
      ['membership of %', [['tags[CONTAINS]', '%']], ['g']],
      [
        'tags CONTAINS OR',
        [
          ['tags[CONTAINS]', 'red'],
          ['tags[CONTAINS]', 'x'],
        ],
        ['a', 'd', 'e'],
      ],
      [
        'tags NOT_CONTAINS (absent and empty arrays included)',
        [['tags[NOT_CONTAINS]', 'red']],
        except('a', 'e'),
      ],
      [
        'tags NOT_CONTAINS repeated: none of the values',
        [
          ['tags[NOT_CONTAINS]', 'red'],
          ['tags[NOT_CONTAINS]', 'blue'],
        ],
        except('a', 'b', 'e'),
      ],
      ['INTEGER array CONTAINS', [['ratings[CONTAINS]', '3']], ['a', 'd']],
      ['INTEGER array value converted (03 = 3)', [['ratings[CONTAINS]', '03']], ['a', 'd']],
      ['INTEGER array NOT_CONTAINS', [['ratings[NOT_CONTAINS]', '3']], except('a', 'd')],
      ['DECIMAL array, value converted', [['amounts[CONTAINS]', '2.5']], ['a']],
      ['DECIMAL array compares numbers, not text', [['amounts[CONTAINS]', '10.00']], ['a', 'b']],
      ['DECIMAL array negative', [['amounts[CONTAINS]', '-0.5']], ['d']],
      ['DECIMAL array NOT_CONTAINS', [['amounts[NOT_CONTAINS]', '10']], except('a', 'b')],
      ['DATE array', [['days[CONTAINS]', '2024-02-29']], ['a', 'b']],
      [
        'DATE array OR',
        [
          ['days[CONTAINS]', '2024-01-01'],
          ['days[CONTAINS]', '1999-01-01'],
        ],
        ['b'],
      ],
      ['integer ENTITY_REF array', [['owners[CONTAINS]', '10']], ['a', 'c']],
      ['integer ENTITY_REF array NOT_CONTAINS', [['owners[NOT_CONTAINS]', '10']], except('a', 'c')],
      ['ENUM array, value matched case-insensitively', [['states[CONTAINS]', 'open']], ['b']],
      ['ENUM array canonical spelling', [['states[CONTAINS]', 'NEW']], ['a']],
      [
        'CONTAINS and NOT_CONTAINS combine with AND',
        [
          ['tags[CONTAINS]', 'blue'],
          ['tags[NOT_CONTAINS]', 'red'],
        ],
        ['b'],
      ],
    ]);
  });

  describe('AND across parameters', () => {
    filterCases([
      [
        'ENUM and INTEGER',
        [
          ['status', 'NEW'],
          ['qty', '10'],
        ],
        ['a'],
      ],
      [
        'array and DECIMAL',
        [
          ['tags[CONTAINS]', 'red'],
          ['price[GT]', '10'],
        ],
        ['a', 'e'],
      ],
      [
        'BOOL and STARTS_WITH',
        [
          ['active', 'true'],
          ['name[STARTS_WITH]', 'G'],
        ],
        ['c'],
      ],
      [
        'OR inside, AND outside',
        [
          ['status', 'new'],
          ['status', 'open'],
          ['qty[GTE]', '10'],
        ],
        ['a', 'e'],
      ],
      [
        'no match',
        [
          ['status', 'new'],
          ['status', 'open'],
          ['qty[LT]', '-100'],
        ],
        [],
      ],
      [
        'ordering and paging parameters do not filter',
        [
          ['orderBy', 'name'],
          ['limit', '100'],
          ['name[NOT]', 'x'],
        ],
        ALL,
      ],
    ]);
  });

  describe('sorting', () => {
    const cases: readonly (readonly [string, readonly string[]])[] = [
      // Absent values first ascending; ties broken by the key (direction of the last term).
      ['price', ['f', 'j', 'g', 'h', 'b', 'i', 'a', 'e', 'd', 'c']],
      ['-price', ['c', 'd', 'e', 'a', 'i', 'b', 'h', 'g', 'j', 'f']],
      ['-price,name', ['c', 'd', 'a', 'e', 'b', 'i', 'h', 'g', 'f', 'j']],
      ['+qty', ['f', 'c', 'd', 'j', 'b', 'g', 'h', 'a', 'e', 'i']],
      ['qty', ['f', 'c', 'd', 'j', 'b', 'g', 'h', 'a', 'e', 'i']],
      ['-qty,-name', ['i', 'e', 'a', 'h', 'g', 'b', 'j', 'd', 'c', 'f']],
      ['status,code', ['f', 'g', 'h', 'j', 'a', 'd', 'b', 'e', 'c', 'i']],
      ['at', ['e', 'f', 'g', 'i', 'j', 'h', 'c', 'a', 'b', 'd']],
      ['active,-day', ['g', 'j', 'i', 'f', 'e', 'd', 'b', 'a', 'c', 'h']],
      ['owner', ['e', 'f', 'g', 'h', 'j', 'a', 'i', 'b', 'd', 'c']],
      ['group', ['f', 'g', 'h', 'i', 'j', 'a', 'd', 'c', 'b', 'e']],
      ['name', ['a', 'f', 'h', 'c', 'd', 'b', 'e', 'i', 'j', 'g']],
      ['-code', ['j', 'i', 'h', 'g', 'f', 'e', 'd', 'c', 'b', 'a']],
      ['score,day', ['f', 'h', 'i', 'j', 'g', 'b', 'd', 'a', 'e', 'c']],
      ['-limit', ['a', 'b', 'j', 'i', 'h', 'g', 'f', 'e', 'd', 'c']],
      [' -price , name ', ['c', 'd', 'a', 'e', 'b', 'i', 'h', 'g', 'f', 'j']],
    ];

    it.each(cases)('orderBy=%s', async (orderBy, expected) => {
      expect(await listCodes(qs([['orderBy', orderBy]]))).toEqual(expected);
    });

    it('accepts an unencoded + (a space in a URL) before the field name', async () => {
      expect(await listCodes('orderBy=+qty')).toEqual(cases[3]![1]);
    });

    it('sorts the filtered records', async () => {
      expect(
        await listCodes(
          qs([
            ['orderBy', '-price,name'],
            ['qty[GTE]', '2'],
          ]),
        ),
      ).toEqual(['a', 'e', 'b', 'i', 'h', 'g']);
    });

    it.each(cases)(
      'offset and cursor pages of orderBy=%s concatenate to the full order',
      async (orderBy, expected) => {
        for (const limit of [1, 3, 4]) {
          const offsetPages: string[] = [];
          for (let start = 0; start < expected.length; start += limit) {
            offsetPages.push(
              ...(await listCodes(
                qs([
                  ['orderBy', orderBy],
                  ['start', String(start)],
                  ['limit', String(limit)],
                ]),
              )),
            );
          }
          expect(offsetPages, `offset, limit ${limit}`).toEqual(expected);

          const cursorPages: string[] = [];
          let query = qs([
            ['orderBy', orderBy],
            ['limit', String(limit)],
          ]);
          for (let guard = 0; guard < 20; guard++) {
            const response = await service.request('GET', `/data/ITEM?${query}`);
            expect(response.status, response.text).toBe(200);
            cursorPages.push(...response.body.data.map((r: { code: string }) => r.code));
            const next = response.body.meta.next as string | undefined;
            if (next === undefined) break;
            query = qs([
              ['orderBy', orderBy],
              ['cursor', next],
            ]);
          }
          expect(cursorPages, `cursor, limit ${limit}`).toEqual(expected);
        }
      },
    );
  });

  describe('offset paging', () => {
    it('returns the window and says where it is', async () => {
      const response = await service.request('GET', '/data/ITEM?orderBy=price&start=2&limit=3');
      expect(response.status).toBe(200);
      expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(['g', 'h', 'b']);
      expect(response.body.meta).toEqual({ start: 2, limit: 3, next: expect.any(String) });
    });

    it('has no next on the last page, also when the page is exactly full', async () => {
      const last = await service.request('GET', '/data/ITEM?orderBy=price&start=9&limit=5');
      expect(last.body.data.map((r: { code: string }) => r.code)).toEqual(['c']);
      expect(last.body.meta).toEqual({ start: 9, limit: 5 });
      const full = await service.request('GET', '/data/ITEM?limit=10');
      expect(full.body.data).toHaveLength(10);
      expect(full.body.meta).toEqual({ start: 0, limit: 10 });
    });

    it('returns an empty page beyond the end', async () => {
      const response = await service.request('GET', '/data/ITEM?start=100&limit=5');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([]);
      expect(response.body.meta).toEqual({ start: 100, limit: 5 });
      const far = await service.request(
        'GET',
        '/data/ITEM?orderBy=-price&start=999999999999999&limit=1000',
      );
      expect(far.status).toBe(200);
      expect(far.body.data).toEqual([]);
      // A page larger than the maximum page size is refused, not served.
      const huge = await service.request('GET', '/data/ITEM?limit=999999999999999');
      expect(huge.status).toBe(400);
    });

    it('skips records with start alone and reports it', async () => {
      const response = await service.request('GET', '/data/ITEM?start=7');
      expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(['h', 'i', 'j']);
      expect(response.body.meta).toEqual({ start: 7 });
    });

    it('pages filtered records', async () => {
      const response = await service.request(
        'GET',
        '/data/ITEM?qty[GTE]=2&orderBy=-qty&start=1&limit=2',
      );
      // qty 10 ties (a, e, i) are broken by the key, descending like the last term.
      expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(['e', 'a']);
      expect(response.body.meta).toMatchObject({ start: 1, limit: 2 });
    });

    it('treats limit as the page size even though ITEM has a field named limit', async () => {
      const response = await service.request('GET', '/data/ITEM?limit=1&limit[EQUALS]=3');
      expect(response.body.data.map((r: { code: string }) => r.code)).toEqual(['b']);
      expect(response.body.meta).toEqual({ start: 0, limit: 1 });
    });
  });

  describe('recordCounts', () => {
    it('counts all records, and the records matching the filters', async () => {
      expect(await countOf('')).toBe(10);
      expect(await countOf('name[CONTAINS]=eta')).toBe(3);
      expect(await countOf('status=new&status=open&qty[GTE]=10')).toBe(2);
      const lower = await service.request('GET', '/entity/item/recordCounts?tags[CONTAINS]=red');
      expect(lower.body).toEqual({ status: 'success', data: { count: 2 } });
    });

    it('checks but ignores orderBy, start, limit and cursor, so a list query string can be reused', async () => {
      expect(await countOf('orderBy=-price&start=5&limit=1&active=true')).toBe(3);
      const page = await service.request('GET', '/data/ITEM?active=true&limit=1');
      const next = encodeURIComponent(page.body.meta.next as string);
      expect(await countOf(`active=true&cursor=${next}`)).toBe(3);
      await expect400(`/entity/ITEM/recordCounts?active=false&cursor=${next}`, 'cursor');
    });

    it('rejects the filters the list rejects', async () => {
      await expect400('/entity/ITEM/recordCounts?nope=1', 'nope');
      await expect400('/entity/ITEM/recordCounts?qty[CONTAINS]=1', 'qty[CONTAINS]');
      await expect400('/entity/ITEM/recordCounts?qty=ten', 'qty');
    });

    it('counts other entities', async () => {
      const response = await service.request('GET', '/entity/OWNER/recordCounts?id[GT]=1');
      expect(response.body.data).toEqual({ count: 2 });
      const groups = await service.request(
        'GET',
        '/entity/GROUP/recordCounts?name[STARTS_WITH]=g1',
      );
      expect(groups.body.data).toEqual({ count: 2 });
    });
  });

  describe('bad queries are 400s naming the parameter', () => {
    const cases: readonly (readonly [string, string])[] = [
      // Operator that does not fit the type.
      ['qty[CONTAINS]=1', 'qty[CONTAINS]'],
      ['price[STARTS_WITH]=1', 'price[STARTS_WITH]'],
      ['day[ENDS_WITH]=01', 'day[ENDS_WITH]'],
      ['at[CONTAINS]=2024', 'at[CONTAINS]'],
      ['active[GT]=false', 'active[GT]'],
      ['active[CONTAINS]=t', 'active[CONTAINS]'],
      ['owner[CONTAINS]=1', 'owner[CONTAINS]'],
      ['tags=red', 'tags'],
      ['tags[EQUALS]=red', 'tags[EQUALS]'],
      ['tags[GT]=a', 'tags[GT]'],
      ['ratings[STARTS_WITH]=1', 'ratings[STARTS_WITH]'],
      // Fields that cannot be filtered.
      ['address=x', 'address'],
      ['extra=1', 'extra'],
      // Unknown fields and paths.
      ['nope=1', 'nope'],
      ['Name=Alpha', 'Name'],
      ['address.nope=1', 'address.nope'],
      ['address.city.x=1', 'address.city.x'],
      ['name.first=1', 'name.first'],
      ['tags.x=1', 'tags.x'],
      ['__proto__=1', '__proto__'],
      ['constructor=1', 'constructor'],
      ['toString=1', 'toString'],
      // Unknown operators.
      ['name[LIKE]=x', 'name[LIKE]'],
      ['name[]=x', 'name[]'],
      ['name[EQ]=x', 'name[EQ]'],
      ['name[constructor]=x', 'name[constructor]'],
      ['name[__proto__]=x', 'name[__proto__]'],
      ['name[EQUALS][GT]=x', 'name[EQUALS][GT]'],
      // Values that do not convert.
      ['qty=ten', 'qty'],
      ['qty=1.5', 'qty'],
      ['qty=', 'qty'],
      ['qty[GT]=9007199254740993', 'qty[GT]'],
      ['score=abc', 'score'],
      ['score=Infinity', 'score'],
      ['price=1,5', 'price'],
      ['price[GT]=ten', 'price[GT]'],
      ['active=yes', 'active'],
      ['active=1', 'active'],
      ['day=2024-02-30', 'day'],
      ['day=2024-1-5', 'day'],
      ['at=2024-03-01', 'at'],
      ['at[GT]=tomorrow', 'at[GT]'],
      ['status=unknown', 'status'],
      ['size=m', 'size'],
      ['owner=x', 'owner'],
      ['owner=1.5', 'owner'],
      ['ratings[CONTAINS]=x', 'ratings[CONTAINS]'],
      ['amounts[CONTAINS]=x', 'amounts[CONTAINS]'],
      ['amounts[GT]=1', 'amounts[GT]'],
      ['days[CONTAINS]=2024-02-30', 'days[CONTAINS]'],
      ['owners[CONTAINS]=x', 'owners[CONTAINS]'],
      ['states[CONTAINS]=x', 'states[CONTAINS]'],
      ['address.seen=2024-01-01', 'address.seen'],
      ['address.zip=abc', 'address.zip'],
      ['address.geo.country=ES', 'address.geo.country'],
      // start and limit.
      ['start=-1', 'start'],
      ['start=1.5', 'start'],
      ['start=abc', 'start'],
      ['start=', 'start'],
      ['start=%2B1', 'start'],
      ['start=1&start=2', 'start'],
      ['limit=0', 'limit'],
      ['limit=-5', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1e3', 'limit'],
      ['limit=', 'limit'],
      ['limit=10&limit=10', 'limit'],
      ['limit=1234567890123456', 'limit'],
      // orderBy.
      ['orderBy=nope', 'orderBy'],
      ['orderBy=tags', 'orderBy'],
      ['orderBy=address', 'orderBy'],
      ['orderBy=address.city', 'orderBy'],
      ['orderBy=extra', 'orderBy'],
      ['orderBy=name,name', 'orderBy'],
      ['orderBy=name,-name', 'orderBy'],
      ['orderBy=', 'orderBy'],
      ['orderBy=-', 'orderBy'],
      ['orderBy=name,', 'orderBy'],
      ['orderBy=name&orderBy=qty', 'orderBy'],
      ['orderBy=Name', 'orderBy'],
      // cursor.
      ['cursor=abc', 'cursor'],
      ['cursor=', 'cursor'],
    ];

    it.each(cases)('%s', async (query, mention) => {
      await expect400(`/data/ITEM?${query}`, mention);
    });

    it.each(cases)('recordCounts?%s', async (query, mention) => {
      await expect400(`/entity/ITEM/recordCounts?${query}`, mention);
    });

    it('lists the operators that do apply', async () => {
      const reason = await expect400('/data/ITEM?qty[CONTAINS]=1', 'qty');
      expect(reason).toContain('GT');
      expect(reason).not.toContain('STARTS_WITH');
      const integerRef = await expect400('/data/ITEM?owner[STARTS_WITH]=1', 'owner');
      expect(integerRef).toContain('LTE');
    });

    it('lists the ENUM values when a value is not one of them', async () => {
      const reason = await expect400('/data/ITEM?status=unknown', 'status');
      expect(reason).toContain('NEW, Open, closed');
    });

    it('caps the number of filter values', async () => {
      const many = Array.from({ length: 201 }, (_, i) => `qty=${i}`).join('&');
      await expect400(`/data/ITEM?${many}`, 'filter');
      await expect400(`/entity/ITEM/recordCounts?${many}`, 'filter');
      const huge = Array.from({ length: 1100 }, (_, i) => `qty=${i}`).join('&');
      await expect400(`/data/ITEM?${huge}`, 'filter');
    });

    it('accepts as many filter values as the cap allows, of every shape', async () => {
      const values = [
        ...Array.from({ length: 50 }, (_, i) => `qty=${i + 100}`),
        ...Array.from({ length: 50 }, (_, i) => `name[NOT]=n${i}`),
        ...Array.from({ length: 50 }, (_, i) => `tags[NOT_CONTAINS]=t${i}`),
        ...Array.from({ length: 50 }, (_, i) => `address.city[NOT_CONTAINS]=c${i}`),
      ];
      expect(await listCodes(values.join('&'))).toEqual([]);
      const matching = [...values.slice(1, 200), 'qty=10'].join('&');
      expect((await listCodes(matching)).sort()).toEqual(['a', 'e', 'i']);
    });
  });

  describe('injection attempts are 400s or exact matches', () => {
    const attempts: readonly (readonly [
      string,
      readonly (readonly [string, string])[],
      readonly string[] | 400,
    ])[] = [
      [
        'quote in a value matches only the record with that exact name',
        [['name', "x' OR '1'='1"]],
        ['j'],
      ],
      ['comment in a value', [['name', "x' OR 1=1 --"]], []],
      ['statement in a value', [['name', "'; DROP TABLE item; --"]], []],
      ['% as a whole CONTAINS value', [['name[CONTAINS]', '%']], []],
      ['_ as a whole CONTAINS value', [['name[CONTAINS]', '_']], []],
      ['quotes in STARTS_WITH', [['name[STARTS_WITH]', "O'"]], ['d']],
      ['quotes in ENDS_WITH', [['status[ENDS_WITH]', "%' OR '1'='1"]], []],
      ['NUL character', [['name', '\u0000']], 400],
      ['NUL character in a text match', [['name[CONTAINS]', 'a\u0000']], 400],
      ['JSON path characters in a value', [['address.city', '$.city']], []],
      ['quote in a field name', [['na"me', '1']], 400],
      ['SQL in a field name', [['name" = name OR "1', '1']], 400],
      ['closing bracket in a field name', [['name) OR (1=1', 'x']], 400],
      ['SQL in a dotted path', [["address.city') OR 1=1--", 'x']], 400],
      ['quote in a dotted path', [['address.ci"ty', 'x']], 400],
      ['JSON path syntax in a dotted path', [['address[0]', 'x']], 400],
      ['SQL in an operator', [['name[EQUALS) OR (1=1]', 'x']], 400],
      ['SQL in a number', [['qty', '1 OR 1=1']], 400],
      ['SQL in a date', [['day', "2024-01-01' OR '1'='1"]], 400],
      ['orderBy with a statement', [['orderBy', 'name;DROP TABLE item']], 400],
      ['orderBy with a subquery', [['orderBy', '(select 1)']], 400],
      ['orderBy with a direction keyword', [['orderBy', 'name desc']], 400],
      ['orderBy with a collation', [['orderBy', 'name COLLATE NOCASE']], 400],
      ['orderBy with a quoted identifier', [['orderBy', '"name"']], 400],
      ['orderBy with a number', [['orderBy', '1']], 400],
      ['limit with SQL', [['limit', '1; DROP TABLE item']], 400],
      ['start with SQL', [['start', '0 OR 1=1']], 400],
      ['cursor with SQL', [['cursor', "' OR 1=1 --"]], 400],
    ];

    it.each(attempts)('%s', async (_title, pairs, expected) => {
      const query = qs(pairs);
      for (const path of [`/data/ITEM?${query}`, `/entity/ITEM/recordCounts?${query}`]) {
        const response = await service.request('GET', path);
        if (expected === 400) {
          expect(response.status, `${path}: ${response.text}`).toBe(400);
          expect(response.body.status).toBe('error');
        } else if (path.startsWith('/data/')) {
          expect(response.status, `${path}: ${response.text}`).toBe(200);
          expect(response.body.data.map((r: { code: string }) => r.code).sort()).toEqual(expected);
        } else {
          expect(response.status, `${path}: ${response.text}`).toBe(200);
          expect(response.body.data.count).toBe(expected.length);
        }
      }
    });

    it('leaves the data intact', async () => {
      expect(await countOf('')).toBe(10);
      expect(await listCodes('')).toEqual(ALL);
    });
  });

  describe('other entities', () => {
    it('filters and sorts an INTEGER-keyed entity numerically', async () => {
      const response = await service.request('GET', '/data/OWNER?orderBy=-id&id[GTE]=2');
      expect(response.body.data).toEqual([
        { id: 10, name: 'ten' },
        { id: 2, name: 'two' },
      ]);
      const byKey = await service.request('GET', '/data/owner');
      expect(byKey.body.data.map((r: { id: number }) => r.id)).toEqual([1, 2, 10]);
    });

    it('quotes a table named like an SQL keyword (GROUP)', async () => {
      const response = await service.request('GET', '/data/GROUP?orderBy=-name&name[NOT]=g2');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([{ name: 'g10' }, { name: 'g1' }]);
    });

    it('pages an entity with a composite key', async () => {
      const insert = await service.request('POST', '/data/LINE', {
        body: {
          data: [
            { order: 'o2', line: 1, amount: 5 },
            { order: 'o1', line: 10, amount: 5 },
            { order: 'o1', line: 2 },
            { order: 'o1', line: 1, amount: 7 },
          ],
        },
      });
      expect(insert.status, insert.text).toBe(200);
      const byKey = await service.request('GET', '/data/LINE');
      expect(
        byKey.body.data.map((r: { order: string; line: number }) => `${r.order}~${r.line}`),
      ).toEqual(['o1~1', 'o1~2', 'o1~10', 'o2~1']);
      const page1 = await service.request('GET', '/data/LINE?orderBy=-amount&limit=2');
      expect(
        page1.body.data.map((r: { order: string; line: number }) => `${r.order}~${r.line}`),
      ).toEqual(['o1~1', 'o2~1']);
      const page2 = await service.request(
        'GET',
        `/data/LINE?orderBy=-amount&cursor=${encodeURIComponent(page1.body.meta.next)}`,
      );
      expect(
        page2.body.data.map((r: { order: string; line: number }) => `${r.order}~${r.line}`),
      ).toEqual(['o1~10', 'o1~2']);
      expect(page2.body.meta).toEqual({ limit: 2 });
      const deleted = await service.request('DELETE', '/data/LINE/o1~1');
      expect(deleted.status).toBe(200);
    });
  });

  describe('lists read from a composite index (ITEM declares [status, -price] and [note, qty])', () => {
    /** Codes of every page of `query` walked by cursor, one record per page. */
    const walk = async (query: string): Promise<string[]> => {
      const codes: string[] = [];
      let path = `/data/ITEM?${query}&limit=1`;
      for (;;) {
        const page = await service.request('GET', path);
        expect(page.status, page.text).toBe(200);
        codes.push(...page.body.data.map((r: { code: string }) => r.code));
        const next = page.body.meta.next as string | undefined;
        if (next === undefined) return codes;
        path = `/data/ITEM?${query}&cursor=${encodeURIComponent(next)}`;
      }
    };

    it.each([
      'status=OPEN&orderBy=-price',
      'status=OPEN&orderBy=price',
      'note=plain%20text&orderBy=qty',
      'note=plain%20text&orderBy=-qty',
    ])('%s: cursor pages give the whole list, in order', async (query) => {
      const all = await service.request('GET', `/data/ITEM?${query}`);
      expect(all.status, all.text).toBe(200);
      const codes = all.body.data.map((r: { code: string }) => r.code);
      expect(await walk(query)).toEqual(codes);
    });

    it('a text field of a composite index holds at most 1 024 bytes, like an indexed one', async () => {
      const response = await service.request('POST', '/data/ITEM', {
        body: { data: { code: 'long-note', name: 'Long', note: 'é'.repeat(600) } },
      });
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.reason).toBe(
        'Field note of Entity ITEM is 1200 bytes long; a key or indexed field holds at most 1024 bytes',
      );
    });
  });
});
