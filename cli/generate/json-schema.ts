/**
 * One JSON Schema (2020-12) per entity, from the model: the single source of the record's shape.
 * The OpenAPI document embeds these schemas (components.schemas) and `types.ts` is compiled from
 * them with json-schema-to-typescript, so the document and the TypeScript types cannot disagree.
 *
 * Each entity has three shapes where they differ (SPEC §3): the stored record as the service
 * answers it (`Product`: canonical values), what a POST or PUT body may send (`ProductInput`:
 * values the converters accept), and a PATCH body (`ProductPatch`: any subset of the input's
 * fields, `null` removing an optional one) — plus one schema per nested OBJECT or DICTIONARY
 * value in both the record and the input form.
 */
import type { JsonValue } from '../schema/types.js';
import type { EntityModel, FieldModel, TypeModel } from '../model/types.js';

/** A JSON Schema, as plain JSON. */
export type JsonSchema = { readonly [key: string]: JsonValue };

/** How a schema refers to another named schema (`#/$defs/X` or `#/components/schemas/X`). */
export type SchemaRef = (name: string) => string;

/** An entity's named schemas, in a stable order: record, its objects, input, its objects, patch. */
export interface EntitySchemas {
  /** `Product`, `ProductInput`, `ProductPatch`. */
  readonly record: string;
  readonly input: string;
  readonly patch: string;
  readonly schemas: ReadonlyMap<string, JsonSchema>;
}

/**
 * Text forms the converters accept and print (runtime/src/convert.ts), as ECMAScript patterns.
 * The converters check more than a pattern can (a real calendar date, a safe integer): a value
 * the pattern admits may still be a 400, never the other way round.
 */
const PATTERNS = {
  integerText: '^[+-]?\\d+$',
  numberText: '^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?$',
  /** DECIMAL as the service answers it: canonical, exact. */
  canonicalDecimal: '^-?(0|[1-9]\\d*)(\\.\\d*[1-9])?$',
  date: '^\\d{4}-\\d{2}-\\d{2}$',
  /** DATE_TIME as the service answers it: UTC, milliseconds, `Z`. */
  canonicalDateTime: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  b64Image: '^data:image/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2}$',
  geohash: '^[0-9a-zA-Z]{1,12}$',
} as const;

/** The schemas of one entity, referring to each other with `ref`. */
export function entitySchemas(entity: EntityModel, ref: SchemaRef): EntitySchemas {
  const schemas = new Map<string, JsonSchema>();
  const record = entity.typeName;
  const input = `${entity.typeName}Input`;
  const patch = `${entity.typeName}Patch`;
  const about = [entity.displayName, entity.description].filter((text) => text !== undefined);
  schemas.set(
    record,
    objectSchema(entity.fields, 'record', ref, {
      title: record,
      description: about.length > 0 ? about.join('\n\n') : `A stored ${entity.name} record.`,
    }),
  );
  for (const [name, schema] of nestedSchemas(entity.fields, 'record', ref))
    schemas.set(name, schema);
  schemas.set(
    input,
    objectSchema(entity.fields, 'input', ref, {
      title: input,
      description: `One ${entity.name} record as a POST or PUT body may send it; values are converted on the way in.`,
    }),
  );
  for (const [name, schema] of nestedSchemas(entity.fields, 'input', ref))
    schemas.set(name, schema);
  schemas.set(patch, patchSchema(entity, ref, patch));
  return { record, input, patch, schemas };
}

type Shape = 'record' | 'input';

/** An object of `fields`: required ones required, nothing else allowed. */
function objectSchema(
  fields: readonly FieldModel[],
  shape: Shape,
  ref: SchemaRef,
  head: { readonly title: string; readonly description?: string },
): JsonSchema {
  // An input leaves out the fields the server sets; a generated key may be left out (SPEC §16).
  const shown = shape === 'input' ? fields.filter((field) => !isServerSet(field)) : fields;
  const required = shown
    .filter((field) => field.required && (shape === 'record' || field.generated === undefined))
    .map((field) => field.name);
  return {
    title: head.title,
    ...(head.description === undefined ? {} : { description: head.description }),
    type: 'object',
    properties: Object.fromEntries(
      shown.map((field) => [
        field.name,
        withReadOnly(
          field,
          shape,
          withDefault(field, shape, described(field, fieldSchema(field, shape, ref))),
        ),
      ]),
    ),
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** Whether the server sets the field on every write (createdAt, updatedBy…, SPEC §16). */
function isServerSet(field: FieldModel): boolean {
  return field.generated !== undefined && !field.isKey;
}

/**
 * `readOnly` on a record's server-set fields and on a key the database numbers (`sequence`):
 * clients never choose those values (SPEC §16).
 */
function withReadOnly(field: FieldModel, shape: Shape, schema: JsonSchema): JsonSchema {
  if (shape !== 'record' || field.generated === undefined) return schema;
  if (field.isKey && field.generated !== 'sequence') return schema;
  return '$ref' in schema ? { allOf: [schema], readOnly: true } : { ...schema, readOnly: true };
}

/** An input field's insert default (SPEC §16) as the JSON Schema `default` keyword. */
function withDefault(field: FieldModel, shape: Shape, schema: JsonSchema): JsonSchema {
  if (shape !== 'input' || field.default === undefined) return schema;
  return '$ref' in schema
    ? { allOf: [schema], default: field.default }
    : { ...schema, default: field.default };
}

/** The named schemas of the nested OBJECT and DICTIONARY values of `fields`, depth first. */
function nestedSchemas(
  fields: readonly FieldModel[],
  shape: Shape,
  ref: SchemaRef,
): [string, JsonSchema][] {
  const found: [string, JsonSchema][] = [];
  const visit = (model: TypeModel): void => {
    if (model.element !== undefined) visit(model.element);
    if ((model.type === 'OBJECT' || model.type === 'DICTIONARY') && model.fields !== undefined) {
      const name = objectName(model, shape);
      found.push([name, objectSchema(model.fields, shape, ref, { title: name })]);
      for (const field of model.fields) visit(field);
    }
  };
  for (const field of fields) visit(field);
  return found;
}

function objectName(model: TypeModel, shape: Shape): string {
  if (model.objectType === undefined) throw new Error(`${model.type} without an object type`);
  return shape === 'input' ? `${model.objectType}Input` : model.objectType;
}

/** A PATCH body: every input field optional; `null` removes an optional field. */
function patchSchema(entity: EntityModel, ref: SchemaRef, title: string): JsonSchema {
  return {
    title,
    description: `A PATCH body of ${entity.name}: any subset of the fields; \`null\` removes an optional field.`,
    type: 'object',
    properties: Object.fromEntries(
      entity.fields
        .filter((field) => !isServerSet(field))
        .map((field) => {
          const schema = fieldSchema(field, 'input', ref);
          return [field.name, described(field, field.required ? schema : orNull(schema))];
        }),
    ),
    additionalProperties: false,
  };
}

/** `schema` or `null` (one flat `anyOf`, so the TypeScript union is flat too). */
function orNull(schema: JsonSchema): JsonSchema {
  const options = Array.isArray(schema['anyOf']) ? (schema['anyOf'] as JsonValue[]) : [schema];
  return { anyOf: [...options, { type: 'null' }] };
}

/** A field's value: a required text is never empty (an empty one is "missing"). */
function fieldSchema(field: FieldModel, shape: Shape, ref: SchemaRef): JsonSchema {
  const schema = typeSchema(field, shape, ref);
  if (!field.required || schema['type'] !== 'string') return schema;
  // A required string is never empty; a declared minLength above 1 says more.
  const declared = schema['minLength'];
  return { ...schema, minLength: typeof declared === 'number' ? Math.max(declared, 1) : 1 };
}

/**
 * A field's schema with its display name and description. Beside a `$ref` the description goes
 * into an `allOf` wrapper: json-schema-to-typescript reads a `$ref` with siblings as a new type.
 */
function described(field: FieldModel, schema: JsonSchema): JsonSchema {
  const about = [field.displayName, field.description].filter((text) => text !== undefined);
  if (about.length === 0) return schema;
  const description = about.join('\n\n');
  return '$ref' in schema ? { description, allOf: [schema] } : { ...schema, description };
}

/** The schema of one value of a type, with its constraints (SPEC §16) as JSON Schema keywords. */
function typeSchema(model: TypeModel, shape: Shape, ref: SchemaRef): JsonSchema {
  const schema = plainTypeSchema(model, shape, ref);
  const rules = model.constraints;
  if (rules === undefined) return schema;
  const extra: Record<string, JsonSchema[string]> = {};
  const range = (limit: number | string | undefined, keyword: 'minimum' | 'maximum'): void => {
    if (limit === undefined) return;
    if (model.type === 'INTEGER' || model.type === 'DOUBLE') extra[keyword] = Number(limit);
    else if (model.type === 'DECIMAL') {
      // `minimum` checks number input; the exact limit is the text (output is a string).
      extra[keyword] = Number(limit);
      extra[`x-${keyword}`] = String(limit);
    } else extra[`x-${keyword}`] = String(limit); // DATE, DATE_TIME: no JSON Schema keyword
  };
  range(rules.min, 'minimum');
  range(rules.max, 'maximum');
  for (const key of ['minLength', 'maxLength', 'pattern', 'minItems', 'maxItems'] as const) {
    const value = rules[key];
    if (value !== undefined) extra[key] = value;
  }
  return { ...schema, ...extra };
}

/** The schema of one value of a type, as the service answers it or as a request may send it. */
function plainTypeSchema(model: TypeModel, shape: Shape, ref: SchemaRef): JsonSchema {
  const input = shape === 'input';
  switch (model.type) {
    case 'STRING':
      return { type: 'string' };
    case 'INTEGER':
      return input
        ? { anyOf: [{ type: 'integer' }, { type: 'string', pattern: PATTERNS.integerText }] }
        : { type: 'integer' };
    case 'DOUBLE':
      return input
        ? { anyOf: [{ type: 'number' }, { type: 'string', pattern: PATTERNS.numberText }] }
        : { type: 'number' };
    case 'DECIMAL':
      return input
        ? { anyOf: [{ type: 'string', pattern: PATTERNS.numberText }, { type: 'number' }] }
        : { type: 'string', pattern: PATTERNS.canonicalDecimal };
    case 'BOOL':
      return input
        ? { anyOf: [{ type: 'boolean' }, { enum: ['true', 'false'] }] }
        : { type: 'boolean' };
    case 'DATE':
      return { type: 'string', format: 'date', pattern: PATTERNS.date };
    case 'DATE_TIME':
      // Input: ISO 8601, converted to UTC (without an offset it is taken as UTC).
      return input
        ? { type: 'string' }
        : { type: 'string', format: 'date-time', pattern: PATTERNS.canonicalDateTime };
    case 'ENUM':
      // Input matches case-insensitively: any string may be sent.
      return input ? { type: 'string' } : { enum: [...(model.values ?? [])] };
    case 'SELECT':
      return { enum: [...(model.values ?? [])] };
    case 'OBJECT':
      return { $ref: ref(objectName(model, shape)) };
    case 'DICTIONARY':
      return { type: 'object', additionalProperties: { $ref: ref(objectName(model, shape)) } };
    case 'ARRAY':
      if (model.element === undefined) throw new Error('ARRAY without an element');
      return { type: 'array', items: typeSchema(model.element, shape, ref) };
    case 'B64_IMAGE':
      return { type: 'string', pattern: PATTERNS.b64Image };
    case 'ANY':
      return {};
    case 'ENTITY_REF':
      if (model.converter === 'toRefInteger')
        return input
          ? { anyOf: [{ type: 'integer' }, { type: 'string', pattern: PATTERNS.integerText }] }
          : { type: 'integer' };
      return { type: 'string', minLength: 1 };
    case 'GEOHASH_LOCATION':
      return {
        type: 'object',
        properties: {
          lat: { type: 'number', minimum: -90, maximum: 90 },
          lng: { type: 'number', minimum: -180, maximum: 180 },
          geohash: input
            ? { anyOf: [{ type: 'string', pattern: PATTERNS.geohash }, { type: 'null' }] }
            : { type: 'string', pattern: PATTERNS.geohash },
        },
        required: input ? ['lat', 'lng'] : ['lat', 'lng', 'geohash'],
        additionalProperties: false,
      };
  }
}
