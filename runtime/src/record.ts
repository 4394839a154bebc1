import type { KeyValue, KeyValues } from './driver.js';
import { refConverter, toInteger, toText, type Converter } from './convert.js';
import type { Issue, IssuePath } from './issues.js';

/** The path of a record's own fields. */
export const RECORD_ROOT: IssuePath = [];

/** ENTITY_REF to an entity keyed by text (or by a composite key): the target's record id. */
export const toRefText: Converter<string> = refConverter(toText);

/** ENTITY_REF to an entity keyed by a single INTEGER field. */
export const toRefInteger: Converter<number> = refConverter(toInteger);

/** Checks that a request body record is a JSON object; pushes an issue otherwise. */
export function readRecordBody(
  input: unknown,
  entity: string,
  issues: Issue[],
): Record<string, unknown> | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    return input as Record<string, unknown>;
  }
  issues.push({
    path: RECORD_ROOT,
    code: 'conversion_failed',
    message: `EntityRecord of ${entity} must be a JSON object, not ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
  });
  return undefined;
}

/** A composite key's text values may not contain the separator, or the id could not be split again. */
export function checkKeyPart(
  value: KeyValue | undefined,
  separator: string,
  key: string,
  issues: Issue[],
): void {
  if (typeof value === 'string' && value.includes(separator)) {
    issues.push({
      path: [key],
      code: 'invalid_key',
      message: `Key field ${key} may not contain the key separator ${JSON.stringify(separator)}`,
    });
  }
}

/** Scratch list for converting id parts; a failed part only means "no such record". */
const scratch: Issue[] = [];

/**
 * Splits a record id from a URL into its key values, converting each part with the key field's
 * converter. Returns `undefined` when the id cannot belong to any record.
 */
export function parseKey(
  id: string,
  separator: string,
  converters: readonly Converter<KeyValue>[],
): KeyValues | undefined {
  if (converters.length === 1) {
    // One key field: the id is its value (no list of parts is made; an upsert parses 10 000).
    if (id === '') return undefined;
    const value = converters[0]!(id, RECORD_ROOT, 0, scratch);
    if (value === undefined) {
      scratch.length = 0;
      return undefined;
    }
    return [value];
  }
  const parts = id.split(separator);
  if (parts.length !== converters.length) return undefined;
  const values: KeyValue[] = [];
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    if (part === '') return undefined;
    const value = converters[index]!(part, RECORD_ROOT, index, scratch);
    if (value === undefined) {
      scratch.length = 0;
      return undefined;
    }
    values.push(value);
  }
  return values;
}

/**
 * The key of a single-record entity that has no key field: its only record's id, `recordId`, is
 * also the value of its key column. Any other id names no record.
 */
export function parseSingleRecordId(id: string, recordId: string): KeyValues | undefined {
  return id === recordId ? [recordId] : undefined;
}
