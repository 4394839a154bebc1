import { describe, expect, it } from 'vitest';

import {
  DECIMAL_MAX_DIGITS,
  arrayOf,
  conversionFailed,
  dictionaryOf,
  enumConverter,
  missing,
  previewValue,
  refConverter,
  rejectUnknownFields,
  selectConverter,
  toAny,
  toB64Image,
  toBoolean,
  toDate,
  toDateTime,
  toDecimal,
  toDouble,
  toGeohashLocation,
  toInteger,
  toObjectBody,
  toText,
  type GeohashLocation,
} from '../../runtime/src/convert.js';
import type { Converter } from '../../runtime/src/definition.js';
import type { Issue, IssuePath } from '../../runtime/src/issues.js';

type Valid = [string, { given: unknown; want: unknown }];
type Invalid = [string, { given: unknown }];

function run(
  convert: Converter<unknown>,
  given: unknown,
  parent: IssuePath = [],
  key: string | number = 'f',
): { out: unknown; issues: Issue[] } {
  const issues: Issue[] = [];
  const out = convert(given, parent, key, issues);
  return { out, issues };
}

/** Checks a converter's valid and invalid tables: canonical output / one conversion_failed issue. */
function table(
  typeName: string,
  convert: Converter<unknown>,
  valid: Valid[],
  invalid: Invalid[],
): void {
  it.each(valid)('accepts %s', (_name, { given, want }) => {
    const { out, issues } = run(convert, given);
    expect(issues).toEqual([]);
    expect(out).toStrictEqual(want);
  });
  it.each(invalid)('rejects %s', (_name, { given }) => {
    const { out, issues } = run(convert, given, ['items', 2], 'f');
    expect(out).toBeUndefined();
    expect(issues).toEqual([
      {
        path: ['items', 2, 'f'],
        code: 'conversion_failed',
        message: `Unable to convert field items[2].f - ${typeName} - for value ${previewValue(given)}`,
      },
    ]);
  });
}

/** Exact messages, written out literally. */
function messages(
  convert: Converter<unknown>,
  cases: [string, { given: unknown; want: string }][],
) {
  it.each(cases)('message for %s', (_name, { given, want }) => {
    const { issues } = run(convert, given, ['location'], 'lat');
    expect(issues.map((i) => i.message)).toEqual([want]);
  });
}

describe('previewValue', () => {
  const emojiCut = `${'a'.repeat(78)}\u{1F600}${'b'.repeat(10)}`;
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const cases: Valid[] = [
    ['a string', { given: 'abc', want: '"abc"' }],
    ['a number', { given: 42.5, want: '42.5' }],
    ['null', { given: null, want: 'null' }],
    ['an object', { given: { a: [1, 'x'] }, want: '{"a":[1,"x"]}' }],
    ['undefined', { given: undefined, want: 'undefined' }],
    ['NaN (JSON null)', { given: Number.NaN, want: 'null' }],
    ['a bigint', { given: 10n, want: '10' }],
    ['a symbol', { given: Symbol('s'), want: 'Symbol(s)' }],
    ['a circular object', { given: circular, want: '[object Object]' }],
    ['exactly 80 characters', { given: 'x'.repeat(78), want: `"${'x'.repeat(78)}"` }],
    ['81 characters', { given: 'x'.repeat(79), want: `"${'x'.repeat(79)}…` }],
    ['a long string', { given: 'y'.repeat(100_000), want: `"${'y'.repeat(79)}…` }],
    ['a long string with escapes', { given: '\n'.repeat(300), want: `"${'\\n'.repeat(39)}\\…` }],
    ['a long array', { given: Array(100).fill(1), want: `[${'1,'.repeat(39)}1…` }],
    ['no split surrogate pair', { given: emojiCut, want: `"${'a'.repeat(78)}…` }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(previewValue(given)).toBe(want);
  });
});

describe('toText (STRING)', () => {
  table(
    'STRING',
    toText,
    [
      ['a string', { given: 'abc', want: 'abc' }],
      ['the empty string', { given: '', want: '' }],
      ['unicode', { given: 'žluťoučký 😀', want: 'žluťoučký 😀' }],
    ],
    [
      ['a number', { given: 1 }],
      ['a boolean', { given: true }],
      ['null', { given: null }],
      ['an object', { given: { a: 1 } }],
      ['an array', { given: ['a'] }],
      ['text with U+0000, which PostgreSQL cannot store', { given: 'a\u0000b' }],
    ],
  );
  messages(toText, [
    [
      'a number',
      { given: 12, want: 'Unable to convert field location.lat - STRING - for value 12' },
    ],
  ]);
});

describe('toInteger (INTEGER)', () => {
  table(
    'INTEGER',
    toInteger,
    [
      ['a number', { given: 42, want: 42 }],
      ['a negative number', { given: -7, want: -7 }],
      ['a number written 42.0 in JSON', { given: JSON.parse('42.0'), want: 42 }],
      ['a number written 1e2 in JSON', { given: JSON.parse('1e2'), want: 100 }],
      ['-0', { given: -0, want: 0 }],
      ['max safe', { given: 9007199254740991, want: 9007199254740991 }],
      ['min safe', { given: -9007199254740991, want: -9007199254740991 }],
      ['a string', { given: '42', want: 42 }],
      ['a string with +', { given: '+42', want: 42 }],
      ['a negative string', { given: '-42', want: -42 }],
      ['a string -0', { given: '-0', want: 0 }],
      ['leading zeros', { given: '007', want: 7 }],
      ['max safe string', { given: '9007199254740991', want: 9007199254740991 }],
    ],
    [
      ['a fraction', { given: 42.9 }],
      ['2^53', { given: 9007199254740992 }],
      ['2^53 as string', { given: '9007199254740992' }],
      ['a huge string', { given: '1'.repeat(400) }],
      ['NaN', { given: Number.NaN }],
      ['Infinity', { given: Number.POSITIVE_INFINITY }],
      ['"42.0"', { given: '42.0' }],
      ['"4e2"', { given: '4e2' }],
      ['" 42"', { given: ' 42' }],
      ['"42 "', { given: '42 ' }],
      ['""', { given: '' }],
      ['"0x10"', { given: '0x10' }],
      ['"1_000"', { given: '1_000' }],
      ['"+"', { given: '+' }],
      ['a boolean', { given: true }],
      ['null', { given: null }],
      ['an object', { given: { valueOf: 1 } }],
      ['an array', { given: [42] }],
    ],
  );
  messages(toInteger, [
    [
      'a fraction',
      { given: 42.9, want: 'Unable to convert field location.lat - INTEGER - for value 42.9' },
    ],
    [
      'a decimal string',
      { given: '42.0', want: 'Unable to convert field location.lat - INTEGER - for value "42.0"' },
    ],
  ]);
});

describe('toDouble (DOUBLE)', () => {
  table(
    'DOUBLE',
    toDouble,
    [
      ['a number', { given: 1.5, want: 1.5 }],
      ['an integer', { given: 3, want: 3 }],
      ['-0', { given: -0, want: 0 }],
      ['max value', { given: Number.MAX_VALUE, want: Number.MAX_VALUE }],
      ['a string', { given: '1.5', want: 1.5 }],
      ['a negative exponent string', { given: '-1e-3', want: -0.001 }],
      ['an upper-case exponent', { given: '2E10', want: 2e10 }],
      ['an exponent with +', { given: '2e+2', want: 200 }],
      ['".5"', { given: '.5', want: 0.5 }],
      ['"5."', { given: '5.', want: 5 }],
      ['"+5"', { given: '+5', want: 5 }],
      ['"-0"', { given: '-0', want: 0 }],
      ['"007"', { given: '007', want: 7 }],
    ],
    [
      ['Infinity', { given: Number.POSITIVE_INFINITY }],
      ['NaN', { given: Number.NaN }],
      ['""', { given: '' }],
      ['"."', { given: '.' }],
      ['"e5"', { given: 'e5' }],
      ['"1e"', { given: '1e' }],
      ['"Infinity"', { given: 'Infinity' }],
      ['"NaN"', { given: 'NaN' }],
      ['" 1"', { given: ' 1' }],
      ['"1 "', { given: '1 ' }],
      ['"0x10"', { given: '0x10' }],
      ['"0b1"', { given: '0b1' }],
      ['"1,5"', { given: '1,5' }],
      ['"1_000"', { given: '1_000' }],
      ['"--1"', { given: '--1' }],
      ['overflowing string', { given: '1e400' }],
      ['a boolean', { given: false }],
      ['null', { given: null }],
      ['an array', { given: [1] }],
    ],
  );
});

describe('toDecimal (DECIMAL)', () => {
  table(
    'DECIMAL',
    toDecimal,
    [
      ['"19.99"', { given: '19.99', want: '19.99' }],
      ['"007.50"', { given: '007.50', want: '7.5' }],
      ['"+1.0"', { given: '+1.0', want: '1' }],
      ['"-0"', { given: '-0', want: '0' }],
      ['"-0.00"', { given: '-0.00', want: '0' }],
      ['"0.000"', { given: '0.000', want: '0' }],
      ['"00"', { given: '00', want: '0' }],
      ['".5"', { given: '.5', want: '0.5' }],
      ['"-.5"', { given: '-.5', want: '-0.5' }],
      ['"5."', { given: '5.', want: '5' }],
      ['"1200"', { given: '1200', want: '1200' }],
      ['"1200.00"', { given: '1200.00', want: '1200' }],
      ['"1e3"', { given: '1e3', want: '1000' }],
      ['"1.5E-7"', { given: '1.5E-7', want: '0.00000015' }],
      ['"-12.345e2"', { given: '-12.345e2', want: '-1234.5' }],
      ['"12.345e-2"', { given: '12.345e-2', want: '0.12345' }],
      ['"0.0012e+3"', { given: '0.0012e+3', want: '1.2' }],
      ['"123e-3"', { given: '123e-3', want: '0.123' }],
      ['"0e999999999"', { given: '0e999999999', want: '0' }],
      [
        'more digits than a double holds',
        {
          given: '123456789012345678901234567890.123456789012345678901234567890',
          want: '123456789012345678901234567890.12345678901234567890123456789',
        },
      ],
      ['"0.1"', { given: '0.1', want: '0.1' }],
      ['"-0.5"', { given: '-0.5', want: '-0.5' }],
      ['"-5"', { given: '-5', want: '-5' }],
      ['"-05"', { given: '-05', want: '-5' }],
      ['"10"', { given: '10', want: '10' }],
      ['"-10.01"', { given: '-10.01', want: '-10.01' }],
      ['"0.10"', { given: '0.10', want: '0.1' }],
      ['"-0.0001"', { given: '-0.0001', want: '-0.0001' }],
      ['1000 digits', { given: '1e999', want: `1${'0'.repeat(999)}` }],
      ['1000 digits of fraction', { given: '1e-999', want: `0.${'0'.repeat(998)}1` }],
      ['number 0.1', { given: 0.1, want: '0.1' }],
      ['number 19.99', { given: 19.99, want: '19.99' }],
      ['number 42', { given: 42, want: '42' }],
      ['number -0', { given: -0, want: '0' }],
      ['number 1e21', { given: 1e21, want: '1000000000000000000000' }],
      ['number 1.5e-7', { given: 1.5e-7, want: '0.00000015' }],
      ['number -2.5e-10', { given: -2.5e-10, want: '-0.00000000025' }],
      ['number 0.1 + 0.2', { given: 0.1 + 0.2, want: '0.30000000000000004' }],
    ],
    [
      ['""', { given: '' }],
      ['"."', { given: '.' }],
      ['"-"', { given: '-' }],
      ['"e5"', { given: 'e5' }],
      ['".e5"', { given: '.e5' }],
      ['"1e"', { given: '1e' }],
      ['"1e+"', { given: '1e+' }],
      ['"0x10"', { given: '0x10' }],
      ['"Infinity"', { given: 'Infinity' }],
      ['"NaN"', { given: 'NaN' }],
      ['" 1"', { given: ' 1' }],
      ['"1,5"', { given: '1,5' }],
      ['"1.2.3"', { given: '1.2.3' }],
      ['"+-1"', { given: '+-1' }],
      ['1001 digits', { given: '1e1000' }],
      ['1001 digits of fraction', { given: '1e-1000' }],
      ['1001 plain digits', { given: '9'.repeat(1001) }],
      ['a huge exponent', { given: '1e99999999999999999999' }],
      ['an exponent of 400 digits', { given: `1e${'9'.repeat(400)}` }],
      ['a hugely negative exponent', { given: `1e-${'9'.repeat(400)}` }],
      ['Infinity', { given: Number.POSITIVE_INFINITY }],
      ['NaN', { given: Number.NaN }],
      ['a boolean', { given: true }],
      ['null', { given: null }],
      ['an object', { given: { value: '1' } }],
    ],
  );
  it('keeps DECIMAL_MAX_DIGITS at 1000', () => {
    expect(DECIMAL_MAX_DIGITS).toBe(1000);
  });
  messages(toDecimal, [
    [
      '"abc"',
      { given: 'abc', want: 'Unable to convert field location.lat - DECIMAL - for value "abc"' },
    ],
  ]);
});

describe('toBoolean (BOOL)', () => {
  table(
    'BOOL',
    toBoolean,
    [
      ['true', { given: true, want: true }],
      ['false', { given: false, want: false }],
      ['"true"', { given: 'true', want: true }],
      ['"false"', { given: 'false', want: false }],
    ],
    [
      ['"yes"', { given: 'yes' }],
      ['"TRUE"', { given: 'TRUE' }],
      ['"False"', { given: 'False' }],
      ['" true"', { given: ' true' }],
      ['""', { given: '' }],
      ['1', { given: 1 }],
      ['0', { given: 0 }],
      ['null', { given: null }],
      ['an array', { given: [true] }],
    ],
  );
  messages(toBoolean, [
    [
      '"yes"',
      { given: 'yes', want: 'Unable to convert field location.lat - BOOL - for value "yes"' },
    ],
  ]);
});

describe('toDate (DATE)', () => {
  table(
    'DATE',
    toDate,
    [
      ['a date', { given: '2024-03-01', want: '2024-03-01' }],
      ['29 Feb of a leap year', { given: '2024-02-29', want: '2024-02-29' }],
      ['29 Feb 2000 (divisible by 400)', { given: '2000-02-29', want: '2000-02-29' }],
      ['31 Dec', { given: '2023-12-31', want: '2023-12-31' }],
      ['30 Apr', { given: '2023-04-30', want: '2023-04-30' }],
      ['year 0001', { given: '0001-01-01', want: '0001-01-01' }],
      ['year 9999', { given: '9999-12-31', want: '9999-12-31' }],
    ],
    [
      ['29 Feb 2023', { given: '2023-02-29' }],
      ['29 Feb 1900 (divisible by 100)', { given: '1900-02-29' }],
      ['30 Feb', { given: '2024-02-30' }],
      ['31 Apr', { given: '2024-04-31' }],
      ['month 13', { given: '2024-13-01' }],
      ['month 00', { given: '2024-00-10' }],
      ['day 00', { given: '2024-01-00' }],
      ['day 32', { given: '2024-01-32' }],
      ['year 0000', { given: '0000-01-01' }],
      ['single-digit month and day', { given: '2024-1-1' }],
      ['no separators', { given: '20240101' }],
      ['slashes', { given: '2024/01/01' }],
      ['a date-time', { given: '2024-01-01T00:00:00Z' }],
      ['leading space', { given: ' 2024-01-01' }],
      ['signs in place of digits', { given: '+024-01-01' }],
      ['non-ASCII digits', { given: '２０２４-01-01' }],
      ['five-digit year', { given: '12024-01-01' }],
      ['a number', { given: 20240101 }],
      ['null', { given: null }],
    ],
  );
  messages(toDate, [
    [
      '2023-02-29',
      {
        given: '2023-02-29',
        want: 'Unable to convert field location.lat - DATE - for value "2023-02-29"',
      },
    ],
  ]);
});

describe('toDateTime (DATE_TIME)', () => {
  table(
    'DATE_TIME',
    toDateTime,
    [
      ['Z', { given: '2024-01-15T10:20:30Z', want: '2024-01-15T10:20:30.000Z' }],
      ['lower-case t and z', { given: '2024-01-15t10:20:30z', want: '2024-01-15T10:20:30.000Z' }],
      ['a space separator', { given: '2024-01-15 10:20:30Z', want: '2024-01-15T10:20:30.000Z' }],
      ['no zone is UTC', { given: '2024-01-15T10:20:30', want: '2024-01-15T10:20:30.000Z' }],
      ['no seconds', { given: '2024-01-15T10:20', want: '2024-01-15T10:20:00.000Z' }],
      [
        'no seconds with zone',
        { given: '2024-01-15T10:20+01:00', want: '2024-01-15T09:20:00.000Z' },
      ],
      [
        '+02:00 across a leap day',
        { given: '2024-03-01T01:30:00+02:00', want: '2024-02-29T23:30:00.000Z' },
      ],
      ['+0200', { given: '2024-03-01T01:30:00+0200', want: '2024-02-29T23:30:00.000Z' }],
      ['+00:00', { given: '2024-03-01T01:30:00+00:00', want: '2024-03-01T01:30:00.000Z' }],
      ['-00:00', { given: '2024-03-01T01:30:00-00:00', want: '2024-03-01T01:30:00.000Z' }],
      [
        '-01:30 across a year',
        { given: '2023-12-31T23:00:00-01:30', want: '2024-01-01T00:30:00.000Z' },
      ],
      ['+05:45', { given: '2024-06-01T00:00:00+05:45', want: '2024-05-31T18:15:00.000Z' }],
      ['+23:59', { given: '2024-06-02T00:00:00+23:59', want: '2024-06-01T00:01:00.000Z' }],
      ['1 fraction digit', { given: '2024-01-15T10:20:30.7Z', want: '2024-01-15T10:20:30.700Z' }],
      ['2 fraction digits', { given: '2024-01-15T10:20:30.07Z', want: '2024-01-15T10:20:30.070Z' }],
      [
        '9 fraction digits are truncated',
        { given: '2024-01-15T10:20:30.123999999Z', want: '2024-01-15T10:20:30.123Z' },
      ],
      [
        'a fraction with an offset',
        { given: '2024-01-15T10:20:30.5+01:00', want: '2024-01-15T09:20:30.500Z' },
      ],
      ['29 Feb 2000', { given: '2000-02-29T12:00:00Z', want: '2000-02-29T12:00:00.000Z' }],
      ['year 0050 (not 1950)', { given: '0050-06-15T12:00:00Z', want: '0050-06-15T12:00:00.000Z' }],
      ['year 0001', { given: '0001-01-01T00:00:00Z', want: '0001-01-01T00:00:00.000Z' }],
      [
        'year 0000 moved into 0001',
        { given: '0000-12-31T23:30:00-01:00', want: '0001-01-01T00:30:00.000Z' },
      ],
      [
        'the last millisecond',
        { given: '9999-12-31T23:59:59.999Z', want: '9999-12-31T23:59:59.999Z' },
      ],
      ['midnight', { given: '2024-01-15T00:00:00Z', want: '2024-01-15T00:00:00.000Z' }],
      ['23:59:59', { given: '2024-01-15T23:59:59Z', want: '2024-01-15T23:59:59.000Z' }],
      [
        'canonical input is returned as is',
        { given: '2024-01-15T10:20:30.123Z', want: '2024-01-15T10:20:30.123Z' },
      ],
      [
        '6 fraction digits are truncated',
        { given: '2024-01-15T10:20:30.123456Z', want: '2024-01-15T10:20:30.123Z' },
      ],
      [
        '-01:00 into a leap day month end',
        { given: '2024-02-29T23:30:00-01:00', want: '2024-03-01T00:30:00.000Z' },
      ],
      [
        '-01:00 at the end of a non-leap February',
        { given: '2023-02-28T23:30:00-01:00', want: '2023-03-01T00:30:00.000Z' },
      ],
      [
        '-01:00 into the next year',
        { given: '2024-12-31T23:30-01:00', want: '2025-01-01T00:30:00.000Z' },
      ],
      [
        '+00:20 into the previous month',
        { given: '2024-05-01T00:10+00:20', want: '2024-04-30T23:50:00.000Z' },
      ],
      [
        '+01:00 into the previous year',
        { given: '2024-01-01T00:59:59.999+01:00', want: '2023-12-31T23:59:59.999Z' },
      ],
    ],
    [
      ['29 Feb 2023', { given: '2023-02-29T00:00:00Z' }],
      ['29 Feb 1900', { given: '1900-02-29T00:00:00Z' }],
      ['31 Apr', { given: '2024-04-31T00:00:00Z' }],
      ['month 13', { given: '2024-13-01T00:00:00Z' }],
      ['24:00', { given: '2024-01-01T24:00:00Z' }],
      ['minute 60', { given: '2024-01-01T23:60Z' }],
      ['leap second', { given: '2016-12-31T23:59:60Z' }],
      ['offset hour 24', { given: '2024-01-01T10:00:00+24:00' }],
      ['offset minute 60', { given: '2024-01-01T10:00:00+01:60' }],
      ['one-digit offset', { given: '2024-01-01T10:00:00+2' }],
      ['offset +02', { given: '2024-01-01T10:00:00+02' }],
      ['offset +2:00', { given: '2024-01-01T10:00:00+2:00' }],
      ['a date only', { given: '2024-01-01' }],
      ['hour only', { given: '2024-01-01T10' }],
      ['empty fraction', { given: '2024-01-01T10:00:00.Z' }],
      ['a fraction without seconds', { given: '2024-01-01T10:00.5Z' }],
      ['comma fraction', { given: '2024-01-01T10:00:00,5Z' }],
      ['GMT', { given: '2024-01-01T10:00:00GMT' }],
      ['two spaces', { given: '2024-01-01  10:00:00Z' }],
      ['a leading space', { given: ' 2024-01-01T10:00:00Z' }],
      ['a trailing space', { given: '2024-01-01T10:00:00Z ' }],
      ['single-digit month', { given: '2024-1-01T10:00:00Z' }],
      ['an RFC 2822 date', { given: 'Mon, 15 Jan 2024 10:20:30 GMT' }],
      ['year 10000 after conversion', { given: '9999-12-31T23:30:00-01:00' }],
      ['year 0000 after conversion', { given: '0001-01-01T00:30:00+01:00' }],
      ['year 0000', { given: '0000-06-01T00:00:00Z' }],
      ['canonical year 0000', { given: '0000-06-01T00:00:00.000Z' }],
      ['text after Z', { given: '2024-01-01T10:00:00Zx' }],
      ['text after an offset', { given: '2024-01-01T10:00:00+02:00x' }],
      ['offset +02:0', { given: '2024-01-01T10:00:00+02:0' }],
      ['offset +02:', { given: '2024-01-01T10:00:00+02:' }],
      ['offset +', { given: '2024-01-01T10:00:00+' }],
      ['one-digit seconds', { given: '2024-01-15T10:20:3' }],
      ['colon without seconds', { given: '2024-01-15T10:20:' }],
      ['one-digit minute', { given: '2024-01-15T10:2' }],
      ['a letter in the fraction', { given: '2024-01-15T10:20:30.12aZ' }],
      ['a negative hour', { given: '2024-01-15T-1:20:30Z' }],
      ['epoch milliseconds', { given: 1700000000000 }],
      ['null', { given: null }],
      ['a Date object', { given: new Date(0) }],
    ],
  );
  it('agrees with Date for random valid inputs', () => {
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * n);
    };
    const p = (n: number, width: number): string => String(n).padStart(width, '0');
    for (let k = 0; k < 5000; k++) {
      const year = 1 + random(9998);
      const month = 1 + random(12);
      const day = 1 + random(28 + (month === 2 ? 1 : 3));
      const real = new Date(Date.UTC(2000, month - 1, day)).getUTCMonth() === month - 1;
      const hour = random(24);
      const minute = random(60);
      const second = random(60);
      const millis = random(1000);
      const offset = random(2 * 24 * 60 - 1) - (24 * 60 - 1);
      const sign = offset < 0 ? '-' : '+';
      const abs = Math.abs(offset);
      const given = `${p(year, 4)}-${p(month, 2)}-${p(day, 2)}T${p(hour, 2)}:${p(minute, 2)}:${p(second, 2)}.${p(millis, 3)}${sign}${p(Math.floor(abs / 60), 2)}:${p(abs % 60, 2)}`;
      const leapDayOk =
        !(month === 2 && day === 29) || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
      const date = new Date(0);
      date.setUTCFullYear(year, month - 1, day);
      date.setUTCHours(hour, minute - offset, second, millis);
      const y = date.getUTCFullYear();
      const want = real && leapDayOk && y >= 1 && y <= 9999 ? date.toISOString() : undefined;
      expect([given, run(toDateTime, given).out]).toEqual([given, want]);
    }
  });
  messages(toDateTime, [
    [
      '24:00',
      {
        given: '2024-01-01T24:00:00Z',
        want: 'Unable to convert field location.lat - DATE_TIME - for value "2024-01-01T24:00:00Z"',
      },
    ],
  ]);
});

describe('enumConverter (ENUM)', () => {
  const toColour = enumConverter(['RED', 'Green', 'blue']);
  table(
    'ENUM',
    toColour,
    [
      ['exact', { given: 'RED', want: 'RED' }],
      ['lower case', { given: 'red', want: 'RED' }],
      ['mixed case', { given: 'rEd', want: 'RED' }],
      ['upper case of Green', { given: 'GREEN', want: 'Green' }],
      ['capitalised blue', { given: 'Blue', want: 'blue' }],
    ],
    [
      ['an unknown value', { given: 'purple' }],
      ['the empty string', { given: '' }],
      ['padding', { given: ' RED' }],
      ['a number', { given: 1 }],
      ['null', { given: null }],
      ['an array', { given: ['RED'] }],
    ],
  );
  messages(toColour, [
    [
      'purple',
      { given: 'purple', want: 'Unable to convert field location.lat - ENUM - for value "purple"' },
    ],
  ]);
  it('prefers an exact match, then the first value equal ignoring case', () => {
    const convert = enumConverter(['a', 'A', 'b']);
    expect(run(convert, 'A').out).toBe('A');
    expect(run(convert, 'a').out).toBe('a');
    expect(run(convert, 'B').out).toBe('b');
  });
});

describe('selectConverter (SELECT)', () => {
  table(
    'SELECT',
    selectConverter(['S', 'M', 'xl']),
    [
      ['S', { given: 'S', want: 'S' }],
      ['xl', { given: 'xl', want: 'xl' }],
    ],
    [
      ['other case', { given: 's' }],
      ['XL', { given: 'XL' }],
      ['unknown', { given: 'L' }],
      ['a number', { given: 1 }],
      ['null', { given: null }],
    ],
  );
});

describe('refConverter (ENTITY_REF)', () => {
  table(
    'ENTITY_REF',
    refConverter(toInteger),
    [
      ['a number', { given: 42, want: 42 }],
      ['a string of an integer', { given: '42', want: 42 }],
    ],
    [
      ['a word', { given: 'abc' }],
      ['a fraction', { given: 1.5 }],
      ['null', { given: null }],
    ],
  );
  table(
    'ENTITY_REF',
    refConverter(toText),
    [['a string id', { given: 'a~b', want: 'a~b' }]],
    [
      ['a number', { given: 42 }],
      ['an empty string, which names no record', { given: '' }],
    ],
  );
  table(
    'ENTITY_REF',
    refConverter(enumConverter(['RED'])),
    [['an enum key', { given: 'red', want: 'RED' }]],
    [['an unknown enum key', { given: 'blue' }]],
  );
  table(
    'ENTITY_REF',
    refConverter(refConverter(toDate)),
    [['a nested ref', { given: '2024-02-29', want: '2024-02-29' }]],
    [['a nested ref', { given: '2024-02-30' }]],
  );
  messages(refConverter(toInteger), [
    [
      'a word',
      { given: 'abc', want: 'Unable to convert field location.lat - ENTITY_REF - for value "abc"' },
    ],
  ]);
  it('reports only the ENTITY_REF issue, however often it fails', () => {
    const convert = arrayOf(refConverter(toInteger));
    const { out, issues } = run(convert, ['x', 1, 'y'], [], 'refs');
    expect(out).toBeUndefined();
    expect(issues.map((i) => [i.path, i.message])).toEqual([
      [['refs', 0], 'Unable to convert field refs[0] - ENTITY_REF - for value "x"'],
      [['refs', 2], 'Unable to convert field refs[2] - ENTITY_REF - for value "y"'],
    ]);
    expect(run(convert, [1, '2']).out).toEqual([1, 2]);
  });
});

describe('toB64Image (B64_IMAGE)', () => {
  const big = `data:image/png;base64,${'QUJD'.repeat(500_000)}`;
  table(
    'B64_IMAGE',
    toB64Image,
    [
      [
        'png',
        { given: 'data:image/png;base64,iVBORw0KGgo=', want: 'data:image/png;base64,iVBORw0KGgo=' },
      ],
      [
        'svg+xml',
        { given: 'data:image/svg+xml;base64,PHN2Zz4=', want: 'data:image/svg+xml;base64,PHN2Zz4=' },
      ],
      [
        'subtype with . and -',
        { given: 'data:image/vnd.x-y;base64,AA==', want: 'data:image/vnd.x-y;base64,AA==' },
      ],
      ['no padding', { given: 'data:image/gif;base64,R0lG', want: 'data:image/gif;base64,R0lG' }],
      ['+ and /', { given: 'data:image/gif;base64,+/+/', want: 'data:image/gif;base64,+/+/' }],
      [
        'upper-case prefix',
        { given: 'DATA:IMAGE/PNG;BASE64,AAAA', want: 'DATA:IMAGE/PNG;BASE64,AAAA' },
      ],
      ['2 MB of data', { given: big, want: big }],
    ],
    [
      ['empty data', { given: 'data:image/png;base64,' }],
      ['length 3', { given: 'data:image/png;base64,AAA' }],
      ['length 5', { given: 'data:image/png;base64,AAAAA' }],
      ['three padding characters', { given: 'data:image/png;base64,A===' }],
      ['padding only', { given: 'data:image/png;base64,====' }],
      ['padding in the middle', { given: 'data:image/png;base64,AA=A' }],
      ['padding then data', { given: 'data:image/png;base64,AA==AAAA' }],
      ['a space', { given: 'data:image/png;base64,AA AA' }],
      ['a trailing newline', { given: 'data:image/png;base64,AAAA\n' }],
      ['url-safe alphabet', { given: 'data:image/png;base64,AA-_' }],
      ['not an image', { given: 'data:text/plain;base64,AAAA' }],
      ['empty subtype', { given: 'data:image/;base64,AAAA' }],
      ['subtype with a space', { given: 'data:image/p ng;base64,AAAA' }],
      ['not base64', { given: 'data:image/png,AAAA' }],
      ['no data: prefix', { given: 'iVBORw0KGgo=' }],
      ['a number', { given: 123 }],
      ['null', { given: null }],
    ],
  );
  messages(toB64Image, [
    [
      'a long invalid value',
      {
        given: `data:image/png;base64,${'A'.repeat(200)}!`,
        want: `Unable to convert field location.lat - B64_IMAGE - for value "data:image/png;base64,${'A'.repeat(57)}…`,
      },
    ],
  ]);
});

describe('toAny (ANY)', () => {
  const obj = { a: [1, null] };
  it.each<Valid>([
    ['a string', { given: 'x', want: 'x' }],
    ['a number', { given: 1.5, want: 1.5 }],
    ['false', { given: false, want: false }],
    ['null', { given: null, want: null }],
    ['an object, same reference', { given: obj, want: obj }],
    ['an array', { given: [null, 'x'], want: [null, 'x'] }],
  ])('accepts %s', (_name, { given, want }) => {
    const { out, issues } = run(toAny, given);
    expect(issues).toEqual([]);
    expect(out).toBe(given);
    expect(out).toStrictEqual(want);
  });
  it('rejects undefined', () => {
    const { out, issues } = run(toAny, undefined);
    expect(out).toBeUndefined();
    expect(issues).toEqual([
      {
        path: ['f'],
        code: 'conversion_failed',
        message: 'Unable to convert field f - ANY - for value undefined',
      },
    ]);
  });
});

describe('toGeohashLocation (GEOHASH_LOCATION)', () => {
  table(
    'GEOHASH_LOCATION',
    toGeohashLocation,
    [
      [
        'lat/lng, geohash computed',
        {
          given: { lat: 57.64911, lng: 10.40744 },
          want: { lat: 57.64911, lng: 10.40744, geohash: 'u4pruydqqvj8' },
        },
      ],
      [
        'null geohash is computed',
        {
          given: { lat: 0, lng: 0, geohash: null },
          want: { lat: 0, lng: 0, geohash: 's00000000000' },
        },
      ],
      [
        'matching geohash, lower-cased',
        {
          given: { geohash: 'U4PRU', lng: 10.40744, lat: 57.64911 },
          want: { lat: 57.64911, lng: 10.40744, geohash: 'u4pru' },
        },
      ],
      [
        'full matching geohash',
        {
          given: { lat: 57.64911, lng: 10.40744, geohash: 'u4pruydqqvj8' },
          want: { lat: 57.64911, lng: 10.40744, geohash: 'u4pruydqqvj8' },
        },
      ],
      [
        'a point on a cell border',
        { given: { lat: 0, lng: 0, geohash: 'k' }, want: { lat: 0, lng: 0, geohash: 'k' } },
      ],
      [
        'north-east corner',
        { given: { lat: 90, lng: 180 }, want: { lat: 90, lng: 180, geohash: 'zzzzzzzzzzzz' } },
      ],
      [
        'south-west corner',
        { given: { lat: -90, lng: -180 }, want: { lat: -90, lng: -180, geohash: '000000000000' } },
      ],
    ],
    [
      ['a geohash of another cell', { given: { lat: 0, lng: 0, geohash: 'u4pru' } }],
      [
        'a geohash not quite containing the point',
        { given: { lat: 57.7, lng: 10.40744, geohash: 'u4pruydqqvj8' } },
      ],
      [
        'an invalid geohash character',
        { given: { lat: 57.64911, lng: 10.40744, geohash: 'u4pa' } },
      ],
      ['an empty geohash', { given: { lat: 0, lng: 0, geohash: '' } }],
      ['a 13-character geohash', { given: { lat: 0, lng: 0, geohash: 's000000000000' } }],
      ['a numeric geohash', { given: { lat: 0, lng: 0, geohash: 7 } }],
      ['an extra key', { given: { lat: 0, lng: 0, name: 'x' } }],
      ['missing lng', { given: { lat: 0 } }],
      ['missing lat', { given: { lng: 0 } }],
      ['null lat', { given: { lat: null, lng: 0 } }],
      ['a string lat', { given: { lat: '57.6', lng: 10 } }],
      ['lat above 90', { given: { lat: 90.5, lng: 0 } }],
      ['lat below -90', { given: { lat: -91, lng: 0 } }],
      ['lng above 180', { given: { lat: 0, lng: 180.0001 } }],
      ['lng below -180', { given: { lat: 0, lng: -181 } }],
      ['NaN lat', { given: { lat: Number.NaN, lng: 0 } }],
      ['an array', { given: [0, 0] }],
      ['a string', { given: '57.6,10.4' }],
      ['null', { given: null }],
      ['__proto__ key', { given: JSON.parse('{"lat":0,"lng":0,"__proto__":{"x":1}}') }],
    ],
  );
  it('returns the keys in the order lat, lng, geohash', () => {
    const out = run(toGeohashLocation, { geohash: 's', lng: 1, lat: 1 }).out as GeohashLocation;
    expect(Object.keys(out)).toEqual(['lat', 'lng', 'geohash']);
  });
  messages(toGeohashLocation, [
    [
      'a mismatching geohash',
      {
        given: { lat: 0, lng: 0, geohash: 'u4pru' },
        want: 'Unable to convert field location.lat - GEOHASH_LOCATION - for value {"lat":0,"lng":0,"geohash":"u4pru"}',
      },
    ],
  ]);
});

describe('arrayOf (ARRAY)', () => {
  const integers = arrayOf(toInteger);
  table(
    'ARRAY',
    integers,
    [
      ['integers', { given: [1, '2', 3], want: [1, 2, 3] }],
      ['empty', { given: [], want: [] }],
    ],
    [
      ['an object', { given: { 0: 1 } }],
      ['a string', { given: '1,2' }],
      ['null', { given: null }],
    ],
  );
  it('returns a new array', () => {
    const given = [1, 2];
    expect(run(integers, given).out).not.toBe(given);
  });

  type Case = [
    string,
    { convert: Converter<unknown>; given: unknown; want: unknown; issues: [IssuePath, string][] },
  ];
  const cases: Case[] = [
    [
      'every failing element is reported',
      {
        convert: integers,
        given: [1, null, 'x', 4.5],
        want: undefined,
        issues: [
          [['tags', 1], 'Unable to convert field tags[1] - INTEGER - for value null'],
          [['tags', 2], 'Unable to convert field tags[2] - INTEGER - for value "x"'],
          [['tags', 3], 'Unable to convert field tags[3] - INTEGER - for value 4.5'],
        ],
      },
    ],
    [
      'nested arrays convert',
      {
        convert: arrayOf(arrayOf(toInteger)),
        given: [[1], [], ['2', 3]],
        want: [[1], [], [2, 3]],
        issues: [],
      },
    ],
    [
      'nested arrays report inner paths',
      {
        convert: arrayOf(arrayOf(toInteger)),
        given: [[1], ['a', 2], 3],
        want: undefined,
        issues: [
          [['tags', 1, 0], 'Unable to convert field tags[1][0] - INTEGER - for value "a"'],
          [['tags', 2], 'Unable to convert field tags[2] - ARRAY - for value 3'],
        ],
      },
    ],
    [
      'arrays of dates',
      {
        convert: arrayOf(toDate),
        given: ['2024-02-29', '2023-02-29'],
        want: undefined,
        issues: [[['tags', 1], 'Unable to convert field tags[1] - DATE - for value "2023-02-29"']],
      },
    ],
    [
      'arrays of ANY keep null',
      {
        convert: arrayOf(toAny),
        given: [null, 1, { a: null }],
        want: [null, 1, { a: null }],
        issues: [],
      },
    ],
    [
      'a custom type label',
      {
        convert: arrayOf(toText, 'LIST'),
        given: 'x',
        want: undefined,
        issues: [[['tags'], 'Unable to convert field tags - LIST - for value "x"']],
      },
    ],
  ];
  it.each(cases)('%s', (_name, { convert, given, want, issues: wantIssues }) => {
    const { out, issues } = run(convert, given, [], 'tags');
    expect(out).toStrictEqual(want);
    expect(issues.map((i) => [i.path, i.message])).toEqual(wantIssues);
    for (const issue of issues) expect(issue.code).toBe('conversion_failed');
  });

  it('formats paths below a record index', () => {
    const { issues } = run(arrayOf(arrayOf(toInteger)), [[], [1, 'b']], [3], 'tags');
    expect(issues).toEqual([
      {
        path: [3, 'tags', 1, 1],
        code: 'conversion_failed',
        message: 'Unable to convert field [3].tags[1][1] - INTEGER - for value "b"',
      },
    ]);
  });
});

/** An OBJECT converter shaped like generated code: `{name: STRING (required), qty?: INTEGER}`. */
const itemFields: ReadonlySet<string> = new Set(['name', 'qty']);
const toItem: Converter<{ name: string; qty?: number }> = (value, parent, key, issues) => {
  const body = toObjectBody(value, parent, key, issues);
  if (body === undefined) return undefined;
  const before = issues.length;
  const path = [...parent, key];
  rejectUnknownFields(body, itemFields, path, issues);
  const name =
    body.name == null ? missing(path, 'name', issues) : toText(body.name, path, 'name', issues);
  const qty = body.qty == null ? undefined : toInteger(body.qty, path, 'qty', issues);
  if (issues.length !== before || name === undefined) return undefined;
  return qty === undefined ? { name } : { name, qty };
};

describe('dictionaryOf (DICTIONARY)', () => {
  const integers = dictionaryOf(toInteger);
  table(
    'DICTIONARY',
    integers,
    [
      ['integers', { given: { a: '1', b: 2 }, want: { a: 1, b: 2 } }],
      ['empty', { given: {}, want: {} }],
      ['the empty key', { given: { '': 1 }, want: { '': 1 } }],
    ],
    [
      ['an array', { given: [1] }],
      ['a string', { given: 'a' }],
      ['null', { given: null }],
      ['a Map', { given: new Map([['a', 1]]) }],
    ],
  );

  type Case = [
    string,
    { convert: Converter<unknown>; given: unknown; want: unknown; issues: [IssuePath, string][] },
  ];
  const cases: Case[] = [
    [
      '__proto__ key',
      {
        convert: integers,
        given: JSON.parse('{"a": 1, "__proto__": 2}'),
        want: undefined,
        issues: [
          [['d', '__proto__'], 'Unable to convert field d.__proto__ - DICTIONARY - reserved key'],
        ],
      },
    ],
    [
      'constructor and prototype keys',
      {
        convert: integers,
        given: { constructor: 1, prototype: 2, ok: 3 },
        want: undefined,
        issues: [
          [
            ['d', 'constructor'],
            'Unable to convert field d.constructor - DICTIONARY - reserved key',
          ],
          [['d', 'prototype'], 'Unable to convert field d.prototype - DICTIONARY - reserved key'],
        ],
      },
    ],
    [
      'every failing entry is reported',
      {
        convert: integers,
        given: { a: 'x', b: 1, c: null },
        want: undefined,
        issues: [
          [['d', 'a'], 'Unable to convert field d.a - INTEGER - for value "x"'],
          [['d', 'c'], 'Unable to convert field d.c - INTEGER - for value null'],
        ],
      },
    ],
    [
      'objects of the dict shape',
      {
        convert: dictionaryOf(toItem),
        given: { k1: { name: 'a', qty: '2' }, k2: { name: 'b' } },
        want: { k1: { name: 'a', qty: 2 }, k2: { name: 'b' } },
        issues: [],
      },
    ],
    [
      'invalid objects of the dict shape',
      {
        convert: dictionaryOf(toItem),
        given: JSON.parse(
          '{"k1": {"qty": 1.5, "__proto__": {"polluted": true}}, "k2": null, "k3": []}',
        ),
        want: undefined,
        issues: [
          [['d', 'k1', '__proto__'], 'Unknown field d.k1.__proto__'],
          [['d', 'k1', 'name'], 'Field d.k1.name is required'],
          [['d', 'k1', 'qty'], 'Unable to convert field d.k1.qty - INTEGER - for value 1.5'],
          [['d', 'k2'], 'Unable to convert field d.k2 - OBJECT - for value null'],
          [['d', 'k3'], 'Unable to convert field d.k3 - OBJECT - for value []'],
        ],
      },
    ],
    [
      'arrays of dictionaries',
      {
        convert: arrayOf(dictionaryOf(arrayOf(toDecimal))),
        given: [{ a: ['1.50'] }, { b: ['x', '2'] }],
        want: undefined,
        issues: [[['d', 1, 'b', 0], 'Unable to convert field d[1].b[0] - DECIMAL - for value "x"']],
      },
    ],
  ];
  it.each(cases)('%s', (_name, { convert, given, want, issues: wantIssues }) => {
    const { out, issues } = run(convert, given, [], 'd');
    expect(out).toStrictEqual(want);
    expect(issues.map((i) => [i.path, i.message])).toEqual(wantIssues);
  });

  it('builds a new plain object that serialises normally', () => {
    const given = JSON.parse('{"b": "2", "a": 1}') as unknown;
    const out = run(integers, given).out;
    expect(out).not.toBe(given);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"b":2,"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('toObjectBody', () => {
  const plain = { a: 1 };
  const nullProto = Object.create(null) as Record<string, unknown>;
  it.each<[string, { given: unknown }]>([
    ['a plain object', { given: plain }],
    ['an object without prototype', { given: nullProto }],
    ['a parsed object', { given: JSON.parse('{"__proto__": 1}') }],
  ])('accepts %s as is', (_name, { given }) => {
    const issues: Issue[] = [];
    expect(toObjectBody(given, [], 'o', issues)).toBe(given);
    expect(issues).toEqual([]);
  });
  it.each<[string, { given: unknown; want: string }]>([
    ['null', { given: null, want: 'Unable to convert field o - OBJECT - for value null' }],
    ['an array', { given: [1], want: 'Unable to convert field o - OBJECT - for value [1]' }],
    ['a string', { given: 'x', want: 'Unable to convert field o - OBJECT - for value "x"' }],
    [
      'a Date',
      {
        given: new Date(0),
        want: 'Unable to convert field o - OBJECT - for value "1970-01-01T00:00:00.000Z"',
      },
    ],
    [
      'a class instance',
      { given: new (class A {})(), want: 'Unable to convert field o - OBJECT - for value {}' },
    ],
  ])('rejects %s', (_name, { given, want }) => {
    const issues: Issue[] = [];
    expect(toObjectBody(given, [], 'o', issues)).toBeUndefined();
    expect(issues).toEqual([{ path: ['o'], code: 'conversion_failed', message: want }]);
  });
  it('uses the given type label', () => {
    const issues: Issue[] = [];
    toObjectBody(1, ['a'], 0, issues, 'ADDRESS');
    expect(issues).toEqual([
      {
        path: ['a', 0],
        code: 'conversion_failed',
        message: 'Unable to convert field a[0] - ADDRESS - for value 1',
      },
    ]);
  });
});

describe('missing', () => {
  it.each<[string, { given: [IssuePath, string | number]; want: Issue }]>([
    [
      'a top-level field',
      {
        given: [[], 'name'],
        want: { path: ['name'], code: 'required', message: 'Field name is required' },
      },
    ],
    [
      'an inner field',
      {
        given: [['location'], 'lat'],
        want: {
          path: ['location', 'lat'],
          code: 'required',
          message: 'Field location.lat is required',
        },
      },
    ],
    [
      'a field of a record in a list',
      {
        given: [[2], 'id'],
        want: { path: [2, 'id'], code: 'required', message: 'Field [2].id is required' },
      },
    ],
  ])('%s', (_name, { given, want }) => {
    const issues: Issue[] = [];
    expect(missing(given[0], given[1], issues)).toBeUndefined();
    expect(issues).toEqual([want]);
  });
});

describe('rejectUnknownFields', () => {
  const allowed: ReadonlySet<string> = new Set(['a', 'b']);
  it.each<[string, { given: string; parent: IssuePath; want: [IssuePath, string][] }]>([
    ['only known fields', { given: '{"a": 1, "b": null}', parent: [], want: [] }],
    [
      'an unknown field',
      { given: '{"a": 1, "c": 2}', parent: [], want: [[['c'], 'Unknown field c']] },
    ],
    [
      'prototype-polluting keys',
      {
        given: '{"__proto__": {"x": 1}, "constructor": 1, "a": 1, "prototype": 2}',
        parent: [],
        want: [
          [['__proto__'], 'Unknown field __proto__'],
          [['constructor'], 'Unknown field constructor'],
          [['prototype'], 'Unknown field prototype'],
        ],
      },
    ],
    [
      'below a parent path',
      {
        given: '{"zz": 1}',
        parent: ['items', 2],
        want: [[['items', 2, 'zz'], 'Unknown field items[2].zz']],
      },
    ],
  ])('%s', (_name, { given, parent, want }) => {
    const issues: Issue[] = [];
    rejectUnknownFields(JSON.parse(given) as Record<string, unknown>, allowed, parent, issues);
    expect(issues.map((i) => [i.path, i.message])).toEqual(want);
    for (const issue of issues) expect(issue.code).toBe('unknown_field');
  });
});

describe('conversionFailed', () => {
  it('pushes one issue and returns undefined', () => {
    const issues: Issue[] = [];
    expect(conversionFailed({ x: 'y'.repeat(100) }, ['o'], 'p', issues, 'OBJECT')).toBeUndefined();
    expect(issues).toEqual([
      {
        path: ['o', 'p'],
        code: 'conversion_failed',
        message: `Unable to convert field o.p - OBJECT - for value {"x":"${'y'.repeat(74)}…`,
      },
    ]);
  });
});
