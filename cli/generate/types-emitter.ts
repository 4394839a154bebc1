// json-schema-to-typescript is loaded on first use: commands that do not emit code (validate,
// --help, --version) should not pay for it.
//
// ts-morph assembled this file in earlier versions; it was dropped (and removed from the
// dependencies) because all this module adds to json-schema-to-typescript's output is one import
// line and one type alias: plain string assembly does that without loading the TypeScript compiler
// (~330 ms per run) and building a syntax tree per entity (~10% of a run; docs/benchmarks.md).
import type { JSONSchema } from 'json-schema-to-typescript';
import type { EntityModel, FieldModel, TypeModel } from '../model/types.js';

/** Whether a JSON Schema describes the stored record or what a request body may send. */
type Shape = 'record' | 'input';

/**
 * Emits `types.ts` of one entity: the stored record, the insert/replace input and the patch shape
 * (Kysely's Selectable/Insertable/Updateable split). The interfaces come from
 * json-schema-to-typescript; the import and the patch alias are added as text.
 */
export async function emitEntityTypes(entity: EntityModel): Promise<string> {
  const options = {
    bannerComment: '',
    format: false,
    additionalProperties: false,
    declareExternallyReferenced: true,
  } as const;
  const about = [entity.displayName, entity.description]
    .filter((text) => text !== undefined)
    .join('\n\n');
  const { compile } = await import('json-schema-to-typescript');
  const record = await compile(
    objectSchema(
      entity,
      entity.fields,
      'record',
      entity.typeName,
      about === '' ? `A stored ${entity.name} record.` : about,
    ),
    entity.typeName,
    options,
  );
  const input = await compile(
    objectSchema(
      entity,
      entity.fields,
      'input',
      `${entity.typeName}Input`,
      `A ${entity.name} record as a POST or PUT body may send it; values are converted on the way in.`,
    ),
    `${entity.typeName}Input`,
    options,
  );
  const imports = usesGeohash(entity.fields)
    ? "import type { GeohashLocation } from '@entity-gen/runtime';\n\n"
    : '';
  return `${imports}${record}\n${input}\n${patchType(entity)}`;
}

/** The PATCH shape: every input field optional, and `null` to remove an optional one. */
function patchType(entity: EntityModel): string {
  const input = `${entity.typeName}Input`;
  return (
    `/** A PATCH body of ${entity.name}: any subset of the fields; \`null\` removes an optional field. */\n` +
    `export type ${entity.typeName}Patch = { [K in keyof ${input}]?: ${input}[K] | null };\n`
  );
}

function objectSchema(
  entity: EntityModel,
  fields: readonly FieldModel[],
  shape: Shape,
  title: string,
  description?: string,
): JSONSchema {
  const properties: Record<string, JSONSchema> = {};
  for (const field of fields) properties[field.name] = fieldSchema(entity, field, shape);
  const required = fields.filter((field) => field.required).map((field) => field.name);
  return {
    title,
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(description === undefined ? {} : { description }),
  };
}

function fieldSchema(entity: EntityModel, field: FieldModel, shape: Shape): JSONSchema {
  const schema = typeSchema(entity, field, shape);
  const description = [field.displayName, field.description]
    .filter((text) => text !== undefined)
    .join('\n\n');
  return description === '' ? schema : { ...schema, description };
}

function typeSchema(entity: EntityModel, model: TypeModel, shape: Shape): JSONSchema {
  const input = shape === 'input';
  switch (model.type) {
    case 'STRING':
    case 'DATE':
    case 'DATE_TIME':
    case 'B64_IMAGE':
      return { type: 'string' };
    case 'INTEGER':
    case 'DOUBLE':
      return input ? { type: ['number', 'string'] } : { type: 'number' };
    case 'DECIMAL':
      return input ? { type: ['string', 'number'] } : { type: 'string' };
    case 'BOOL':
      return input
        ? { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false'] }] }
        : { type: 'boolean' };
    case 'ENUM':
      // Input matches case-insensitively, so any string may be sent.
      return input ? { type: 'string' } : { type: 'string', enum: [...(model.values ?? [])] };
    case 'SELECT':
      return { type: 'string', enum: [...(model.values ?? [])] };
    case 'OBJECT':
      return objectSchema(entity, model.fields ?? [], shape, nestedTitle(model, shape));
    case 'DICTIONARY':
      return {
        type: 'object',
        additionalProperties: objectSchema(
          entity,
          model.fields ?? [],
          shape,
          nestedTitle(model, shape),
        ),
      };
    case 'ARRAY':
      if (model.element === undefined) throw new Error('ARRAY without element');
      return { type: 'array', items: typeSchema(entity, model.element, shape) };
    case 'ANY':
      return {};
    case 'ENTITY_REF':
      if (model.converter === 'toRefInteger')
        return input ? { type: ['number', 'string'] } : { type: 'number' };
      return { type: 'string' };
    case 'GEOHASH_LOCATION':
      return input
        ? {
            type: 'object',
            additionalProperties: false,
            required: ['lat', 'lng'],
            properties: {
              lat: { type: 'number' },
              lng: { type: 'number' },
              geohash: { type: 'string' },
            },
          }
        : { tsType: 'GeohashLocation' };
  }
}

function nestedTitle(model: TypeModel, shape: Shape): string {
  if (model.objectType === undefined) throw new Error(`${model.type} without an object type`);
  return shape === 'input' ? `${model.objectType}Input` : model.objectType;
}

function usesGeohash(fields: readonly FieldModel[]): boolean {
  return fields.some((field) => typeUsesGeohash(field));
}

function typeUsesGeohash(model: TypeModel): boolean {
  if (model.type === 'GEOHASH_LOCATION') return true;
  if (model.element !== undefined && typeUsesGeohash(model.element)) return true;
  return (model.fields ?? []).some((field) => typeUsesGeohash(field));
}
