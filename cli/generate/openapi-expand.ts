/**
 * The OpenAPI side of `expand=` (SPEC §11): the paths an entity may expand (the enum of its
 * `expand` parameter), and each expandable entity's `<Type>Expanded` schema, whose reference
 * fields hold either the reference or the embedded record and whose reverse paths
 * (`"PRODUCT.category"`) hold lists of records.
 */
import type { ServedEntity, ServiceModel, TypeModel } from '../model/types.js';
import type { JsonValue } from '../schema/types.js';

type Json = { [key: string]: JsonValue };

/** Paths as deep as the runtime expands (`category.parent.parent`). */
const MAX_DEPTH = 3;

/** Beyond this many paths the parameter is described by a pattern instead of an enum. */
const MAX_LISTED_PATHS = 200;

/** A reference field of an entity: its name, target and whether it is an ARRAY. */
interface ReferenceField {
  readonly name: string;
  readonly target: string;
  readonly array: boolean;
}

function referenceFields(entity: ServedEntity): ReferenceField[] {
  return entity.fields.flatMap((field): ReferenceField[] => {
    const type: TypeModel | undefined = field.type === 'ARRAY' ? field.element : field;
    if (type?.type !== 'ENTITY_REF' || type.refEntity === undefined) return [];
    return [{ name: field.name, target: type.refEntity, array: field.type === 'ARRAY' }];
  });
}

/** The references to `entity` from every entity of the model, as `ENTITY.field`. */
function incoming(
  model: ServiceModel,
  entity: ServedEntity,
): { source: ServedEntity; field: string }[] {
  return model.entities.flatMap((source) =>
    referenceFields(source)
      .filter((field) => field.target.toUpperCase() === entity.name.toUpperCase())
      .map((field) => ({ source, field: field.name })),
  );
}

/** Whether `expand=` may name anything on `entity`. */
export function expandable(model: ServiceModel, entity: ServedEntity): boolean {
  return referenceFields(entity).length > 0 || incoming(model, entity).length > 0;
}

/** Every path `expand=` accepts on `entity`, forward paths first, in schema order. */
export function expandPaths(model: ServiceModel, entity: ServedEntity): string[] {
  const byName = new Map(model.entities.map((e) => [e.name.toUpperCase(), e]));
  const forward = (from: ServedEntity, prefix: string, depth: number, into: string[]): void => {
    if (depth > MAX_DEPTH) return;
    for (const field of referenceFields(from)) {
      const path = `${prefix}${field.name}`;
      into.push(path);
      const target = byName.get(field.target.toUpperCase());
      if (target !== undefined) forward(target, `${path}.`, depth + 1, into);
    }
  };
  const paths: string[] = [];
  forward(entity, '', 1, paths);
  for (const { source, field } of incoming(model, entity)) {
    const path = `${source.name}.${field}`;
    paths.push(path);
    forward(source, `${path}.`, 2, paths);
  }
  return paths;
}

/** The `expand` and `expandLimit` query parameters of `entity`'s GET by key and list. */
export function expandParameters(model: ServiceModel, entity: ServedEntity): Json[] {
  const paths = expandPaths(model, entity);
  const items: Json =
    paths.length <= MAX_LISTED_PATHS
      ? { type: 'string', enum: paths }
      : { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*){0,3}$' };
  const parameters: Json[] = [
    {
      name: 'expand',
      in: 'query',
      description:
        'References to embed, comma-separated: a reference field (`category`) is replaced by the record it names (`null` when there is none), an ARRAY of references by the list of records, nested up to 3 levels (`category.parent`); `ENTITY.field` adds the records of ENTITY whose field names this record, in key order. Each expanded entity is read under its own access rules.',
      style: 'form',
      explode: false,
      schema: { type: 'array', items },
    },
  ];
  if (incoming(model, entity).length > 0) {
    parameters.push({
      name: 'expandLimit',
      in: 'query',
      description:
        'The most records a reverse path (`ENTITY.field`) embeds per record (default 100).',
      schema: { type: 'integer', minimum: 1 },
    });
  }
  return parameters;
}

/** The `<Type>Expanded` schema of every expandable entity. */
export function expandedSchemas(model: ServiceModel): Json {
  const byName = new Map(model.entities.map((e) => [e.name.toUpperCase(), e]));
  const schemas: Json = {};
  for (const entity of model.entities) {
    if (!expandable(model, entity)) continue;
    const own = `#/components/schemas/${entity.typeName}`;
    const references = new Map(referenceFields(entity).map((field) => [field.name, field]));
    const properties: Json = {};
    for (const field of entity.fields) {
      const plain: Json = { $ref: `${own}/properties/${field.name}` };
      const reference = references.get(field.name);
      const target =
        reference === undefined ? undefined : byName.get(reference.target.toUpperCase());
      if (reference === undefined || target === undefined) {
        properties[field.name] = plain;
        continue;
      }
      const embedded: Json = {
        anyOf: [{ $ref: `#/components/schemas/${expandedName(model, target)}` }, { type: 'null' }],
      };
      properties[field.name] = {
        anyOf: [plain, reference.array ? { type: 'array', items: embedded } : embedded],
      };
    }
    for (const { source, field } of incoming(model, entity)) {
      properties[`${source.name}.${field}`] = {
        type: 'array',
        items: { $ref: `#/components/schemas/${expandedName(model, source)}` },
      };
    }
    schemas[`${entity.typeName}Expanded`] = {
      type: 'object',
      description: `A ${entity.name} record as \`expand=\` answers it: each expanded reference holds the record it names (or null), each reverse path the records that name this one.`,
      properties,
      additionalProperties: false,
      'x-entity': entity.name,
    };
  }
  return schemas;
}

/** The schema an embedded record of `entity` is described by. */
function expandedName(model: ServiceModel, entity: ServedEntity): string {
  return expandable(model, entity) ? `${entity.typeName}Expanded` : entity.typeName;
}
