/**
 * What happens to stored values when a field's type changes: which changes keep every value
 * (lossless), which lose some (lossy: refused without --allow-data-loss), and how each converts.
 * The SQL for each conversion is in `sql.ts`; docs/migrations.md has the table.
 */
import type { FieldModel, TypeModel } from '../model/types.js';
import type { FieldType } from '../schema/types.js';

/** A value-preserving (or, where `lossy`, value-narrowing) transformation of a column. */
export type CastKind =
  | 'integerToDouble'
  | 'integerToDecimal'
  | 'doubleToDecimal'
  | 'integerToText'
  | 'doubleToText'
  | 'decimalToText'
  | 'booleanToText'
  | 'dateToText'
  | 'datetimeToText'
  | 'jsonToText'
  | 'dateToDatetime'
  | 'datetimeToDate'
  | 'doubleToInteger'
  | 'decimalToInteger'
  | 'decimalToDouble'
  | 'scalarToJson';

/** How the stored values of one column become values of the new type. */
export type ConversionOp =
  /** The stored value is already right. */
  | { readonly op: 'identity' }
  | { readonly op: 'cast'; readonly cast: CastKind }
  /**
   * Text into an ENUM/SELECT: values in `values` are kept (ENUM: matched ignoring ASCII case and
   * respelled as the schema writes them), others are reset; `respell` lists known old values that
   * only change spelling.
   */
  | {
      readonly op: 'valueSet';
      readonly values: readonly string[];
      readonly ignoreCase: boolean;
      readonly respell: readonly (readonly [string, string])[];
      /** Every possible old value has a place in the new set: nothing is reset. */
      readonly complete: boolean;
    }
  /** An OBJECT lost inner fields: they are removed from every stored value. */
  | { readonly op: 'removeKeys'; readonly keys: readonly string[] }
  /** No conversion exists: every stored value is reset (NULL, or the field's default). */
  | { readonly op: 'reset' };

export interface Conversion {
  readonly change: ConversionOp;
  /** Some stored values do not survive; the text says which. */
  readonly loss: string | undefined;
  /** Non-NULL values may become NULL (or the default): the field needs a default when required. */
  readonly resets: boolean;
}

const lossless = (change: ConversionOp): Conversion => ({ change, loss: undefined, resets: false });
const lossy = (change: ConversionOp, loss: string, resets = false): Conversion => ({
  change,
  loss,
  resets,
});

const JSON_TYPES: ReadonlySet<FieldType> = new Set([
  'OBJECT',
  'ARRAY',
  'DICTIONARY',
  'ANY',
  'GEOHASH_LOCATION',
]);

/**
 * A canonical text of everything about a value's type that decides which values are valid (not
 * names shown to users, not the referenced entity's name): equal signatures need no migration.
 */
export function typeSignature(type: TypeModel): string {
  return JSON.stringify(signatureOf(type));
}

function signatureOf(type: TypeModel): unknown {
  return {
    type: type.type,
    ...(type.type === 'ENTITY_REF' ? { ref: type.converter } : {}),
    ...(type.values === undefined ? {} : { values: type.values }),
    ...(type.element === undefined ? {} : { element: signatureOf(type.element) }),
    ...(type.fields === undefined
      ? {}
      : {
          fields: type.fields.map((field) => ({
            name: field.name,
            required: field.required,
            type: signatureOf(field),
          })),
        }),
  };
}

/** The conversion of a top-level column from `from` to `to`; `undefined` when nothing changes. */
export function classifyConversion(from: FieldModel, to: FieldModel): Conversion | undefined {
  if (typeSignature(from) === typeSignature(to)) return undefined;
  const a = from.type;
  const b = to.type;
  if (JSON_TYPES.has(a) && JSON_TYPES.has(b)) return jsonConversion(from, to);
  if (b === 'ANY') return lossless({ op: 'cast', cast: 'scalarToJson' });
  if (JSON_TYPES.has(a)) {
    return b === 'STRING'
      ? lossy(
          { op: 'cast', cast: 'jsonToText' },
          'the JSON text each database writes differs (spacing, key order)',
        )
      : resetAll(a, b);
  }
  if (b === 'ENUM' || b === 'SELECT') return valueSetConversion(from, to);
  if (b === 'STRING' || (b === 'ENTITY_REF' && to.columnKind === 'text')) {
    const cast = textCast(from);
    if (cast === undefined) return resetAll(a, b);
    if (b === 'ENTITY_REF' && !['STRING', 'ENUM', 'SELECT', 'ENTITY_REF', 'INTEGER'].includes(a)) {
      return resetAll(a, b);
    }
    return lossless(cast === 'identity' ? { op: 'identity' } : { op: 'cast', cast });
  }
  if (b === 'ENTITY_REF' && to.columnKind === 'integer') {
    return a === 'INTEGER' || (a === 'ENTITY_REF' && from.columnKind === 'integer')
      ? lossless({ op: 'identity' })
      : resetAll(a, b);
  }
  if (b === 'INTEGER' && a === 'ENTITY_REF' && from.columnKind === 'integer') {
    return lossless({ op: 'identity' });
  }
  switch (`${a}>${b}`) {
    case 'INTEGER>DOUBLE':
      return lossless({ op: 'cast', cast: 'integerToDouble' });
    case 'INTEGER>DECIMAL':
      return lossless({ op: 'cast', cast: 'integerToDecimal' });
    case 'DOUBLE>DECIMAL':
      return lossless({ op: 'cast', cast: 'doubleToDecimal' });
    case 'DATE>DATE_TIME':
      return lossless({ op: 'cast', cast: 'dateToDatetime' });
    case 'DOUBLE>INTEGER':
      return lossy({ op: 'cast', cast: 'doubleToInteger' }, 'fractional parts are cut off');
    case 'DECIMAL>INTEGER':
      return lossy({ op: 'cast', cast: 'decimalToInteger' }, 'fractional parts are cut off');
    case 'DECIMAL>DOUBLE':
      return lossy(
        { op: 'cast', cast: 'decimalToDouble' },
        'digits beyond the precision of a double are rounded',
      );
    case 'DATE_TIME>DATE':
      return lossy({ op: 'cast', cast: 'datetimeToDate' }, 'the time of day (UTC) is cut off');
    default:
      return resetAll(a, b);
  }
}

/** How a scalar column becomes text: `identity` when it already holds the text. */
function textCast(from: FieldModel): CastKind | 'identity' | undefined {
  switch (from.columnKind) {
    case 'text':
      return 'identity';
    case 'integer':
      return 'integerToText';
    case 'double':
      return 'doubleToText';
    case 'decimal':
      return 'decimalToText';
    case 'boolean':
      return 'booleanToText';
    case 'date':
      return 'dateToText';
    case 'datetime':
      return 'datetimeToText';
    default:
      return undefined;
  }
}

function resetAll(from: FieldType, to: FieldType): Conversion {
  return lossy(
    { op: 'reset' },
    `there is no conversion from ${from} to ${to}, so every stored value is discarded`,
    true,
  );
}

/** Into ENUM or SELECT. */
function valueSetConversion(from: FieldModel, to: FieldModel): Conversion {
  const values = to.values ?? [];
  const ignoreCase = to.type === 'ENUM';
  if (from.columnKind !== 'text' || from.type === 'B64_IMAGE') return resetAll(from.type, to.type);
  const place = (value: string): string | undefined =>
    values.find((candidate) => candidate === value) ??
    (ignoreCase
      ? values.find((candidate) => candidate.toLowerCase() === value.toLowerCase())
      : undefined);
  if (from.values !== undefined && (from.type === 'ENUM' || from.type === 'SELECT')) {
    const respell: [string, string][] = [];
    const lost: string[] = [];
    for (const value of from.values) {
      const target = place(value);
      if (target === undefined) lost.push(value);
      else if (target !== value) respell.push([value, target]);
    }
    const change: ConversionOp = {
      op: 'valueSet',
      values,
      ignoreCase,
      respell,
      complete: lost.length === 0,
    };
    if (lost.length === 0) {
      return lossless(respell.length === 0 ? { op: 'identity' } : change);
    }
    return lossy(
      change,
      `records holding ${lost.map((value) => JSON.stringify(value)).join(', ')} lose the value`,
      true,
    );
  }
  return lossy(
    { op: 'valueSet', values, ignoreCase, respell: [], complete: false },
    `stored values that are not one of ${values.map((value) => JSON.stringify(value)).join(', ')} are discarded`,
    true,
  );
}

/** Between JSON-stored types: widening keeps values as they are. */
function jsonConversion(from: FieldModel, to: FieldModel): Conversion {
  if (to.type === 'ANY') return lossless({ op: 'identity' });
  const problem = narrowing(from, to);
  if (problem === undefined) return lossless({ op: 'identity' });
  // The one narrowing with a precise rewrite: inner fields removed from a top-level OBJECT.
  if (from.type === 'OBJECT' && to.type === 'OBJECT') {
    const kept = (from.fields ?? []).filter((field) =>
      (to.fields ?? []).some((other) => other.name === field.name),
    );
    const removed = (from.fields ?? [])
      .filter((field) => !kept.includes(field))
      .map((field) => field.name);
    const rest = narrowing({ ...from, fields: kept }, to);
    if (removed.length > 0 && rest === undefined) {
      return lossy(
        { op: 'removeKeys', keys: removed },
        `inner field(s) ${removed.join(', ')} are removed from every stored value`,
      );
    }
  }
  return lossy(
    { op: 'reset' },
    `stored values may not fit the new shape (${problem}), so every stored value is discarded`,
    true,
  );
}

/**
 * Why a value valid for `from` may be invalid for `to` (both JSON-stored or nested types), or
 * `undefined` when every value of `from` is a value of `to`.
 */
function narrowing(from: TypeModel, to: TypeModel): string | undefined {
  if (to.type === 'ANY') return undefined;
  if (from.type !== to.type) {
    const sameJson =
      (from.type === 'INTEGER' && to.type === 'DOUBLE') ||
      (['ENUM', 'SELECT', 'ENTITY_REF', 'B64_IMAGE'].includes(from.type) && to.type === 'STRING');
    return sameJson ? undefined : `${from.type} becomes ${to.type}`;
  }
  switch (to.type) {
    case 'ENUM':
    case 'SELECT': {
      const missing = (from.values ?? []).filter((value) => !(to.values ?? []).includes(value));
      return missing.length === 0 ? undefined : `value(s) ${missing.join(', ')} removed`;
    }
    case 'ENTITY_REF':
      return from.converter === to.converter ? undefined : 'the referenced key type changes';
    case 'ARRAY':
      return from.element === undefined || to.element === undefined
        ? undefined
        : narrowing(from.element, to.element);
    case 'OBJECT':
    case 'DICTIONARY':
      return fieldsNarrowing(from.fields ?? [], to.fields ?? []);
    default:
      return undefined;
  }
}

function fieldsNarrowing(
  from: readonly FieldModel[],
  to: readonly FieldModel[],
): string | undefined {
  for (const field of from) {
    const next = to.find((candidate) => candidate.name === field.name);
    if (next === undefined) return `inner field ${field.name} removed`;
    if (next.required && !field.required) return `inner field ${field.name} becomes required`;
    const inner = narrowing(field, next);
    if (inner !== undefined) return `${field.name}: ${inner}`;
  }
  const added = to.find(
    (field) => field.required && !from.some((candidate) => candidate.name === field.name),
  );
  return added === undefined ? undefined : `required inner field ${added.name} added`;
}
