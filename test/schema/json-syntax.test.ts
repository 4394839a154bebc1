import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { findJsonSyntaxError } from '../../cli/schema/json-syntax.js';
import { loadSchemas } from '../../cli/schema/index.js';

/** The PARSE_ERROR lines a `.json` file with `text` gives. */
function jsonErrors(text: string): string[] {
  return loadSchemas([{ file: 's.json', text }]).diagnostics.map(formatDiagnostic);
}

describe('JSON syntax errors', () => {
  it.each<[string, { given: string; want: string }]>([
    [
      'trailing comma in an object',
      {
        given: '{"a": 1,\n}',
        want: "s.json:1:8: Invalid JSON: trailing comma before '}' is not allowed in JSON (PARSE_ERROR)",
      },
    ],
    [
      'trailing comma in an array',
      {
        given: '[1, 2, ]',
        want: "s.json:1:6: Invalid JSON: trailing comma before ']' is not allowed in JSON (PARSE_ERROR)",
      },
    ],
    [
      'missing comma',
      {
        given: '{\n  "a": 1\n  "b": 2\n}',
        want: "s.json:3:3: Invalid JSON: expected ',' or '}' but found '\"' (PARSE_ERROR)",
      },
    ],
    [
      'unquoted key',
      {
        given: '{type: "ENTITY"}',
        want: "s.json:1:2: Invalid JSON: expected a property name in double quotes but found 't' (PARSE_ERROR)",
      },
    ],
    [
      'single quotes',
      {
        given: "{'a': 1}",
        want: "s.json:1:2: Invalid JSON: expected a property name in double quotes but found ''' (PARSE_ERROR)",
      },
    ],
    [
      'missing colon',
      {
        given: '{"a" 1}',
        want: "s.json:1:6: Invalid JSON: expected ':' after the property name but found '1' (PARSE_ERROR)",
      },
    ],
    [
      'unterminated string',
      {
        given: '{"a": "abc\n}',
        want: 's.json:1:7: Invalid JSON: unterminated string (PARSE_ERROR)',
      },
    ],
    [
      'bad escape',
      {
        given: '["a\\x"]',
        want: "s.json:1:4: Invalid JSON: invalid escape sequence '\\x' in string (PARSE_ERROR)",
      },
    ],
    [
      'tab inside a string',
      {
        given: '["a\tb"]',
        want: 's.json:1:4: Invalid JSON: control character in string; write it as an escape such as \\t (PARSE_ERROR)',
      },
    ],
    [
      'comment',
      {
        given: '// schema\n{}',
        want: 's.json:1:1: Invalid JSON: comments are not allowed in JSON (PARSE_ERROR)',
      },
    ],
    [
      'leading zero',
      { given: '[01]', want: 's.json:1:2: Invalid JSON: invalid number (PARSE_ERROR)' },
    ],
    [
      'bare word',
      {
        given: '[yes]',
        want: "s.json:1:2: Invalid JSON: expected a value but found 'y' (PARSE_ERROR)",
      },
    ],
    [
      'two values',
      {
        given: '{}\n{}',
        want: "s.json:2:1: Invalid JSON: unexpected '{' after the end of the JSON value (PARSE_ERROR)",
      },
    ],
    [
      'unexpected end',
      {
        given: '{"a": [1,',
        want: 's.json:1:10: Invalid JSON: expected a value but found the end of the file (PARSE_ERROR)',
      },
    ],
    [
      'empty file',
      {
        given: ' \n',
        want: 's.json:2:1: Invalid JSON: the file is empty; expected a JSON object or array (PARSE_ERROR)',
      },
    ],
    [
      'CRLF line ends',
      {
        given: '{\r\n  "a": 1,\r\n}',
        want: "s.json:2:9: Invalid JSON: trailing comma before '}' is not allowed in JSON (PARSE_ERROR)",
      },
    ],
    [
      'position after a byte-order mark',
      {
        given: '\uFEFF[1,]',
        want: "s.json:1:3: Invalid JSON: trailing comma before ']' is not allowed in JSON (PARSE_ERROR)",
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(jsonErrors(given)).toEqual([want]);
  });

  it.each<[string, string]>([
    ['nested values', '{"a": [1, -2.5e3, true, false, null, {"b": "\\u00e9\\n"}], "c": {}}'],
    ['whitespace everywhere', ' \t\r\n[ 1 , 2 ]\n'],
    ['zero and exponent', '[0, 0.5, 1E+2, -0]'],
  ])('accepts %s', (_name, text) => {
    expect(findJsonSyntaxError(text)).toBeUndefined();
  });

  it('refuses absurd nesting without overflowing the stack', () => {
    const error = findJsonSyntaxError('['.repeat(100_000));
    expect(error?.message).toMatch(/nesting deeper than/);
  });
});
