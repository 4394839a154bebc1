/**
 * Normalization: validated ENTITY documents become the model, with every decision made once here
 * (identifiers, file names, SQL and TypeScript types, converters), and name collisions reported.
 */
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { Diagnostic } from '../diagnostics.js';
import { CONSTRAINT_KEYS, type FieldConstraints } from '@entity-gen/runtime/convert';
import type {
  FieldDoc,
  JsonValue,
  LoadedEntity,
  SourcePosition,
  TypeConfigDoc,
} from '../schema/types.js';
import {
  columnKindOf,
  DEFAULT_KEY_SEPARATOR,
  FIXED_KEY_COLUMN,
  hasFixedKey,
  integerKeyedEntities,
  singleRecordIdOf,
  tableOf,
} from '@entity-gen/runtime/schema';
import { camelCase, kebabCase, pascalCase, variableName } from './names.js';
import type {
  ConverterConstant,
  EntityModel,
  FieldModel,
  ObjectReader,
  SchemaModel,
  TypeModel,
} from './types.js';

/** Scalar converters exported by the runtime, by field type. */
const SCALAR_CONVERTERS: Partial<Record<TypeConfigDoc['type'], string>> = {
  STRING: 'toText',
  INTEGER: 'toInteger',
  DOUBLE: 'toDouble',
  DECIMAL: 'toDecimal',
  BOOL: 'toBoolean',
  DATE: 'toDate',
  DATE_TIME: 'toDateTime',
  B64_IMAGE: 'toB64Image',
  ANY: 'toAny',
  GEOHASH_LOCATION: 'toGeohashLocation',
};

/**
 * Turns validated ENTITY documents into the frozen model the emitters read. Returns diagnostics
 * for names that would collide once turned into identifiers or file names.
 */
export function normalize(entities: readonly LoadedEntity[]): {
  model: SchemaModel | undefined;
  diagnostics: Diagnostic[];
} {
  const sorted = [...entities].sort((a, b) => compareText(a.entity.name, b.entity.name));
  const diagnostics = findNameCollisions(sorted);
  if (diagnostics.length > 0) return { model: undefined, diagnostics };
  const byName = new Map(sorted.map((loaded) => [loaded.entity.name.toUpperCase(), loaded]));
  // Upper case, as the runtime compares entity names.
  const integerKeyed = new Set(
    integerKeyedEntities(sorted.map((loaded) => loaded.entity)).map((name) => name.toUpperCase()),
  );
  // JSON with object keys sorted, so the hashes do not depend on key order (the same bytes as the
  // hand-written version before it: schema hashes did not change). The schema's is the JSON of the
  // list of documents, made of the documents' own.
  const texts = sorted.map((loaded) => stableStringify(loaded.document));
  const models = sorted.map((loaded, index) =>
    normalizeEntity(loaded, sha256(texts[index]!).slice(0, 12), byName, integerKeyed),
  );
  const hash = sha256(`[${texts.join(',')}]`);
  const sourceFiles = [...new Set(entities.map((loaded) => loaded.position.file))];
  const model: SchemaModel = {
    entities: models,
    sourceFiles,
    hash,
    shortHash: hash.slice(0, 12),
  };
  return { model: deepFreeze(model), diagnostics: [] };
}

function normalizeEntity(
  loaded: LoadedEntity,
  documentHash: string,
  byName: ReadonlyMap<string, LoadedEntity>,
  integerKeyed: ReadonlySet<string>,
): EntityModel {
  const doc = loaded.entity;
  const typeName = pascalCase(doc.name);
  const context: EntityContext = {
    typeName,
    entityName: doc.name,
    byName,
    integerKeyed,
    constants: [],
    readers: [],
    // The entity's own types: the record, what a POST/PUT may send, a PATCH body.
    used: new Set([typeName, `${typeName}Input`, `${typeName}Patch`]),
    refs: new Set(),
  };
  const singleRecord = doc.singleRecord === true;
  // A single-record entity with no or several lk fields is addressed by lkValue alone, stored in a
  // fixed key column; its lk fields (if any) are ordinary fields that are required, as in Gemini.
  const fixedKey = hasFixedKey(doc);
  const table = tableOf(doc, integerKeyed);
  const lkSet = new Set(doc.lk);
  const fields = doc.fields.map((field) => ({
    ...fieldModel(field, context, [], lkSet.has(field.name) && !fixedKey, lkSet.has(field.name)),
    ...topLevelExtras(field, loaded),
  }));
  nameVariables(fields, context);
  const keyFields = (fixedKey ? [] : doc.lk).map((name) => {
    const field = fields.find((candidate) => candidate.name === name);
    if (field === undefined) throw new Error(`lk field ${name} of ${doc.name} was not validated`);
    return field;
  });
  return {
    name: doc.name,
    ...(doc.displayName === undefined ? {} : { displayName: doc.displayName }),
    ...(doc.description === undefined ? {} : { description: doc.description }),
    typeName,
    camelName: camelCase(doc.name),
    fileName: kebabCase(doc.name),
    pathName: doc.name.toLowerCase(),
    tableName: table.table,
    lk: doc.lk,
    lkSeparator: doc.lkSeparator ?? DEFAULT_KEY_SEPARATOR,
    singleRecord,
    ...(singleRecord ? { lkValue: singleRecordIdOf(doc) } : {}),
    fields,
    keyFields,
    storageKey: table.key,
    ...(fixedKey ? { fixedKeyColumn: FIXED_KEY_COLUMN } : {}),
    constants: context.constants,
    objectReaders: context.readers,
    table,
    integerKeyed: [...context.refs].sort(compareText),
    document: loaded.document,
    documentHash,
    sourceFile: loaded.position.file,
    ...(doc.renamedFrom === undefined ? {} : { renamedFrom: doc.renamedFrom }),
    position: modelPosition(loaded.position),
  };
}

/**
 * The local variables of the readers: field names, except where one would shadow a name the
 * module uses (a converter, a reader, a field set, a runtime function). Set once all of those
 * are known, before the model is frozen.
 */
function nameVariables(fields: readonly FieldModel[], context: EntityContext): void {
  const taken = new Set([
    ...context.constants.map((constant) => constant.name),
    ...context.readers.flatMap((reader) => [reader.functionName, reader.fieldSetName]),
    `read${context.typeName}`,
    `${camelCase(context.typeName)}Fields`,
    'document',
  ]);
  const visit = (list: readonly FieldModel[]): void => {
    for (const field of list)
      (field as { variable: string }).variable = variableName(field.name, taken);
  };
  visit(fields);
  for (const reader of context.readers) visit(reader.fields);
}

/** What only a table column has: its migration settings and its position, when known. */
function topLevelExtras(
  field: FieldDoc,
  loaded: LoadedEntity,
): Pick<FieldModel, 'default' | 'renamedFrom' | 'position'> {
  const position = loaded.fieldPositions?.[field.name];
  return {
    ...(field.default === undefined ? {} : { default: field.default }),
    ...(field.renamedFrom === undefined ? {} : { renamedFrom: field.renamedFrom }),
    ...(position === undefined ? {} : { position: modelPosition(position) }),
  };
}

interface EntityContext {
  readonly typeName: string;
  /** The entity's name as declared, for constraint messages. */
  readonly entityName: string;
  readonly byName: ReadonlyMap<string, LoadedEntity>;
  /** Entities whose ids are numbers (one INTEGER key field). */
  readonly integerKeyed: ReadonlySet<string>;
  /** The integer-keyed entities this one refers to, found while reading its fields. */
  readonly refs: Set<string>;
  readonly constants: ConverterConstant[];
  readonly readers: ObjectReader[];
  /** Identifiers taken so far in this entity's module. */
  readonly used: Set<string>;
}

function fieldModel(
  field: FieldDoc,
  context: EntityContext,
  parents: readonly string[],
  isKey: boolean,
  inLk = isKey,
): FieldModel {
  const path = [...parents, field.name];
  const typeModel = typeModelOf(field, context, path);
  const columnKind = columnKindOf(field, context.integerKeyed);
  return {
    ...typeModel,
    name: field.name,
    variable: variableName(field.name),
    required: inLk || field.required === true,
    ...(field.displayName === undefined ? {} : { displayName: field.displayName }),
    ...(field.description === undefined ? {} : { description: field.description }),
    indexed: field.index === true,
    ciIndexed: field.index === 'ci',
    isKey,
    columnKind,
    ...(field.generated === undefined ? {} : { generated: field.generated }),
  };
}

/**
 * Builds the converter of a value, registering the constants and readers it needs; a value with
 * constraints (SPEC §16) gets its converter wrapped in `constrained(...)`.
 */
function typeModelOf(
  config: TypeConfigDoc,
  context: EntityContext,
  path: readonly string[],
): TypeModel {
  const model = unconstrainedModelOf(config, context, path);
  const constraints = constraintsOf(config);
  if (constraints === undefined) return model;
  const stem = uniqueStem(context, `${context.typeName}${path.map(pascalCase).join('')}Checked`);
  const converter = addConstant(context, `to${stem}`, 'constrained', model.converter, [
    config.type,
    { ...constraints },
    context.entityName,
  ]);
  return { ...model, converter, constraints };
}

/** The constraint keys `config` declares, or undefined when it declares none. */
function constraintsOf(config: TypeConfigDoc): FieldConstraints | undefined {
  const result: Record<string, number | string> = {};
  for (const key of CONSTRAINT_KEYS) {
    const value = config[key];
    if (value !== undefined) result[key] = value;
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

function unconstrainedModelOf(
  config: TypeConfigDoc,
  context: EntityContext,
  path: readonly string[],
): TypeModel {
  const stem = uniqueStem(context, `${context.typeName}${path.map(pascalCase).join('')}`);
  const scalar = SCALAR_CONVERTERS[config.type];
  if (scalar !== undefined) return { type: config.type, converter: scalar };
  switch (config.type) {
    case 'ENUM': {
      const values = config.enums ?? [];
      return {
        type: 'ENUM',
        converter: addConstant(context, `to${stem}`, 'enumConverter', values),
        values,
      };
    }
    case 'SELECT': {
      const values = (config.select?.elems ?? []).map((elem) => elem.value);
      return {
        type: 'SELECT',
        converter: addConstant(context, `to${stem}`, 'selectConverter', values),
        values,
      };
    }
    case 'OBJECT': {
      const fields = objectFields(config.object?.fields ?? [], context, path, stem);
      return {
        type: 'OBJECT',
        converter: `read${stem}`,
        fields,
        objectType: stem,
      };
    }
    case 'DICTIONARY': {
      const entryStem = [...path, 'entry'];
      const fields = objectFields(config.dict?.fields ?? [], context, entryStem, `${stem}Entry`);
      const converter = addConstant(context, `to${stem}`, 'dictionaryOf', `read${stem}Entry`);
      return {
        type: 'DICTIONARY',
        converter,
        fields,
        objectType: `${stem}Entry`,
      };
    }
    case 'ARRAY': {
      if (config.array === undefined)
        throw new Error(`ARRAY at ${path.join('.')} has no element type`);
      const element = typeModelOf(config.array, context, [...path, 'item']);
      return {
        type: 'ARRAY',
        converter: addConstant(context, `to${stem}`, 'arrayOf', element.converter),
        element,
      };
    }
    case 'ENTITY_REF': {
      const target = context.byName.get((config.entityRef?.entity ?? '').toUpperCase());
      const targetName = target?.entity.name ?? config.entityRef?.entity ?? '';
      if (context.integerKeyed.has(targetName.toUpperCase())) {
        context.refs.add(targetName);
        return {
          type: 'ENTITY_REF',
          converter: 'toRefInteger',
          refEntity: targetName,
        };
      }
      return {
        type: 'ENTITY_REF',
        converter: 'toRefText',
        refEntity: targetName,
      };
    }
    default:
      throw new Error(`No converter for type ${config.type}`);
  }
}

function objectFields(
  docs: readonly FieldDoc[],
  context: EntityContext,
  path: readonly string[],
  typeName: string,
): FieldModel[] {
  // Register the reader before its inner fields so readers are listed outermost first.
  const reader: { -readonly [K in keyof ObjectReader]: ObjectReader[K] } = {
    functionName: `read${typeName}`,
    typeName,
    fieldSetName: `${camelCase(typeName)}Fields`,
    fields: [],
    label: path.join('.'),
  };
  context.readers.push(reader);
  const fields = docs.map((doc) => fieldModel(doc, context, path, false));
  reader.fields = fields;
  return fields;
}

/**
 * `tags.item` and a field named `tagsItem` would share a stem, a field named `input` would give
 * the entity's input type's name: a later one gets a number. A stem names the value's types in
 * both shapes (`ProductDim`, `ProductDimInput`), so both must be free.
 */
function uniqueStem(context: EntityContext, stem: string): string {
  let candidate = stem;
  for (
    let suffix = 2;
    context.used.has(candidate) || context.used.has(`${candidate}Input`);
    suffix++
  )
    candidate = `${stem}${suffix}`;
  context.used.add(candidate);
  context.used.add(`${candidate}Input`);
  return candidate;
}

function addConstant(
  context: EntityContext,
  name: string,
  factory: ConverterConstant['factory'],
  argument: ConverterConstant['argument'],
  extra?: readonly JsonValue[],
): string {
  context.constants.push({ name, factory, argument, ...(extra === undefined ? {} : { extra }) });
  return name;
}

/** Entity names that differ but map to the same type or file name would overwrite each other. */
function findNameCollisions(entities: readonly LoadedEntity[]): Diagnostic[] {
  const seen = new Map<string, LoadedEntity>();
  const diagnostics: Diagnostic[] = [];
  for (const loaded of entities) {
    const typeName = pascalCase(loaded.entity.name);
    const previous = seen.get(typeName);
    if (previous !== undefined) {
      diagnostics.push({
        ...loaded.position,
        code: 'NAME_COLLISION',
        message: `Entity ${loaded.entity.name} and entity ${previous.entity.name} would both generate the type ${typeName}; rename one of them`,
      });
    } else {
      seen.set(typeName, loaded);
    }
  }
  return diagnostics;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * A source position as the model keeps it: for diagnostics, and left out of the model's JSON.
 * That JSON keys the cache of generated files (cli/generate/emit.ts), and no generated file shows
 * a position, which spells the schema file as the user named it: the output must not depend on
 * the working directory.
 */
export function modelPosition(position: SourcePosition): SourcePosition {
  return Object.defineProperty({ ...position }, 'toJSON', { value: () => undefined });
}
