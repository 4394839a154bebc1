/**
 * The `filter=` expression parser (runtime/src/listing/expression.ts, SPEC §17), table-driven:
 * what each text parses to, and the 400 reason (with its column) of each syntax error and bound.
 * Compilation against a schema and the results on both drivers are in
 * test/e2e/listing-expressions.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { isHttpError } from '../../runtime/src/errors.js';
import {
  MAX_EXPRESSION_CONDITIONS,
  MAX_EXPRESSION_DEPTH,
  MAX_EXPRESSION_LENGTH,
  parseExpression,
  type ExpressionNode,
} from '../../runtime/src/listing/expression.js';

/** The parsed tree without columns, in a compact form: easier to read in a table. */
function shape(node: ExpressionNode): unknown {
  switch (node.type) {
    case 'and':
    case 'or':
      return { [node.type]: node.operands.map(shape) };
    case 'not':
      return { not: shape(node.operand) };
    case 'compare':
      return [node.path.join('.'), node.operator, `${node.value.kind}:${node.value.text}`];
    case 'in':
      return [
        node.path.join('.'),
        node.negated ? 'not in' : 'in',
        node.values.map((value) => `${value.kind}:${value.text}`),
      ];
    case 'null':
      return [node.path.join('.'), node.negated ? 'is not null' : 'is null'];
  }
}

const PARSES: readonly (readonly [string, unknown])[] = [
  ['qty = 5', ['qty', '=', 'number:5']],
  ['qty=5', ['qty', '=', 'number:5']],
  ['price >= -10.50', ['price', '>=', 'number:-10.50']],
  ['score < 1e3', ['score', '<', 'number:1e3']],
  ['name != "x"', ['name', '!=', 'string:x']],
  ['name ~ "ham"', ['name', '~', 'string:ham']],
  ['name !~ "ham"', ['name', '!~', 'string:ham']],
  ['name ~* "HAM"', ['name', '~*', 'string:HAM']],
  ['name !~* "HAM"', ['name', '!~*', 'string:HAM']],
  ['name!~*"x"', ['name', '!~*', 'string:x']],
  ['name <= "b" ', ['name', '<=', 'string:b']],
  ['name > "a"', ['name', '>', 'string:a']],
  ['note = "say \\"hi\\" \\\\ ok"', ['note', '=', 'string:say "hi" \\ ok']],
  ['note = ""', ['note', '=', 'string:']],
  ['active = true', ['active', '=', 'boolean:true']],
  ['active = FALSE', ['active', '=', 'boolean:false']],
  ['address.geo.lat > 1', ['address.geo.lat', '>', 'number:1']],
  ['status in ("NEW", "Open")', ['status', 'in', ['string:NEW', 'string:Open']]],
  ['qty NOT IN (1,2 , 3)', ['qty', 'not in', ['number:1', 'number:2', 'number:3']]],
  ['note is null', ['note', 'is null']],
  ['note IS NOT NULL', ['note', 'is not null']],
  [
    'a = 1 and b = 2 or c = 3',
    {
      or: [
        {
          and: [
            ['a', '=', 'number:1'],
            ['b', '=', 'number:2'],
          ],
        },
        ['c', '=', 'number:3'],
      ],
    },
  ],
  [
    'a = 1 or b = 2 and c = 3',
    {
      or: [
        ['a', '=', 'number:1'],
        {
          and: [
            ['b', '=', 'number:2'],
            ['c', '=', 'number:3'],
          ],
        },
      ],
    },
  ],
  [
    '(a = 1 or b = 2) and c = 3',
    {
      and: [
        {
          or: [
            ['a', '=', 'number:1'],
            ['b', '=', 'number:2'],
          ],
        },
        ['c', '=', 'number:3'],
      ],
    },
  ],
  ['not a = 1 and b = 2', { and: [{ not: ['a', '=', 'number:1'] }, ['b', '=', 'number:2']] }],
  [
    'not (a = 1 or b = 2)',
    {
      not: {
        or: [
          ['a', '=', 'number:1'],
          ['b', '=', 'number:2'],
        ],
      },
    },
  ],
  ['NOT not a = 1', { not: { not: ['a', '=', 'number:1'] } }],
  [
    'a = 1 AND b = 2 AND c = 3',
    {
      and: [
        ['a', '=', 'number:1'],
        ['b', '=', 'number:2'],
        ['c', '=', 'number:3'],
      ],
    },
  ],
  ['((a = 1))', ['a', '=', 'number:1']],
];

describe('parseExpression', () => {
  it.each(PARSES)('%s', (text, expected) => {
    expect(shape(parseExpression(text))).toEqual(expected);
  });

  it('records the column of each comparison and value', () => {
    const node = parseExpression('a = 1 or  bb ~ "x"');
    expect(node.type).toBe('or');
    if (node.type !== 'or') return;
    const second = node.operands[1]!;
    expect(second).toMatchObject({ type: 'compare', column: 11, value: { column: 16 } });
  });
});

/** [expression, the exact 400 reason]. */
const ERRORS: readonly (readonly [string, string])[] = [
  ['name = "Hammer" and price >', "filter: expected a value after '>' at column 28"],
  ['qty >= ', "filter: expected a value after '>=' at column 8"],
  ['qty = abc', "filter: expected a value after '=', not 'abc' at column 7"],
  [
    'qty 5',
    "filter: expected an operator (=, !=, >, >=, <, <=, ~, !~, ~*, !~*, in, is null) after 'qty', not the number 5 at column 5",
  ],
  ['= 5', "filter: expected a field name, not '=' at column 1"],
  ['and = 5', "filter: expected a field name, not 'and' at column 1"],
  [
    '(qty = 5',
    "filter: expected ')' to close the '(' of column 1, not the end of the expression at column 9",
  ],
  ['qty = 5)', "filter: unexpected ')' without a matching '(' at column 8"],
  ['qty = 5 name = "x"', "filter: expected 'and', 'or' or the end, not 'name' at column 9"],
  ['name = "abc', 'filter: unterminated string starting at column 8'],
  [
    'name = "a\\nb"',
    'filter: unknown escape in a string (only \\" and \\\\ are escapes) at column 10',
  ],
  ['name = #', 'filter: unexpected character "#" at column 8'],
  ['qty in 1', "filter: expected '(' after 'in', not the number 1 at column 8"],
  [
    'qty in (1 2)',
    "filter: expected ',' or ')' in the list of 'in', not the number 2 at column 11",
  ],
  ['qty in ()', "filter: expected a value after '(', not ')' at column 9"],
  ['qty is 5', "filter: expected 'null' after 'is', not the number 5 at column 8"],
  ['qty not 5', "filter: expected 'in' after 'qty not', not the number 5 at column 9"],
  ['address. = 1', "filter: expected a field name after '.' of column 8, not '=' at column 10"],
  ['not', 'filter: expected a field name, not the end of the expression at column 4'],
  ['qty = 1 or', 'filter: expected a field name, not the end of the expression at column 11'],
  ['   ', 'filter: the expression is empty'],
];

function reasonOf(text: string): string {
  try {
    parseExpression(text);
  } catch (error) {
    expect(isHttpError(error) && error.status === 400, String(error)).toBe(true);
    return (error as { reason: string }).reason;
  }
  throw new Error(`${text} parsed`);
}

describe('syntax errors', () => {
  it.each(ERRORS)('%s', (text, reason) => {
    expect(reasonOf(text)).toBe(reason);
  });
});

describe('bounds', () => {
  it('refuses an expression longer than the limit', () => {
    const text = `name = "${'x'.repeat(MAX_EXPRESSION_LENGTH)}"`;
    expect(reasonOf(text)).toBe(
      `filter: the expression is ${text.length} characters long, more than the ${MAX_EXPRESSION_LENGTH} allowed`,
    );
  });

  it('accepts nesting up to the limit and refuses one level more', () => {
    const nested = (depth: number): string => `${'('.repeat(depth)}a = 1${')'.repeat(depth)}`;
    expect(() => parseExpression(nested(MAX_EXPRESSION_DEPTH))).not.toThrow();
    expect(reasonOf(nested(MAX_EXPRESSION_DEPTH + 1))).toBe(
      `filter: the expression is nested more than ${MAX_EXPRESSION_DEPTH} deep at column ${MAX_EXPRESSION_DEPTH + 1}`,
    );
    expect(reasonOf(`${'not '.repeat(MAX_EXPRESSION_DEPTH + 1)}a = 1`)).toContain(
      'nested more than',
    );
  });

  it('counts the conditions, the values of an in list included', () => {
    const many = (n: number): string => Array.from({ length: n }, () => 'a = 1').join(' or ');
    expect(() => parseExpression(many(MAX_EXPRESSION_CONDITIONS))).not.toThrow();
    expect(reasonOf(many(MAX_EXPRESSION_CONDITIONS + 1))).toContain(
      `more than ${MAX_EXPRESSION_CONDITIONS} conditions`,
    );
    const list = Array.from({ length: MAX_EXPRESSION_CONDITIONS + 1 }, (_, i) => i).join(',');
    expect(reasonOf(`a in (${list})`)).toContain('conditions');
  });

  it('refuses U+0000, which stored values cannot hold', () => {
    expect(reasonOf('name = "a\u0000"')).toContain('U+0000');
  });
});
