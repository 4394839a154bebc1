// Prints `types.ts` of an entity: the stored record, the insert/replace input and the patch shape
// (Kysely's Selectable/Insertable/Updateable split), laid out by ./layout like the rest of the
// generated code.
//
// Earlier versions compiled a JSON Schema of the entity with json-schema-to-typescript and
// assembled the file with ts-morph. Both were dropped: ts-morph loaded the TypeScript compiler
// (~330 ms per run) to add one import and one alias, and json-schema-to-typescript's output had to
// be formatted afterwards, which was most of a run's time (docs/benchmarks.md). The mapping from
// field types to TypeScript types below is the whole of what they did for us.
import type { EntityModel, FieldModel, TypeModel } from '../model/types.js';
import {
  declaration,
  genericType,
  importDeclaration,
  printDoc,
  stringLiteral,
  unionType,
  type Doc,
} from './layout/typescript.js';

/** Whether a type describes the stored record or what a request body may send. */
type Shape = 'record' | 'input';

/** An interface to print: the record or input type, or one of their nested object types. */
interface InterfaceSpec {
  readonly name: string;
  readonly fields: readonly FieldModel[];
  readonly comment?: string;
}

/** Emits `types.ts` of one entity (without the generated-file header). */
export function emitEntityTypes(entity: EntityModel): string {
  const about = [entity.displayName, entity.description]
    .filter((text) => text !== undefined)
    .join('\n\n');
  const blocks: string[] = [];
  const runtimeTypes = new Set<string>(['PatchOf']);
  const record = interfaces(
    entity.typeName,
    entity.fields,
    'record',
    about || `A stored ${entity.name} record.`,
  );
  const input = interfaces(
    `${entity.typeName}Input`,
    entity.fields,
    'input',
    `A ${entity.name} record as a POST or PUT body may send it; values are converted on the way in.`,
  );
  for (const [spec, shape] of [
    ...record.map((spec) => [spec, 'record'] as const),
    ...input.map((spec) => [spec, 'input'] as const),
  ])
    blocks.push(printInterface(spec, shape, runtimeTypes));
  blocks.push(
    `/** A PATCH body of ${entity.name}: any subset of the fields; \`null\` removes an optional field. */\n` +
      printDoc(
        declaration(
          `export type ${entity.typeName}Patch`,
          `PatchOf<${entity.typeName}Input>`,
          'break-after-operator',
        ),
      ),
  );
  const imports = printDoc(
    importDeclaration([...runtimeTypes].sort(), '@entity-gen/runtime', true),
  );
  return `${imports}\n\n${blocks.join('\n\n')}\n`;
}

/** The interface of `fields` and, after it, those of its nested objects, depth first. */
function interfaces(
  name: string,
  fields: readonly FieldModel[],
  shape: Shape,
  comment?: string,
): InterfaceSpec[] {
  const specs: InterfaceSpec[] = [
    comment === undefined ? { name, fields } : { name, fields, comment },
  ];
  const visit = (model: TypeModel): void => {
    if (model.element !== undefined) visit(model.element);
    if ((model.type === 'OBJECT' || model.type === 'DICTIONARY') && model.fields !== undefined)
      specs.push(...interfaces(objectTypeName(model, shape), model.fields, shape));
  };
  for (const field of fields) visit(field);
  return specs;
}

function printInterface(spec: InterfaceSpec, shape: Shape, runtimeTypes: Set<string>): string {
  const members = spec.fields.map((field) => {
    const about = [field.displayName, field.description]
      .filter((text) => text !== undefined)
      .join('\n\n');
    const member = printDoc(
      [field.name, field.required ? ': ' : '?: ', typeDoc(field, shape, 'type', runtimeTypes), ';'],
      { column: 2 },
    );
    return about === '' ? `  ${member}` : `${docComment(about, '  ')}\n  ${member}`;
  });
  const head = spec.comment === undefined ? '' : `${docComment(spec.comment, '')}\n`;
  return `${head}export interface ${spec.name} {\n${members.join('\n')}\n}`;
}

/** A JSDoc comment over one or more lines of text. */
function docComment(text: string, indentation: string): string {
  const lines = text
    .replace(/\*\//g, '*\\/')
    .split(/\r?\n/)
    .map((line) => `${indentation} *${line.trim() === '' ? '' : ` ${line.trimEnd()}`}`);
  return `${indentation}/**\n${lines.join('\n')}\n${indentation} */`;
}

/** The TypeScript type of a field or array element. */
function typeDoc(
  model: TypeModel,
  shape: Shape,
  where: 'type' | 'array-element',
  runtimeTypes: Set<string>,
): Doc {
  const input = shape === 'input';
  const union = (members: readonly string[]): Doc =>
    members.length === 1 ? (members[0] as string) : unionType(members, where);
  switch (model.type) {
    case 'STRING':
    case 'DATE':
    case 'DATE_TIME':
    case 'B64_IMAGE':
      return 'string';
    case 'INTEGER':
    case 'DOUBLE':
      return input ? union(['number', 'string']) : 'number';
    case 'DECIMAL':
      return input ? union(['string', 'number']) : 'string';
    case 'BOOL':
      return input ? union(['boolean', "'true'", "'false'"]) : 'boolean';
    case 'ENUM':
      // Input matches case-insensitively, so any string may be sent.
      return input ? 'string' : union((model.values ?? []).map(stringLiteral));
    case 'SELECT':
      return union((model.values ?? []).map(stringLiteral));
    case 'OBJECT':
      return objectTypeName(model, shape);
    case 'DICTIONARY':
      return genericType('Record', ['string', objectTypeName(model, shape)]);
    case 'ARRAY':
      if (model.element === undefined) throw new Error('ARRAY without element');
      return [typeDoc(model.element, shape, 'array-element', runtimeTypes), '[]'];
    case 'ANY':
      return 'unknown';
    case 'ENTITY_REF':
      if (model.converter === 'toRefInteger') return input ? union(['number', 'string']) : 'number';
      return 'string';
    case 'GEOHASH_LOCATION': {
      const name = input ? 'GeohashLocationInput' : 'GeohashLocation';
      runtimeTypes.add(name);
      return name;
    }
  }
}

function objectTypeName(model: TypeModel, shape: Shape): string {
  if (model.objectType === undefined) throw new Error(`${model.type} without an object type`);
  return shape === 'input' ? `${model.objectType}Input` : model.objectType;
}
