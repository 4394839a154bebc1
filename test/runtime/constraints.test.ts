/**
 * Field constraints (SPEC §16) as the generated validators apply them: every kind at, below and
 * above its limit; DECIMAL compared exactly; DATE and DATE_TIME by time; lengths in code points.
 */
import { describe, expect, it } from 'vitest';
import {
  compareDecimal,
  constrained,
  toDate,
  toDateTime,
  toDecimal,
  toDouble,
  toInteger,
  toText,
  arrayOf,
  type Converter,
  type FieldConstraints,
} from '../../runtime/src/convert.js';
import type { Issue } from '../../runtime/src/issues.js';

type Case = {
  readonly type: string;
  readonly rules: FieldConstraints;
  readonly value: unknown;
  /** The message of the issue, or undefined when the value passes. */
  readonly message?: string;
};

const CONVERTERS: Record<string, Converter<unknown>> = {
  INTEGER: toInteger,
  DOUBLE: toDouble,
  DECIMAL: toDecimal,
  DATE: toDate,
  DATE_TIME: toDateTime,
  STRING: toText,
  ARRAY: arrayOf(toText),
};

const F = 'Field f of Entity E';
const CASES: readonly Case[] = [
  { type: 'INTEGER', rules: { min: 1 }, value: 0, message: `${F} must be at least 1, not 0` },
  { type: 'INTEGER', rules: { min: 1 }, value: 1 },
  { type: 'INTEGER', rules: { min: 1 }, value: 2 },
  { type: 'INTEGER', rules: { max: 10 }, value: 9 },
  { type: 'INTEGER', rules: { max: 10 }, value: 10 },
  { type: 'INTEGER', rules: { max: 10 }, value: '11', message: `${F} must be at most 10, not 11` },
  {
    type: 'DOUBLE',
    rules: { min: -0.5 },
    value: -0.51,
    message: `${F} must be at least -0.5, not -0.51`,
  },
  { type: 'DOUBLE', rules: { min: -0.5 }, value: -0.5 },
  { type: 'DOUBLE', rules: { max: 2.5 }, value: 2.5 },
  { type: 'DOUBLE', rules: { max: 2.5 }, value: 2.6, message: `${F} must be at most 2.5, not 2.6` },
  { type: 'DECIMAL', rules: { max: '0.3' }, value: '0.3' },
  { type: 'DECIMAL', rules: { max: '0.3' }, value: 0.3 },
  { type: 'DECIMAL', rules: { max: '0.3' }, value: '0.29999999999999999999' },
  {
    type: 'DECIMAL',
    rules: { max: '0.3' },
    value: '0.30000000000000004',
    message: `${F} must be at most "0.3", not "0.30000000000000004"`,
  },
  {
    type: 'DECIMAL',
    rules: { max: '0.3' },
    value: 0.30000000000000004,
    message: `${F} must be at most "0.3", not "0.30000000000000004"`,
  },
  { type: 'DECIMAL', rules: { min: '-10' }, value: '-10.000' },
  {
    type: 'DECIMAL',
    rules: { min: '-10' },
    value: '-10.01',
    message: `${F} must be at least "-10", not "-10.01"`,
  },
  { type: 'DECIMAL', rules: { min: '-10' }, value: '-9.99' },
  {
    type: 'DECIMAL',
    rules: { min: '100' },
    value: '99.9999',
    message: `${F} must be at least "100", not "99.9999"`,
  },
  {
    type: 'DATE',
    rules: { min: '2024-01-01' },
    value: '2023-12-31',
    message: `${F} must be at least "2024-01-01", not "2023-12-31"`,
  },
  { type: 'DATE', rules: { min: '2024-01-01' }, value: '2024-01-01' },
  {
    type: 'DATE',
    rules: { max: '2024-12-31' },
    value: '2025-01-01',
    message: `${F} must be at most "2024-12-31", not "2025-01-01"`,
  },
  {
    type: 'DATE_TIME',
    rules: { max: '2024-01-01T00:00:00.000Z' },
    value: '2024-01-01T01:00:00+01:00',
  },
  {
    type: 'DATE_TIME',
    rules: { max: '2024-01-01T00:00:00.000Z' },
    value: '2024-01-01T00:00:00.001Z',
    message: `${F} must be at most "2024-01-01T00:00:00.000Z", not "2024-01-01T00:00:00.001Z"`,
  },
  {
    type: 'STRING',
    rules: { minLength: 2 },
    value: 'a',
    message: `${F} must be at least 2 characters long, not 1`,
  },
  { type: 'STRING', rules: { minLength: 2 }, value: 'ab' },
  { type: 'STRING', rules: { maxLength: 2 }, value: 'ab' },
  {
    type: 'STRING',
    rules: { maxLength: 2 },
    value: 'abc',
    message: `${F} must be at most 2 characters long, not 3`,
  },
  // Two emoji are four UTF-16 units but two characters.
  { type: 'STRING', rules: { maxLength: 2 }, value: '😀😀' },
  {
    type: 'STRING',
    rules: { maxLength: 1 },
    value: '😀😀',
    message: `${F} must be at most 1 character long, not 2`,
  },
  { type: 'STRING', rules: { pattern: '^[A-Z]{3}-\\d+$' }, value: 'ABC-12' },
  {
    type: 'STRING',
    rules: { pattern: '^[A-Z]{3}-\\d+$' },
    value: 'ABC-',
    message: `${F} must match the pattern ^[A-Z]{3}-\\d+$, not "ABC-"`,
  },
  // Not anchored unless the pattern says so.
  { type: 'STRING', rules: { pattern: '\\d' }, value: 'a1b' },
  {
    type: 'ARRAY',
    rules: { minItems: 1 },
    value: [],
    message: `${F} must have at least 1 item, not 0`,
  },
  { type: 'ARRAY', rules: { minItems: 1 }, value: ['a'] },
  { type: 'ARRAY', rules: { maxItems: 2 }, value: ['a', 'b'] },
  {
    type: 'ARRAY',
    rules: { maxItems: 2 },
    value: ['a', 'b', 'c'],
    message: `${F} must have at most 2 items, not 3`,
  },
];

describe('constrained converters', () => {
  it.each(CASES)('$type $rules with $value', ({ type, rules, value, message }) => {
    const convert = constrained(CONVERTERS[type]!, type, rules, 'E');
    const issues: Issue[] = [];
    const result = convert(value, [], 'f', issues);
    if (message === undefined) {
      expect(issues).toEqual([]);
      expect(result).not.toBeUndefined();
    } else {
      expect(result).toBeUndefined();
      expect(issues).toEqual([{ path: ['f'], code: 'constraint_violated', message }]);
    }
  });

  it('reports a conversion problem as such, not as a constraint', () => {
    const issues: Issue[] = [];
    constrained(toInteger, 'INTEGER', { min: 1 }, 'E')('x', [], 'f', issues);
    expect(issues.map((issue) => issue.code)).toEqual(['conversion_failed']);
  });

  it('names the path of a nested value', () => {
    const issues: Issue[] = [];
    constrained(toInteger, 'INTEGER', { min: 1 }, 'BOOK')(0, ['dimensions'], 'width', issues);
    expect(issues[0]?.message).toBe(
      'Field dimensions.width of Entity BOOK must be at least 1, not 0',
    );
  });
});

describe('compareDecimal', () => {
  it.each([
    ['0.3', '0.30000000000000004', -1],
    ['1', '0.999', 1],
    ['-1', '-0.5', -1],
    ['-2', '1', -1],
    ['12.5', '12.5', 0],
    ['100', '99', 1],
    ['0', '-0.1', 1],
  ])('%s against %s', (a, b, sign) => {
    expect(Math.sign(compareDecimal(a, b))).toBe(sign);
  });
});

describe('compareDecimal against exact integer arithmetic', () => {
  /** A canonical decimal text from an integer count of 10^-scale units. */
  function canonical(units: bigint, scale: number): string {
    const negative = units < 0n;
    const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
    const whole = digits.slice(0, digits.length - scale);
    const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
    const text = fraction === '' ? whole : `${whole}.${fraction}`;
    return negative && text !== '0' ? `-${text}` : text;
  }

  it('orders random values of mixed lengths and scales as their exact values', () => {
    let seed = 7;
    const next = (limit: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % limit;
    };
    for (let i = 0; i < 2000; i++) {
      const scaleA = next(4);
      const scaleB = next(4);
      const a = BigInt(next(200_001) - 100_000) * 10n ** BigInt(next(3));
      const b = BigInt(next(200_001) - 100_000) * 10n ** BigInt(next(3));
      // Compare a·10^-scaleA with b·10^-scaleB exactly at a common scale.
      const exact = a * 10n ** BigInt(4 - scaleA) - b * 10n ** BigInt(4 - scaleB);
      const expected = exact === 0n ? 0 : exact < 0n ? -1 : 1;
      const textA = canonical(a, scaleA);
      const textB = canonical(b, scaleB);
      expect(Math.sign(compareDecimal(textA, textB)), `${textA} against ${textB}`).toBe(expected);
    }
  });
});
