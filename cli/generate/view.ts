import type { EntityModel, FieldModel, ObjectReader, TypeModel } from '../model/types.js';
import type { JsonValue } from '../schema/types.js';
import {
  arrayLiteral,
  arrowFunction,
  call,
  comparison,
  conditional,
  declaration,
  functionSignature,
  ifStatement,
  importDeclaration,
  isShortArgument,
  jsonLiteral,
  logicalTest,
  objectLiteral,
  printDoc,
  printStatements,
  property,
  stringLiteral,
  type Doc,
} from './layout/typescript.js';

/** Runtime exports a generated validator module may call, by name. */
const RUNTIME_CONVERTERS = new Set([
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
]);

/**
 * What the entity definition template reads: the fixed text is in the template, the statements
 * whose layout depends on names and values are laid out here (see ./layout).
 */
export function definitionView(entity: EntityModel): object {
  const compositeKey = entity.keyFields.length > 1;
  const used = new Set<string>();
  for (const field of allFields(entity.fields))
    if (RUNTIME_CONVERTERS.has(field.converter)) used.add(field.converter);
  for (const constant of entity.constants) {
    used.add(constant.factory);
    if (typeof constant.argument === 'string' && RUNTIME_CONVERTERS.has(constant.argument))
      used.add(constant.argument);
  }
  const fixedKey = entity.fixedKeyColumn !== undefined;
  const values = [
    fixedKey ? 'parseSingleRecordId' : 'parseKey',
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
  const runtimeImports = sortImportNames([...values, ...types.map((name) => `type ${name}`)]);
  const typeImports = [
    entity.typeName,
    ...entity.objectReaders.map((reader) => reader.typeName),
  ].sort();
  return {
    ...entity,
    keyList: !fixedKey
      ? entity.lk.join(', ')
      : entity.lk.length === 0
        ? 'lkValue (no key field)'
        : // Gemini keeps the lk of a single-record entity as metadata; its fields are plain ones.
          'lkValue (not by its lk fields)',
    compositeKey,
    fixedKey,
    recordId: entity.lkValue === undefined ? '' : stringLiteral(entity.lkValue),
    runtimeImport: printDoc(importDeclaration(runtimeImports, '@entity-gen/runtime')),
    typesImport: printDoc(importDeclaration(typeImports, './types.js', true)),
    tableDeclaration: printDoc(tableDeclaration(entity)),
    moduleConstants: printStatements(moduleConstants(entity)),
    reader: {
      signature: printDoc(
        functionSignature(
          `export function read${entity.typeName}`,
          ['input: unknown', 'issues: Issue[]'],
          [entity.typeName, 'undefined'],
        ),
      ),
      readBody: printDoc(
        declaration(
          'const body',
          call('readRecordBody', ['input', stringLiteral(entity.name), 'issues']),
        ),
        { column: 2 },
      ),
      body: printStatements(
        [
          ...readerStatements(entity.camelName + 'Fields', entity.fields, 'RECORD_ROOT'),
          ...(compositeKey
            ? entity.keyFields.map((field) => [
                call('checkKeyPart', [
                  field.variable,
                  'KEY_SEPARATOR',
                  stringLiteral(field.name),
                  'issues',
                ]),
                ';',
              ])
            : []),
          ...readerEnd(entity.fields),
        ],
        2,
      ),
    },
    objectReaders: entity.objectReaders.map((reader) => objectReaderView(reader)),
    separator: stringLiteral(entity.lkSeparator),
    keyConverters: printDoc(
      declaration(
        'const keyConverters',
        arrayLiteral(entity.keyFields.map((field) => field.converter)),
      ),
    ),
    definitionDeclaration: printDoc(definitionDeclaration(entity, compositeKey)),
  };
}

/** `export const productTable: TableDescriptor = { … };` */
function tableDeclaration(entity: EntityModel): Doc {
  const fixedColumn =
    entity.fixedKeyColumn === undefined
      ? []
      : [
          objectLiteral([
            property('name', stringLiteral(entity.fixedKeyColumn), 'string'),
            property('kind', stringLiteral('text'), 'string'),
            property('fieldType', stringLiteral('STRING'), 'string'),
            property('required', 'true', 'keyword'),
            property('indexed', 'false', 'keyword'),
            property('fixed', 'RECORD_ID'),
          ]),
        ];
  const columns = [
    ...fixedColumn,
    ...entity.fields.map((field) =>
      objectLiteral([
        property('name', stringLiteral(field.name), 'string'),
        property('kind', stringLiteral(field.columnKind), 'string'),
        property('fieldType', stringLiteral(field.type), 'string'),
        property('required', String(field.required), 'keyword'),
        property('indexed', String(field.indexed), 'keyword'),
      ]),
    ),
  ];
  return declaration(
    `export const ${entity.camelName}Table: TableDescriptor`,
    objectLiteral([
      property('entity', stringLiteral(entity.name), 'string'),
      property('table', stringLiteral(entity.tableName), 'string'),
      property('columns', arrayLiteral(columns, { broken: columns.length > 1 })),
      property('key', jsonLiteral(entity.storageKey)),
    ]),
  );
}

/** The field-name sets of the record and its objects, and the converter constants. */
function moduleConstants(entity: EntityModel): Doc[] {
  const fieldSet = (name: string, fields: readonly FieldModel[]): Doc =>
    declaration(
      `const ${name}: ReadonlySet<string>`,
      call('new Set', [{ doc: jsonLiteral(fields.map((field) => field.name)), huggable: true }]),
    );
  return [
    fieldSet(`${entity.camelName}Fields`, entity.fields),
    ...entity.objectReaders.map((reader) => fieldSet(reader.fieldSetName, reader.fields)),
    ...entity.constants.map((constant) =>
      typeof constant.argument === 'string'
        ? declaration(
            `const ${constant.name}`,
            call(constant.factory, [constant.argument]),
            isShortArgument(constant.argument) ? 'break-after-operator' : 'fluid',
          )
        : declaration(
            `const ${constant.name}`,
            call(constant.factory, [{ doc: jsonLiteral(constant.argument), huggable: true }]),
          ),
    ),
  ];
}

/** What the template reads for one object reader function. */
function objectReaderView(reader: ObjectReader): object {
  return {
    label: reader.label,
    signature: printDoc(
      functionSignature(
        `function ${reader.functionName}`,
        ['value: unknown', 'parent: IssuePath', 'key: string | number', 'issues: Issue[]'],
        [reader.typeName, 'undefined'],
      ),
    ),
    body: printStatements(
      [
        ...readerStatements(reader.fieldSetName, reader.fields, 'path'),
        ...readerEnd(reader.fields),
      ],
      2,
    ),
  };
}

/** `rejectUnknownFields(…);` and one `const` per field: read, converted and checked. */
function readerStatements(fieldSet: string, fields: readonly FieldModel[], parent: string): Doc[] {
  return [
    [call('rejectUnknownFields', ['body', fieldSet, parent, 'issues']), ';'],
    ...fields.map((field) => {
      const value = `body.${field.name}`;
      const name = stringLiteral(field.name);
      const test = field.required
        ? logicalTest('||', [comparison(value, '==', 'null'), comparison(value, '===', "''")])
        : comparison(value, '==', 'null');
      const absent = field.required ? call('missing', [parent, name, 'issues']) : 'undefined';
      const converted = call(field.converter, [value, parent, name, 'issues']);
      return declaration(
        `const ${field.variable}`,
        conditional(test, absent, converted),
        'break-after-operator',
      );
    }),
  ];
}

/** The check that every required field is there, and the returned record. */
function readerEnd(fields: readonly FieldModel[]): Doc[] {
  const required = fields.filter((field) => field.required);
  const record = objectLiteral(
    fields.map((field) =>
      field.variable === field.name ? field.name : `${field.name}: ${field.variable}`,
    ),
  );
  return [
    ifStatement(
      '||',
      [...required.map((field) => `${field.variable} === undefined`), 'issues.length > start'],
      'return undefined;',
    ),
    ['return ', record, ';'],
  ];
}

/** `export const productDefinition: EntityDefinition<Product> = { … };` */
function definitionDeclaration(entity: EntityModel, compositeKey: boolean): Doc {
  const fixedKey = entity.fixedKeyColumn !== undefined;
  const keyValues = entity.keyFields.map((field) => `record.${field.name}`);
  const separator = stringLiteral(entity.lkSeparator);
  const idOf = (): Doc =>
    compositeKey
      ? [arrayLiteral(keyValues), '.join', call('', ['KEY_SEPARATOR'])]
      : call('String', [keyValues[0] as string]);
  const keyMembers = fixedKey
    ? [
        property('keyOf', arrowFunction('()', arrayLiteral(['RECORD_ID']), 'hug')),
        property('idOf', arrowFunction('()', 'RECORD_ID', 'expression')),
        property(
          'parseId',
          arrowFunction('(id)', call('parseSingleRecordId', ['id', 'RECORD_ID']), 'expression'),
        ),
      ]
    : [
        property('keyOf', arrowFunction('(record)', arrayLiteral(keyValues), 'hug')),
        property('idOf', arrowFunction('(record)', idOf(), 'expression')),
        property(
          'parseId',
          arrowFunction('(id)', call('parseKey', ['id', separator, 'keyConverters']), 'expression'),
        ),
      ];
  return declaration(
    `export const ${entity.camelName}Definition: EntityDefinition<${entity.typeName}>`,
    objectLiteral([
      property('name', stringLiteral(entity.name), 'string'),
      property('table', `${entity.camelName}Table`),
      property('keySeparator', separator, 'string'),
      fixedKey
        ? property('singleRecordId', 'RECORD_ID')
        : entity.singleRecord && entity.lkValue !== undefined
          ? property('singleRecordId', stringLiteral(entity.lkValue), 'string')
          : property('singleRecordId', 'undefined'),
      property('fields', jsonLiteral(fieldInfoOf(entity.fields))),
      property('read', `read${entity.typeName}`),
      ...keyMembers,
    ]),
  );
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

/**
 * The field tree the runtime uses to check filters and sort keys (the runtime's `FieldInfo`):
 * `{ type, fields?, element?, integerRef?, values? }` per field; `integerRef` marks an ENTITY_REF
 * to an entity with a single INTEGER key, whose ids are numbers.
 */
function fieldInfoOf(fields: readonly FieldModel[]): Record<string, JsonValue> {
  const info: Record<string, JsonValue> = {};
  for (const field of fields) info[field.name] = typeInfo(field);
  return info;
}

function typeInfo(model: TypeModel): Record<string, JsonValue> {
  const info: Record<string, JsonValue> = { type: model.type };
  if (model.type === 'OBJECT' && model.fields !== undefined)
    info.fields = fieldInfoOf(model.fields);
  if (model.element !== undefined) info.element = typeInfo(model.element);
  if (model.converter === 'toRefInteger') info.integerRef = true;
  if (model.values !== undefined) info.values = model.values;
  return info;
}

/** Import specifiers in the order the generated code lists them: by name, ignoring case and `type`. */
export function sortImportNames(names: readonly string[]): string[] {
  return [...names].sort((a, b) =>
    compareIgnoringCase(a.replace(/^type /, ''), b.replace(/^type /, '')),
  );
}

function compareIgnoringCase(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
