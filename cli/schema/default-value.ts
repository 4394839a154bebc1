/**
 * A field's `default`: a JSON value valid for the field's type, converted by the same runtime
 * converters that check request bodies, so a default is exactly a value the service could have
 * stored. Migrations use it to fill existing records (docs/migrations.md).
 */
import {
  enumConverter,
  RESERVED_KEYS,
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
  toText,
} from '@entity-gen/runtime/convert';
import type { FieldDoc, FieldType, JsonValue, TypeConfigDoc } from './types.js';

type Issues = Parameters<typeof toText>[3];
type Path = Parameters<typeof toText>[1];
type ScalarConverter = (
  value: unknown,
  parent: Path,
  key: string | number,
  issues: Issues,
) => unknown;

const SCALAR: Partial<Record<FieldType, ScalarConverter>> = {
  STRING: toText,
  INTEGER: toInteger,
  DOUBLE: toDouble,
  DECIMAL: toDecimal,
  BOOL: toBoolean,
  DATE: toDate,
  DATE_TIME: toDateTime,
  B64_IMAGE: toB64Image,
  ANY: toAny,
  GEOHASH_LOCATION: toGeohashLocation,
};

/**
 * The canonical form of `value` as a value of the field (`"19.990"` → `"19.99"` for DECIMAL, the
 * schema's spelling for ENUM, a computed geohash for GEOHASH_LOCATION), or the problems found,
 * as messages naming the path inside the value.
 */
export function convertDefault(
  value: JsonValue,
  field: FieldDoc,
): { value: JsonValue } | { problems: string[] } {
  const issues: Issues = [];
  const converted = convertValue(value, field, [], field.name, issues);
  if (issues.length > 0 || converted === undefined) {
    return { problems: issues.map((issue) => issue.message) };
  }
  if (field.required === true && converted === '') {
    return { problems: ['a required field cannot default to the empty string'] };
  }
  return { value: converted };
}

function convertValue(
  value: unknown,
  config: TypeConfigDoc,
  parent: Path,
  key: string | number,
  issues: Issues,
): JsonValue | undefined {
  const scalar = SCALAR[config.type];
  if (scalar !== undefined) return scalar(value, parent, key, issues) as JsonValue | undefined;
  switch (config.type) {
    case 'ENUM':
      return enumConverter(config.enums ?? [])(value, parent, key, issues);
    case 'SELECT':
      return selectConverter((config.select?.elems ?? []).map((elem) => elem.value))(
        value,
        parent,
        key,
        issues,
      );
    case 'ENTITY_REF':
      // The target's key type is resolved later; an id is text or (INTEGER keys) a number.
      if (typeof value === 'number') return toInteger(value, parent, key, issues);
      if (value === '') {
        issues.push(problem([...parent, key], 'an ENTITY_REF id must not be empty'));
        return undefined;
      }
      return toText(value, parent, key, issues);
    case 'ARRAY': {
      if (!Array.isArray(value)) {
        issues.push(problem([...parent, key], 'expected a list'));
        return undefined;
      }
      const element = config.array;
      if (element === undefined) return undefined;
      const path = [...parent, key];
      const items = value.map((item: unknown, index) =>
        convertValue(item, element, path, index, issues),
      );
      return items.every((item) => item !== undefined) ? items : undefined;
    }
    case 'OBJECT':
      return convertObject(value, config.object?.fields ?? [], [...parent, key], issues);
    case 'DICTIONARY': {
      if (!isPlainObject(value)) {
        issues.push(problem([...parent, key], 'expected an object'));
        return undefined;
      }
      const path = [...parent, key];
      const result: Record<string, JsonValue> = {};
      for (const [entryKey, entry] of Object.entries(value)) {
        if (RESERVED_KEYS.has(entryKey)) {
          issues.push(problem([...path, entryKey], 'this key is not allowed'));
          continue;
        }
        const converted = convertObject(
          entry,
          config.dict?.fields ?? [],
          [...path, entryKey],
          issues,
        );
        if (converted !== undefined) result[entryKey] = converted;
      }
      return result;
    }
    default:
      return undefined;
  }
}

/** An OBJECT (or DICTIONARY entry) value: known keys only, required inner fields present. */
function convertObject(
  value: unknown,
  fields: readonly FieldDoc[],
  path: Path,
  issues: Issues,
): JsonValue | undefined {
  if (!isPlainObject(value)) {
    issues.push(problem(path, 'expected an object'));
    return undefined;
  }
  const start = issues.length;
  const names = new Set(fields.map((field) => field.name));
  for (const key of Object.keys(value)) {
    if (!names.has(key)) issues.push(problem([...path, key], 'not a field of this object'));
  }
  const result: Record<string, JsonValue> = {};
  for (const field of fields) {
    const inner: unknown = Object.hasOwn(value, field.name) ? value[field.name] : undefined;
    if (inner === undefined || inner === null || (field.required === true && inner === '')) {
      if (field.required === true) issues.push(problem([...path, field.name], 'required'));
      continue;
    }
    const converted = convertValue(inner, field, path, field.name, issues);
    if (converted !== undefined) result[field.name] = converted;
  }
  return issues.length > start ? undefined : result;
}

function problem(path: Path, what: string): Issues[number] {
  return { path, code: 'conversion_failed', message: `${formatPath(path)}: ${what}` };
}

/** `dimensions.width`, `tags[2]`, as the runtime's messages name paths. */
function formatPath(path: Path): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
