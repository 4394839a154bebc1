/**
 * Value converters used by the generated per-entity validators (SPEC §3).
 *
 * Every converter has the {@link Converter} shape `(value, parent, key, issues)`. Generated code
 * calls a converter only for a present value (not `undefined`/`null`: for a field, `null` means
 * absent and is handled by the caller), except for the elements of arrays and dictionaries, which
 * are passed as they are; every converter but {@link toAny} fails on `null`. On success a converter
 * returns the canonical value and allocates nothing but that value; on failure it pushes exactly
 * one issue at `[...parent, key]` (the path is built only then) and returns `undefined`:
 *
 *     Unable to convert field <formatPath(path)> - <TYPE> - for value <preview>
 *
 * where `<preview>` is `JSON.stringify(value)` (or `String(value)` when that cannot render it),
 * cut to 80 characters with `…` appended when cut (a cut never splits a surrogate pair, so it may
 * keep 79 characters).
 *
 * Decisions:
 * - ENUM and SELECT converters are made by factories, once per field at module load of the
 *   generated code: {@link enumConverter} (case-insensitive; an exact match wins, otherwise the
 *   first schema value equal ignoring case; returns the schema's spelling) and
 *   {@link selectConverter} (case-sensitive, returned as given).
 * - ENTITY_REF: the converter of the target entity's key type wrapped by {@link refConverter}: the
 *   runtime's `toRefText` (a text key, or the record id of a composite key) and `toRefInteger`
 *   (one INTEGER key field), which generated code calls. The value is converted exactly like the
 *   key, but a failure is reported with the type label `ENTITY_REF`.
 * - INTEGER, DOUBLE: `-0` is returned as `0`. Strings are accepted only in the strict forms
 *   documented on each converter (no whitespace, no hex, no `Infinity`/`NaN`, no empty string).
 * - DECIMAL returns the canonical exact decimal string; values whose plain expansion is longer
 *   than {@link DECIMAL_MAX_DIGITS} digits are rejected.
 * - DATE: years 0001–9999. DATE_TIME: parsed by a strict scanner (no `Date.parse`); input years
 *   0000–9999 are parsed, but the UTC result must lie in 0001–9999; a time is required (a bare
 *   date is rejected); seconds are optional, a fraction needs seconds and uses `.` (not `,`);
 *   offsets are ±HH:MM or ±HHMM with HH 00–23 (not ±HH); a leap second (`:60`) is rejected.
 * - B64_IMAGE: the whole `data:image/<subtype>;base64,` prefix is matched case-insensitively
 *   (MIME types and URL schemes are); the data is checked with a regex (standard alphabet, `=`
 *   padding only at the end, length a multiple of 4, non-empty), never decoded. Non-zero unused
 *   bits before the padding are tolerated, as every common decoder does.
 * - GEOHASH_LOCATION: lat and lng must be JSON numbers (numeric strings are rejected). Any key
 *   other than lat, lng, geohash makes the whole value fail with one `conversion_failed` issue
 *   labelled GEOHASH_LOCATION (no `unknown_field` issues for inner keys). A missing or null
 *   geohash is computed at precision 12; a given one must be 1–12 geohash characters (either case)
 *   whose closed cell contains the point, and is returned lower-cased (its precision is kept).
 * - ARRAY/DICTIONARY: every failing element is reported, and the container then converts to
 *   `undefined`. Dictionary keys `__proto__`, `constructor` and `prototype` are rejected with a
 *   `conversion_failed` issue on that key's path (message `... - DICTIONARY - reserved key`).
 * - OBJECT bodies ({@link toObjectBody}, {@link dictionaryOf}) must be plain objects: prototype
 *   `Object.prototype` or `null` (as `JSON.parse` produces); arrays, `Date`s, `Map`s etc. fail.
 * - STRING rejects text containing U+0000 (PostgreSQL cannot store it, so no driver accepts it).
 * - ANY returns the value as given (including `null` inside arrays); only `undefined` fails. Its
 *   objects may hold own `__proto__` keys (as `JSON.parse` makes them): harmless data properties,
 *   as long as nothing copies them with `Object.assign` or `obj[key] = ...`.
 * - STRING accepts `""`; rejecting empty strings for required fields is the caller's job.
 * - Factories ({@link arrayOf}, {@link dictionaryOf}, {@link enumConverter},
 *   {@link selectConverter}, {@link refConverter}) take an optional type label for messages.
 *   Containers build their own path once per non-empty container and pass it as `parent`.
 */
import { quoteInput } from './errors.js';
import { formatPath, type Issue, type IssuePath } from './issues.js';
import { encodeGeohash, geohashContains, isGeohash } from './geohash.js';

/**
 * Converts one value of a request body. Called only for values that are present (not `undefined`
 * and not `null`); returns the canonical value, or `undefined` after pushing an issue at
 * `[...parent, key]`.
 */
export type Converter<T> = (
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
) => T | undefined;

// ---------------------------------------------------------------------------------------------
// Issues

/** Longest value preview in a conversion message, before the `…`. */
export const PREVIEW_MAX_LENGTH = 80;

/** Dictionary keys that could reach an object's prototype; never accepted. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** The value as shown in a conversion message: JSON, cut to 80 characters plus `…`. */
export function previewValue(value: unknown): string {
  let text: string | undefined;
  try {
    // A long string is previewed from its start only; the first 80 characters of the JSON of
    // the first 100 characters equal those of the whole string's JSON.
    text = JSON.stringify(
      typeof value === 'string' && value.length > 100 ? value.slice(0, 100) : value,
    );
  } catch {
    text = undefined; // BigInt, cycles, throwing toJSON
  }
  if (text === undefined) {
    try {
      text = String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  if (text.length <= PREVIEW_MAX_LENGTH) return text;
  let end = PREVIEW_MAX_LENGTH;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // don't split a surrogate pair
  return `${text.slice(0, end)}…`;
}

/**
 * Pushes the `conversion_failed` issue for `value` at `[...parent, key]` and returns `undefined`.
 * For generated converters (OBJECT) that need to report a value of the wrong shape.
 */
export function conversionFailed(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
  typeName: string,
): undefined {
  const path = [...parent, key];
  issues.push({
    path,
    code: 'conversion_failed',
    // A DICTIONARY key in the path is the client's text.
    message: `Unable to convert field ${quoteInput(formatPath(path))} - ${typeName} - for value ${previewValue(value)}`,
  });
  return undefined;
}

/** Pushes `{code: 'required', message: 'Field <path> is required'}` at `[...parent, key]`. */
export function missing(parent: IssuePath, key: string | number, issues: Issue[]): undefined {
  const path = [...parent, key];
  issues.push({ path, code: 'required', message: `Field ${formatPath(path)} is required` });
  return undefined;
}

/**
 * Pushes `{code: 'unknown_field', message: 'Unknown field <path>'}` for every own key of `body`
 * that is not in `allowed` (including `__proto__`, `constructor`, `prototype`).
 */
export function rejectUnknownFields(
  body: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  parent: IssuePath,
  issues: Issue[],
): void {
  for (const key in body) {
    if (!Object.hasOwn(body, key) || allowed.has(key)) continue;
    const path = [...parent, key];
    issues.push({
      path,
      code: 'unknown_field',
      message: `Unknown field ${quoteInput(formatPath(path))}`,
    });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Accepts a plain object (not null, not an array, prototype `Object.prototype` or `null`) and
 * returns it as is; anything else fails with the label `typeName`.
 */
export function toObjectBody(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
  typeName = 'OBJECT',
): Record<string, unknown> | undefined {
  return isPlainObject(value) ? value : conversionFailed(value, parent, key, issues, typeName);
}

// ---------------------------------------------------------------------------------------------
// Scalars

/** STRING: strings only, returned as given. */
export function toText(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): string | undefined {
  // U+0000 is refused because PostgreSQL cannot store it; a service must behave alike on every driver.
  return typeof value === 'string' && !value.includes('\u0000')
    ? value
    : conversionFailed(value, parent, key, issues, 'STRING');
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

const INTEGER_TEXT = /^[+-]?\d+$/;

/**
 * INTEGER: a safe integer number, or a string `[+-]digits` whose value is a safe integer.
 * `42.9`, `"42.0"`, `"4e2"`, `" 42"`, `""`, booleans and objects fail.
 */
export function toInteger(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): number | undefined {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
  } else if (typeof value === 'string' && INTEGER_TEXT.test(value)) {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
  }
  return conversionFailed(value, parent, key, issues, 'INTEGER');
}

/**
 * A decimal number: optional sign, digits with an optional point (at least one digit before or
 * after it), optional exponent. Groups: sign, integer digits, fraction digits (after `1.`),
 * fraction digits (after a bare `.`), exponent.
 */
const NUMBER_TEXT = /^([+-]?)(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/;

/**
 * DOUBLE: a finite number, or a decimal string (`-1.5`, `.5`, `5.`, `1e-3`; no whitespace, hex,
 * `Infinity`, `NaN` or empty string) whose value is finite.
 */
export function toDouble(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): number | undefined {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value === 0 ? 0 : value;
  } else if (typeof value === 'string' && NUMBER_TEXT.test(value)) {
    const n = Number(value);
    if (Number.isFinite(n)) return n === 0 ? 0 : n;
  }
  return conversionFailed(value, parent, key, issues, 'DOUBLE');
}

/** Longest DECIMAL accepted, in digits of its plain (exponent-free) expansion. */
export const DECIMAL_MAX_DIGITS = 1000;

/**
 * Whether `text` is already canonical: `-?(0|[1-9]\d*)(\.\d*[1-9])?`, not `-0`, and short
 * enough to be within the digit limit. Lets the common case skip the regex and the rebuilding.
 */
function isCanonicalDecimal(text: string): boolean {
  const n = text.length;
  if (n === 0 || n > DECIMAL_MAX_DIGITS) return false;
  const intStart = text.charCodeAt(0) === 45 ? 1 : 0;
  let i = intStart;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  const intLength = i - intStart;
  if (intLength === 0 || (intLength > 1 && text.charCodeAt(intStart) === 48)) return false;
  if (i === n) return intStart === 0 || intLength > 1 || text.charCodeAt(1) !== 48; // not "-0"
  if (text.charCodeAt(i) !== 46) return false;
  const fractionStart = ++i;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  return i === n && i > fractionStart && text.charCodeAt(n - 1) !== 48;
}

/**
 * The canonical decimal string of a number text, or `undefined` when it is not one.
 *
 * Hand-written rather than decimal.js or big.js: their grammars differ (hex and `Infinity` in
 * decimal.js, no `+` in big.js) and neither bounds the expansion of `1e999999999`, so the
 * grammar and digit checks here would run first anyway and the library would only shift the
 * point; on 300 000 typical values they measured 1.6-3x slower (160 ms against 50-100 ms). The
 * SQLite sort key (sqlite/decimal-key.ts) is derived from exactly this canonical text.
 */
function canonicalDecimal(text: string): string | undefined {
  if (isCanonicalDecimal(text)) return text;
  const m = NUMBER_TEXT.exec(text);
  if (m === null) return undefined;
  const intPart = m[2] ?? '';
  const digits = intPart + (m[3] ?? m[4] ?? '');
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 48) first++;
  if (first === digits.length) return '0'; // any zero, whatever its sign or exponent
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 48) end--;
  const significant = digits.slice(first, end);
  // Digits of `significant` before the decimal point (may be <= 0 or > significant.length).
  const exponent = m[5] === undefined ? 0 : Number(m[5]);
  const point = intPart.length - first + exponent;
  const length =
    point >= significant.length
      ? point
      : point <= 0
        ? 1 - point + significant.length
        : significant.length;
  if (!(length <= DECIMAL_MAX_DIGITS)) return undefined;
  let plain: string;
  if (point >= significant.length) plain = significant + '0'.repeat(point - significant.length);
  else if (point <= 0) plain = `0.${'0'.repeat(-point)}${significant}`;
  else plain = `${significant.slice(0, point)}.${significant.slice(point)}`;
  return m[1] === '-' ? `-${plain}` : plain;
}

/**
 * DECIMAL: a finite number or a decimal string (forms as for DOUBLE), returned as the canonical
 * exact decimal string: no exponent, sign only when negative, no leading zeros, no trailing
 * fraction zeros or bare point, zero as `"0"` (`"007.50"` → `"7.5"`, `".5"` → `"0.5"`,
 * `"1.5e-7"` → `"0.00000015"`). A number is taken in its shortest JavaScript representation
 * (`0.1` → `"0.1"`); a string never goes through binary floating point.
 */
export function toDecimal(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): string | undefined {
  let result: string | undefined;
  if (typeof value === 'string') result = canonicalDecimal(value);
  else if (typeof value === 'number' && Number.isFinite(value)) {
    result = canonicalDecimal(String(value));
  }
  return result ?? conversionFailed(value, parent, key, issues, 'DECIMAL');
}

/** BOOL: `true`/`false` or exactly the strings `"true"`/`"false"`. */
export function toBoolean(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return conversionFailed(value, parent, key, issues, 'BOOL');
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Whether year/month/day (month 1–12) is a real proleptic Gregorian date. */
function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

/**
 * The value of the ASCII digits text[start, end), or -1 when any is not a digit or lies beyond
 * the end of the text.
 */
function digitsAt(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = text.charCodeAt(i) - 48; // NaN beyond the end
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** DATE: exactly `YYYY-MM-DD`, a real calendar date in years 0001–9999; returned unchanged. */
export function toDate(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): string | undefined {
  if (
    typeof value === 'string' &&
    value.length === 10 &&
    value.charCodeAt(4) === 45 &&
    value.charCodeAt(7) === 45
  ) {
    const year = digitsAt(value, 0, 4);
    const month = digitsAt(value, 5, 7);
    const day = digitsAt(value, 8, 10);
    if (year >= 1 && month >= 0 && day >= 0 && isCalendarDate(year, month, day)) return value;
  }
  return conversionFailed(value, parent, key, issues, 'DATE');
}

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (MONTH_DAYS[month - 1] as number);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function pad3(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`;
}

function pad4(n: number): string {
  return n < 10 ? `000${n}` : n < 100 ? `00${n}` : n < 1000 ? `0${n}` : `${n}`;
}

/**
 * Parses `YYYY-MM-DD(T|t| )HH:mm[:ss[.fraction]][Z|z|±HH:MM|±HHMM]` strictly (a scanner, not a
 * regex, so that the hot path allocates nothing but the result) and returns the UTC time as
 * `YYYY-MM-DDTHH:mm:ss.sssZ`, or `undefined`.
 */
function canonicalDateTime(s: string): string | undefined {
  const n = s.length;
  const sep = s.charCodeAt(10);
  if (
    n < 16 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    (sep !== 84 && sep !== 116 && sep !== 32) ||
    s.charCodeAt(13) !== 58
  ) {
    return undefined;
  }
  let year = digitsAt(s, 0, 4);
  let month = digitsAt(s, 5, 7);
  let day = digitsAt(s, 8, 10);
  const hour = digitsAt(s, 11, 13);
  const minute = digitsAt(s, 14, 16);
  if (
    year < 0 ||
    month < 0 ||
    day < 0 ||
    !isCalendarDate(year, month, day) ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59
  ) {
    return undefined;
  }
  // Whether the input is already `YYYY-MM-DDTHH:mm:ss.sssZ`.
  let canonical = sep === 84;
  let second = 0;
  let millis = 0;
  let i = 16;
  if (s.charCodeAt(i) === 58) {
    second = digitsAt(s, 17, 19);
    if (second < 0 || second > 59) return undefined;
    i = 19;
    if (s.charCodeAt(i) === 46) {
      const start = ++i;
      while (i < n && isDigit(s.charCodeAt(i))) i++;
      const length = i - start;
      if (length === 0) return undefined;
      // Truncated to milliseconds.
      millis = digitsAt(s, start, start + Math.min(length, 3));
      if (length === 1) millis *= 100;
      else if (length === 2) millis *= 10;
      else if (length > 3) canonical = false;
      if (length < 3) canonical = false;
    } else {
      canonical = false;
    }
  } else {
    canonical = false;
  }
  let offset = 0; // minutes east of UTC
  if (i === n) {
    canonical = false; // no zone: UTC
  } else {
    const zone = s.charCodeAt(i);
    if (zone === 90 || zone === 122) {
      if (i + 1 !== n) return undefined;
      if (zone === 122) canonical = false;
    } else if (zone === 43 || zone === 45) {
      const offsetHour = digitsAt(s, i + 1, i + 3);
      let j = i + 3;
      if (s.charCodeAt(j) === 58) j++;
      const offsetMinute = digitsAt(s, j, j + 2);
      if (
        j + 2 !== n ||
        offsetHour < 0 ||
        offsetHour > 23 ||
        offsetMinute < 0 ||
        offsetMinute > 59
      ) {
        return undefined;
      }
      offset = offsetHour * 60 + offsetMinute;
      if (zone === 45) offset = -offset;
      canonical = false;
    } else {
      return undefined;
    }
  }
  if (canonical) return year >= 1 ? s : undefined;
  // UTC = local time - offset; an offset below 24 hours moves the date by at most one day.
  let minutes = hour * 60 + minute - offset;
  if (minutes < 0) {
    minutes += 1440;
    if (day > 1) day--;
    else {
      if (month > 1) month--;
      else {
        month = 12;
        year--;
      }
      day = daysInMonth(year, month);
    }
  } else if (minutes >= 1440) {
    minutes -= 1440;
    if (day < daysInMonth(year, month)) day++;
    else {
      day = 1;
      if (month < 12) month++;
      else {
        month = 1;
        year++;
      }
    }
  }
  if (year < 1 || year > 9999) return undefined;
  const h = (minutes / 60) | 0;
  return `${pad4(year)}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(minutes - h * 60)}:${pad2(second)}.${pad3(millis)}Z`;
}

/**
 * DATE_TIME: ISO 8601 `YYYY-MM-DD(T|t| )HH:mm[:ss[.fraction]][Z|z|±HH:MM|±HHMM]`; without a zone
 * the time is UTC. The fraction (any length) is truncated to milliseconds. Returns
 * `YYYY-MM-DDTHH:mm:ss.sssZ` in UTC, which must fall in years 0001–9999.
 */
export function toDateTime(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): string | undefined {
  return (
    (typeof value === 'string' ? canonicalDateTime(value) : undefined) ??
    conversionFailed(value, parent, key, issues, 'DATE_TIME')
  );
}

/**
 * ENUM: returns a converter accepting a string equal to one of `values` ignoring case
 * (`toLowerCase`), returning the schema's spelling. An exact match wins; among values equal
 * ignoring case, the first listed wins.
 */
export function enumConverter<const T extends string>(
  values: readonly T[],
  typeName = 'ENUM',
): Converter<T> {
  const folded = new Map<string, T>();
  const exact = new Map<string, T>();
  for (const v of values) {
    exact.set(v, v);
    const k = v.toLowerCase();
    if (!folded.has(k)) folded.set(k, v);
  }
  return (value, parent, key, issues) => {
    if (typeof value === 'string') {
      const found = exact.get(value) ?? folded.get(value.toLowerCase());
      if (found !== undefined) return found;
    }
    return conversionFailed(value, parent, key, issues, typeName);
  };
}

/** SELECT: returns a converter accepting exactly one of `values` (case-sensitive), as given. */
export function selectConverter<const T extends string>(
  values: readonly T[],
  typeName = 'SELECT',
): Converter<T> {
  const allowed = new Map<string, T>(values.map((v) => [v, v]));
  return (value, parent, key, issues) => {
    const found = typeof value === 'string' ? allowed.get(value) : undefined;
    return found !== undefined ? found : conversionFailed(value, parent, key, issues, typeName);
  };
}

/** Issues of the key converters wrapped by refConverter; always emptied again after a call. */
const refScratch: Issue[] = [];

/**
 * ENTITY_REF: converts like `keyConverter` (the converter of the target entity's key type, or
 * `toText` for a composite key), but reports a failure with the label `typeName`
 * (`ENTITY_REF`) instead of the key type's label. An empty string names no record (a record id is
 * never empty) and is refused like any value that is no id.
 */
export function refConverter<T>(keyConverter: Converter<T>, typeName = 'ENTITY_REF'): Converter<T> {
  return (value, parent, key, issues) => {
    if (value === '') return conversionFailed(value, parent, key, issues, typeName);
    const before = refScratch.length;
    const result = keyConverter(value, parent, key, refScratch);
    if (refScratch.length === before && result !== undefined) return result;
    refScratch.length = before;
    return conversionFailed(value, parent, key, issues, typeName);
  };
}

const B64_IMAGE_TEXT = /^data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/i;

/**
 * B64_IMAGE: `data:image/<subtype>;base64,<data>` with subtype `[a-z0-9.+-]+` and non-empty
 * standard base64 data (length a multiple of 4, `=` padding only at the end); returned as given.
 */
export function toB64Image(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): string | undefined {
  if (
    typeof value === 'string' &&
    B64_IMAGE_TEXT.test(value) &&
    (value.length - value.indexOf(',') - 1) % 4 === 0
  ) {
    return value;
  }
  return conversionFailed(value, parent, key, issues, 'B64_IMAGE');
}

/** ANY: any JSON value (including `null`), returned as given; only `undefined` fails. */
export function toAny(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): unknown {
  return value === undefined ? conversionFailed(value, parent, key, issues, 'ANY') : value;
}

/** A converted GEOHASH_LOCATION value. */
export interface GeohashLocation {
  lat: number;
  lng: number;
  geohash: string;
}

/** A GEOHASH_LOCATION value as a request body may send it; the geohash is computed when absent. */
export interface GeohashLocationInput {
  lat: number;
  lng: number;
  geohash?: string;
}

/** The PATCH body of a record type: any subset of its fields; `null` removes an optional field. */
export type PatchOf<T> = { [K in keyof T]?: T[K] | null };

/**
 * GEOHASH_LOCATION: a plain object with number `lat` (-90…90) and `lng` (-180…180) and an
 * optional `geohash`, and no other keys. A missing or null geohash is computed (12 characters); a
 * given one must be a valid geohash whose cell contains the point and is returned lower-cased.
 * Returns `{lat, lng, geohash}` in that key order.
 */
export function toGeohashLocation(
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
): GeohashLocation | undefined {
  if (isPlainObject(value)) {
    let extraKey = false;
    for (const k in value) {
      if (Object.hasOwn(value, k) && k !== 'lat' && k !== 'lng' && k !== 'geohash') {
        extraKey = true;
        break;
      }
    }
    const lat = Object.hasOwn(value, 'lat') ? value.lat : undefined;
    const lng = Object.hasOwn(value, 'lng') ? value.lng : undefined;
    const given = Object.hasOwn(value, 'geohash') ? value.geohash : undefined;
    if (
      !extraKey &&
      typeof lat === 'number' &&
      typeof lng === 'number' &&
      lat >= -90 &&
      lat <= 90 &&
      lng >= -180 &&
      lng <= 180
    ) {
      if (given === undefined || given === null) {
        return { lat, lng, geohash: encodeGeohash(lat, lng) };
      }
      if (typeof given === 'string' && isGeohash(given) && geohashContains(given, lat, lng)) {
        return { lat, lng, geohash: given.toLowerCase() };
      }
    }
  }
  return conversionFailed(value, parent, key, issues, 'GEOHASH_LOCATION');
}

// ---------------------------------------------------------------------------------------------
// Containers

/**
 * ARRAY: returns a converter accepting an array whose every element converts with `element`
 * (called as `element(value[i], arrayPath, i, issues)`; `null` elements fail unless `element` is
 * {@link toAny}). Returns a new array, or `undefined` after reporting every failing element.
 */
export function arrayOf<T>(element: Converter<T>, typeName = 'ARRAY'): Converter<T[]> {
  return (value, parent, key, issues) => {
    if (!Array.isArray(value)) return conversionFailed(value, parent, key, issues, typeName);
    const n = value.length;
    const out: T[] = [];
    if (n === 0) return out;
    const path = [...parent, key];
    let ok = true;
    for (let i = 0; i < n; i++) {
      const r = element(value[i], path, i, issues);
      if (r === undefined) ok = false;
      else if (ok) out.push(r);
    }
    return ok ? out : undefined;
  };
}

/**
 * DICTIONARY: returns a converter accepting a plain object whose every value converts with
 * `entry` (called as `entry(value[k], dictPath, k, issues)`). The keys `__proto__`,
 * `constructor` and `prototype` fail. Returns a new plain object with the keys in input order, or
 * `undefined` after reporting every failing entry.
 */
export function dictionaryOf<T>(
  entry: Converter<T>,
  typeName = 'DICTIONARY',
): Converter<Record<string, T>> {
  return (value, parent, key, issues) => {
    if (!isPlainObject(value)) return conversionFailed(value, parent, key, issues, typeName);
    const out: Record<string, T> = {};
    let path: IssuePath | undefined;
    let ok = true;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      path ??= [...parent, key];
      if (RESERVED_KEYS.has(k)) {
        const keyPath = [...path, k];
        issues.push({
          path: keyPath,
          code: 'conversion_failed',
          message: `Unable to convert field ${formatPath(keyPath)} - ${typeName} - reserved key`,
        });
        ok = false;
        continue;
      }
      const r = entry(value[k], path, k, issues);
      if (r === undefined) ok = false;
      else if (ok) out[k] = r;
    }
    return ok ? out : undefined;
  };
}
export * from './constraints.js';
