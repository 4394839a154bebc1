/**
 * The table both `index: ci` suites (SQLite and PostgreSQL) read from: PERSON with a
 * case-insensitive index on `name`, the same table without it as the reference, and its rows
 * (names in mixed case, beyond ASCII, and with the characters LIKE treats specially).
 */
import type { FilterCondition, ListQuery, TableDescriptor } from '../../runtime/src/driver.js';
import { foldCase } from '../../runtime/src/fold.js';
import { tableOf, type EntitySchema } from '../../runtime/src/schema.js';

export const entity = (index?: 'ci'): EntitySchema => ({
  name: 'PERSON',
  lk: ['code'],
  fields: [
    { name: 'code', type: 'STRING', required: true },
    { name: 'name', type: 'STRING', ...(index === undefined ? {} : { index }) },
  ],
});

export const INDEXED = tableOf(entity('ci'), new Set());
/** The same table under another name, without the index: the reference answers. */
export const PLAIN: TableDescriptor = { ...tableOf(entity(), new Set()), table: 'person_plain' };

const STEMS = [
  'Émile',
  'ÉMILE',
  'émile',
  'Zoë',
  'ZOË',
  'Straße',
  'ΣΟΦΊΑ',
  'σοφία',
  '50%_off',
  '50x_off',
  'a!b',
];

export const ROWS = 20_000;
export const code = (i: number): string => `p${String(i).padStart(6, '0')}`;
export const record = (i: number): Record<string, unknown> => ({
  code: code(i),
  // Mostly distinct names (so an index is worth reading), some of them sharing a folded stem.
  ...(i % 17 === 0 ? {} : { name: i % 10 === 0 ? STEMS[(i / 10) % STEMS.length] : `Name ${i}` }),
});

export const condition = (
  operator: FilterCondition['operator'],
  value: string,
): ListQuery['filters'] => [{ anyOf: [{ path: ['name'], operator, kind: 'text', value }] }];

export const query = (operator: FilterCondition['operator'], value: string): ListQuery => ({
  filters: condition(operator, value),
  orderBy: [],
  limit: 1_000,
});

/** The codes of the rows a case-insensitive filter must find, computed here in JavaScript. */
export function expectedCodes(operator: FilterCondition['operator'], value: string): string[] {
  const needle = foldCase(value);
  const matches = (name: string): boolean => {
    const folded = foldCase(name);
    if (operator === 'IEQUALS') return folded === needle;
    if (operator === 'ISTARTS_WITH') return folded.startsWith(needle);
    if (operator === 'IENDS_WITH') return folded.endsWith(needle);
    return folded.includes(needle);
  };
  return Array.from({ length: ROWS }, (_, i) => record(i))
    .filter((row) => typeof row['name'] === 'string' && matches(row['name']))
    .map((row) => row['code'] as string);
}
