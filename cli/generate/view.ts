import type { EntityModel, FieldModel, TypeModel } from '../model/types.js';

/** Runtime exports a generated validator module may call, by name. */
const RUNTIME_CONVERTERS = [
  'arrayOf',
  'dictionaryOf',
  'enumConverter',
  'selectConverter',
  'toAny',
  'toB64Image',
  'toBoolean',
  'toDate',
  'toDateTime',
  'toDecimal',
  'toDouble',
  'toGeohashLocation',
  'toInteger',
  'toRefInteger',
  'toRefText',
  'toText',
];

/** Field as the templates see it. */
interface FieldView extends FieldModel {
  /** The local variable has the field's own name, so the object literal can use shorthand. */
  readonly sameVariable: boolean;
}

/** What the entity definition template reads. */
export function definitionView(entity: EntityModel): object {
  const code = [
    ...allFields(entity.fields).map((field) => field.converter),
    ...entity.constants.map((constant) => constant.init),
  ].join(' ');
  const used = RUNTIME_CONVERTERS.filter((name) => new RegExp(`\\b${name}\\b`).test(code));
  const compositeKey = entity.keyFields.length > 1;
  const values = [
    'parseKey',
    'readRecordBody',
    'RECORD_ROOT',
    'rejectUnknownFields',
    ...used,
    ...(allFields(entity.fields).some((field) => field.required) ? ['missing'] : []),
    ...(compositeKey ? ['checkKeyPart'] : []),
    ...(entity.objectReaders.length > 0 ? ['toObjectBody'] : []),
  ];
  const types = [
    'EntityDefinition',
    'Issue',
    'TableDescriptor',
    ...(entity.objectReaders.length > 0 ? ['IssuePath'] : []),
  ];
  const runtimeImports = [...values, ...types.map((name) => `type ${name}`)].sort((a, b) =>
    compareIgnoringCase(a.replace(/^type /, ''), b.replace(/^type /, '')),
  );
  return {
    ...entity,
    fields: entity.fields.map(fieldView),
    keyFields: entity.keyFields.map(fieldView),
    requiredFields: entity.fields.filter((field) => field.required).map(fieldView),
    objectReaders: entity.objectReaders.map((reader) => ({
      ...reader,
      fields: reader.fields.map(fieldView),
      requiredFields: reader.fields.filter((field) => field.required).map(fieldView),
      fieldNames: reader.fields.map((field) => field.name),
    })),
    fieldNames: entity.fields.map((field) => field.name),
    keyList: entity.lk.join(', '),
    compositeKey,
    firstKey: entity.lk[0],
    runtimeImports,
    typeImports: [entity.typeName, ...entity.objectReaders.map((reader) => reader.typeName)]
      .sort()
      .join(', '),
    fieldInfo: JSON.stringify(fieldInfoOf(entity.fields)),
  };
}

function fieldView(field: FieldModel): FieldView {
  return { ...field, sameVariable: field.variable === field.name };
}

/** Every field, nested ones included. */
function allFields(fields: readonly FieldModel[]): FieldModel[] {
  return fields.flatMap((field) => [field, ...allFields(nestedFields(field))]);
}

function nestedFields(model: TypeModel): readonly FieldModel[] {
  return [
    ...(model.fields ?? []),
    ...(model.element === undefined ? [] : nestedFields(model.element)),
  ];
}

interface FieldInfoJson {
  type: string;
  fields?: Record<string, FieldInfoJson>;
  element?: FieldInfoJson;
  /** ENTITY_REF to an entity with a single INTEGER key: ids are numbers. */
  integerRef?: true;
  values?: readonly string[];
}

/** The field tree the runtime uses to check filters and sort keys. */
function fieldInfoOf(fields: readonly FieldModel[]): Record<string, FieldInfoJson> {
  const info: Record<string, FieldInfoJson> = {};
  for (const field of fields) info[field.name] = typeInfo(field);
  return info;
}

function typeInfo(model: TypeModel): FieldInfoJson {
  const info: FieldInfoJson = { type: model.type };
  if (model.type === 'OBJECT' && model.fields !== undefined)
    info.fields = fieldInfoOf(model.fields);
  if (model.element !== undefined) info.element = typeInfo(model.element);
  if (model.converter === 'toRefInteger') info.integerRef = true;
  if (model.values !== undefined) info.values = model.values;
  return info;
}

function compareIgnoringCase(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
