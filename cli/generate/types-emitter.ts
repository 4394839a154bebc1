// json-schema-to-typescript and ts-morph are loaded on first use: commands that do not emit code
// (validate, --help, --version) should not pay for loading the TypeScript compiler.
import type { JSONSchema } from 'json-schema-to-typescript';
import type { Project, SourceFile } from 'ts-morph';
import type { EntityModel, FieldModel, TypeModel } from '../model/types.js';

/** Whether a JSON Schema describes the stored record or what a request body may send. */
type Shape = 'record' | 'input';

/**
 * Emits `types.ts` of one entity: the stored record, the insert/replace input and the patch shape
 * (Kysely's Selectable/Insertable/Updateable split). The interfaces come from
 * json-schema-to-typescript; the import and the patch alias are added as a syntax tree.
 */
export async function emitEntityTypes(entity: EntityModel, project: Project): Promise<string> {
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
  const file = project.createSourceFile(`${entity.fileName}/types.ts`, `${record}\n${input}`, {
    overwrite: true,
  });
  if (usesGeohash(entity.fields)) {
    file.insertImportDeclaration(0, {
      isTypeOnly: true,
      moduleSpecifier: '@entity-gen/runtime',
      namedImports: ['GeohashLocation'],
    });
  }
  addPatchType(file, entity);
  const text = file.getFullText();
  project.removeSourceFile(file);
  return text;
}

function addPatchType(file: SourceFile, entity: EntityModel): void {
  file.addTypeAlias({
    isExported: true,
    name: `${entity.typeName}Patch`,
    type: `{ [K in keyof ${entity.typeName}Input]?: ${entity.typeName}Input[K] | null }`,
    docs: [
      `A PATCH body of ${entity.name}: any subset of the fields; \`null\` removes an optional field.`,
    ],
  });
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

/** One in-memory ts-morph project shared by every entity of a run. */
export async function createTypesProject(): Promise<Project> {
  const { Project } = await import('ts-morph');
  return new Project({ useInMemoryFileSystem: true, skipLoadingLibFiles: true });
}
