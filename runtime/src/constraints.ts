/**
 * Field constraints (SPEC §16): `min`/`max` (INTEGER, DOUBLE, DECIMAL compared exactly, DATE,
 * DATE_TIME), `minLength`/`maxLength`/`pattern` (STRING) and `minItems`/`maxItems` (ARRAY). The
 * generated validator wraps a field's converter in `constrained(...)`, so every write path that
 * reads a record body (POST one and list, PUT, PATCH, upsert, batches) checks them.
 */
import { formatPath, type Issue, type IssuePath } from './issues.js';

/** The constraint keys a field or array element may declare, in canonical form. */
export interface FieldConstraints {
  /** INTEGER/DOUBLE: a number; DECIMAL: the canonical decimal text; DATE/DATE_TIME: canonical text. */
  readonly min?: number | string;
  readonly max?: number | string;
  /** STRING: length in Unicode code points (as JSON Schema counts). */
  readonly minLength?: number;
  readonly maxLength?: number;
  /** STRING: an ECMAScript regular expression (with the `u` flag), anchored only if it says so. */
  readonly pattern?: string;
  /** ARRAY: number of elements. */
  readonly minItems?: number;
  readonly maxItems?: number;
}

/** The constraint keys, in the order messages and documents list them. */
export const CONSTRAINT_KEYS = [
  'min',
  'max',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
] as const;

/** The types that may carry `min`/`max`. */
export const RANGE_TYPES: readonly string[] = ['INTEGER', 'DOUBLE', 'DECIMAL', 'DATE', 'DATE_TIME'];

/** The constraint keys that fit a type. */
export function constraintKeysOf(type: string): readonly (typeof CONSTRAINT_KEYS)[number][] {
  if (RANGE_TYPES.includes(type)) return ['min', 'max'];
  if (type === 'STRING') return ['minLength', 'maxLength', 'pattern'];
  if (type === 'ARRAY') return ['minItems', 'maxItems'];
  return [];
}

/**
 * Compares two canonical decimal texts (`-?(0|[1-9]\d*)(\.\d*[1-9])?`) exactly: negative,
 * zero or positive as `a` is below, equal to or above `b`.
 */
export function compareDecimal(a: string, b: string): number {
  const negativeA = a.startsWith('-');
  const negativeB = b.startsWith('-');
  if (negativeA !== negativeB) return negativeA ? -1 : 1;
  const magnitude = compareMagnitude(negativeA ? a.slice(1) : a, negativeB ? b.slice(1) : b);
  return negativeA ? -magnitude : magnitude;
}

function compareMagnitude(a: string, b: string): number {
  // Character by character, without splitting or padding (no garbage on the write path).
  const pointA = a.indexOf('.');
  const pointB = b.indexOf('.');
  const intA = pointA < 0 ? a.length : pointA;
  const intB = pointB < 0 ? b.length : pointB;
  if (intA !== intB) return intA < intB ? -1 : 1;
  for (let i = 0; i < intA; i++) {
    const difference = a.charCodeAt(i) - b.charCodeAt(i);
    if (difference !== 0) return difference < 0 ? -1 : 1;
  }
  const fracA = pointA < 0 ? 0 : a.length - pointA - 1;
  const fracB = pointB < 0 ? 0 : b.length - pointB - 1;
  const width = Math.max(fracA, fracB);
  for (let i = 0; i < width; i++) {
    const digitA = i < fracA ? a.charCodeAt(pointA + 1 + i) : 48;
    const digitB = i < fracB ? b.charCodeAt(pointB + 1 + i) : 48;
    if (digitA !== digitB) return digitA < digitB ? -1 : 1;
  }
  return 0;
}

/** Compares two canonical values of a range type; negative, zero or positive. */
export function compareValues(type: string, a: number | string, b: number | string): number {
  if (type === 'DECIMAL') return compareDecimal(String(a), String(b));
  if (type === 'DATE' || type === 'DATE_TIME') {
    const timeA = Date.parse(String(a));
    const timeB = Date.parse(String(b));
    return timeA === timeB ? 0 : timeA < timeB ? -1 : 1;
  }
  const numberA = Number(a);
  const numberB = Number(b);
  return numberA === numberB ? 0 : numberA < numberB ? -1 : 1;
}

/** Length in code points; a string's UTF-16 length is an upper bound, so short strings skip the count. */
export function codePointLength(text: string, atMost: number): number {
  if (text.length <= atMost) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

type Converter<T> = (
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
) => T | undefined;

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * Checks a converted value against `rules`; pushes one `constraint_violated` issue naming the
 * field, the entity and the limit (`Field pages of Entity BOOK must be at least 1, not 0`) for
 * the first rule it breaks. Returns whether the value passed.
 */
export function checkConstraints(
  value: unknown,
  type: string,
  rules: FieldConstraints,
  entity: string,
  path: IssuePath,
  issues: Issue[],
): boolean {
  const broken = brokenRule(value, type, rules);
  if (broken === undefined) return true;
  const message = `Field ${formatPath(path)} of Entity ${entity} ${broken}`;
  issues.push({ path, code: 'constraint_violated', message });
  return false;
}

/**
 * What a value breaks, as the end of a sentence (`must be at least 1, not 0`), or undefined when
 * it meets every rule. No text is built for a value that passes (most do).
 */
function brokenRule(value: unknown, type: string, rules: FieldConstraints): string | undefined {
  if (typeof value === 'number' || (typeof value === 'string' && type !== 'STRING')) {
    if (rules.min !== undefined && compareValues(type, value, rules.min) < 0) {
      return `must be at least ${shown(rules.min)}, not ${shown(value)}`;
    }
    if (rules.max !== undefined && compareValues(type, value, rules.max) > 0) {
      return `must be at most ${shown(rules.max)}, not ${shown(value)}`;
    }
    return undefined;
  }
  if (typeof value === 'string') {
    const limit = Math.max(rules.minLength ?? 0, rules.maxLength ?? 0);
    const length =
      rules.minLength === undefined && rules.maxLength === undefined
        ? 0
        : codePointLength(value, limit);
    if (rules.minLength !== undefined && length < rules.minLength) {
      return `must be at least ${plural(rules.minLength, 'character')} long, not ${length}`;
    }
    if (rules.maxLength !== undefined && length > rules.maxLength) {
      return `must be at most ${plural(rules.maxLength, 'character')} long, not ${length}`;
    }
    if (rules.pattern !== undefined && !patternOf(rules.pattern).test(value)) {
      return `must match the pattern ${rules.pattern}, not ${shownText(value)}`;
    }
    return undefined;
  }
  if (Array.isArray(value)) {
    if (rules.minItems !== undefined && value.length < rules.minItems) {
      return `must have at least ${plural(rules.minItems, 'item')}, not ${value.length}`;
    }
    if (rules.maxItems !== undefined && value.length > rules.maxItems) {
      return `must have at most ${plural(rules.maxItems, 'item')}, not ${value.length}`;
    }
  }
  return undefined;
}

/** A long value is cut in the message, as conversion messages cut theirs. */
function shownText(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

const compiled = new Map<string, RegExp>();

function patternOf(source: string): RegExp {
  let regex = compiled.get(source);
  if (regex === undefined) {
    regex = new RegExp(source, 'u');
    compiled.set(source, regex);
  }
  return regex;
}

/**
 * Wraps a converter with the constraints of a field or array element: the value is converted
 * first (a conversion problem is reported as such), then checked. `entity` names the entity in
 * messages. Used by generated validators.
 */
export function constrained<T>(
  convert: Converter<T>,
  type: string,
  rules: FieldConstraints,
  entity: string,
): Converter<T> {
  const passes = passCheckOf(type, rules);
  return (value, parent, key, issues) => {
    const converted = convert(value, parent, key, issues);
    if (converted === undefined) return undefined;
    // The path and the message are built only for a value that breaks a rule.
    if (passes(converted)) return converted;
    checkConstraints(converted, type, rules, entity, [...parent, key], issues);
    return undefined;
  };
}

/**
 * A test of a converted value against `rules`, specialised once per field: true when the value
 * meets every rule. It agrees with `brokenRule` (which it falls back to for the uncommon cases)
 * and builds nothing for a passing value.
 */
function passCheckOf(type: string, rules: FieldConstraints): (value: unknown) => boolean {
  const general = (value: unknown): boolean => brokenRule(value, type, rules) === undefined;
  const { min, max } = rules;
  if (type === 'INTEGER' || type === 'DOUBLE') {
    const low = min === undefined ? -Infinity : Number(min);
    const high = max === undefined ? Infinity : Number(max);
    return (value) => (typeof value === 'number' ? value >= low && value <= high : general(value));
  }
  if (type === 'DECIMAL') {
    const low = min === undefined ? undefined : String(min);
    const high = max === undefined ? undefined : String(max);
    return (value) =>
      typeof value === 'string'
        ? (low === undefined || compareDecimal(value, low) >= 0) &&
          (high === undefined || compareDecimal(value, high) <= 0)
        : general(value);
  }
  if (type === 'STRING' && rules.minLength === undefined && rules.maxLength === undefined) {
    if (rules.pattern === undefined) return () => true;
    const regex = patternOf(rules.pattern);
    return (value) => (typeof value === 'string' ? regex.test(value) : general(value));
  }
  if (rules.pattern !== undefined) patternOf(rules.pattern); // compile once, up front
  return general;
}
