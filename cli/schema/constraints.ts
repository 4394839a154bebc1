/**
 * The constraint keys of a field or array element (SPEC §16): `min`/`max`, `minLength`/
 * `maxLength`/`pattern` and `minItems`/`maxItems`. Each must fit the type, hold a value of the
 * right kind (a value of the field's type for `min`/`max`, in canonical form; a count for the
 * others), keep its lower limit at most its upper one, and a pattern must compile.
 */
import {
  compareValues,
  constraintKeysOf,
  CONSTRAINT_KEYS,
  type FieldConstraints,
  toDate,
  toDateTime,
  toDecimal,
  toDouble,
  toInteger,
} from '@entity-gen/runtime/convert';
import type { FieldType } from './types.js';
import type { MapEntry, MapNode } from './node.js';
import type { Reporter } from './report.js';
import { entryOf } from './values.js';

type Issues = Parameters<typeof toInteger>[3];

const RANGE_CONVERTERS: Partial<
  Record<FieldType, (value: unknown, issues: Issues) => number | string | undefined>
> = {
  INTEGER: (value, issues) =>
    typeof value === 'number' ? toInteger(value, [], 'x', issues) : undefined,
  DOUBLE: (value, issues) =>
    typeof value === 'number' ? toDouble(value, [], 'x', issues) : undefined,
  DECIMAL: (value, issues) => toDecimal(value, [], 'x', issues),
  DATE: (value, issues) => (typeof value === 'string' ? toDate(value, [], 'x', issues) : undefined),
  DATE_TIME: (value, issues) =>
    typeof value === 'string' ? toDateTime(value, [], 'x', issues) : undefined,
};

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Reads and checks the constraint keys of `map`, a field or element of type `type`. */
export function readConstraints(
  map: MapNode,
  type: FieldType,
  label: string,
  reporter: Reporter,
): FieldConstraints {
  const result: Mutable<FieldConstraints> = {};
  const fitting = constraintKeysOf(type);
  const entries = new Map<string, MapEntry>();
  for (const key of CONSTRAINT_KEYS) {
    const entry = entryOf(map, key);
    if (entry === undefined) continue;
    if (!fitting.includes(key)) {
      const fits =
        key === 'min' || key === 'max'
          ? 'INTEGER, DOUBLE, DECIMAL, DATE and DATE_TIME'
          : key === 'minItems' || key === 'maxItems'
            ? 'ARRAY'
            : 'STRING';
      reporter.report(
        entry.keyPosition,
        'INVALID_CONSTRAINT',
        `'${key}' of ${label} does not fit type ${type}: it is for ${fits}`,
      );
      continue;
    }
    entries.set(key, entry);
    const node = entry.value;
    const written = node.kind === 'scalar' ? node.value : undefined;
    if (key === 'min' || key === 'max') {
      const issues: Issues = [];
      const converted = RANGE_CONVERTERS[type]?.(written, issues);
      if (converted === undefined || issues.length > 0) {
        const expected =
          type === 'DATE'
            ? 'a date "YYYY-MM-DD"'
            : type === 'DATE_TIME'
              ? 'an ISO 8601 date-time'
              : type === 'INTEGER'
                ? 'an integer'
                : type === 'DECIMAL'
                  ? 'a number or a decimal string'
                  : 'a number';
        reporter.report(
          node.position,
          'INVALID_CONSTRAINT',
          `'${key}' of ${label} must be ${expected}, not ${JSON.stringify(written ?? null)}`,
        );
        continue;
      }
      result[key] = converted;
    } else if (key === 'pattern') {
      if (typeof written !== 'string') continue; // the structure check reports it
      try {
        new RegExp(written, 'u');
        result.pattern = written;
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        reporter.report(
          node.position,
          'INVALID_CONSTRAINT',
          `'pattern' of ${label} is not a valid ECMAScript regular expression: ${why}`,
        );
      }
    } else {
      if (typeof written !== 'number') continue; // the structure check reports it
      if (!Number.isSafeInteger(written) || written < 0) {
        reporter.report(
          node.position,
          'INVALID_CONSTRAINT',
          `'${key}' of ${label} must be a whole number of at least 0, not ${written}`,
        );
        continue;
      }
      result[key] = written;
    }
  }
  checkOrder(result, 'min', 'max', type, label, entries, reporter);
  checkOrder(result, 'minLength', 'maxLength', type, label, entries, reporter);
  checkOrder(result, 'minItems', 'maxItems', type, label, entries, reporter);
  return result;
}

function checkOrder(
  result: Mutable<FieldConstraints>,
  low: 'min' | 'minLength' | 'minItems',
  high: 'max' | 'maxLength' | 'maxItems',
  type: FieldType,
  label: string,
  entries: ReadonlyMap<string, MapEntry>,
  reporter: Reporter,
): void {
  const lower = result[low];
  const upper = result[high];
  const entry = entries.get(low);
  if (lower === undefined || upper === undefined || entry === undefined) return;
  const above =
    low === 'min' ? compareValues(type, lower, upper) > 0 : Number(lower) > Number(upper);
  if (!above) return;
  reporter.report(
    entry.value.position,
    'INVALID_CONSTRAINT',
    `'${low}' of ${label} (${JSON.stringify(lower)}) is above '${high}' (${JSON.stringify(upper)}): no value could be stored`,
  );
  delete result[low];
  delete result[high];
}
