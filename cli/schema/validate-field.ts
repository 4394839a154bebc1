/**
 * Validation of field lists, fields and type configurations (the recursive part of an ENTITY
 * document: OBJECT and DICTIONARY hold fields, ARRAY holds an element type configuration).
 */
import type {
  FieldDoc,
  FieldType,
  JsonValue,
  OnDeleteRule,
  SelectElemDoc,
  TypeConfigDoc,
} from './types.js';
import { checkConstraints } from '@entity-gen/runtime/convert';
import {
  GENERATORS,
  KEY_GENERATORS,
  SERVER_SET_GENERATORS,
  type Generator,
} from '@entity-gen/runtime/schema';
import { readConstraints } from './constraints.js';
import { convertDefault } from './default-value.js';
import { knownType } from './structure.js';
import { toJsonValue, type MapEntry, type MapNode } from './node.js';
import type { Position, Reporter } from './report.js';
import { suggestionSuffix } from './suggest.js';
import {
  capitalize,
  describeNode,
  entryOf,
  readBoolean,
  readMap,
  readSeq,
  readString,
  readStringList,
} from './values.js';

/** Types stored as JSON or as large blobs, which a storage index cannot serve. */
export const NOT_INDEXABLE: ReadonlySet<FieldType> = new Set([
  'OBJECT',
  'ARRAY',
  'DICTIONARY',
  'ANY',
  'B64_IMAGE',
  'GEOHASH_LOCATION',
]);

const ON_DELETE_RULES: readonly OnDeleteRule[] = ['RESTRICT', 'EMPTY', 'DELETE'];

/** What SQL and other tools call the rules, for suggestions an edit distance misses. */
const ON_DELETE_ALIASES: ReadonlyMap<string, OnDeleteRule> = new Map<string, OnDeleteRule>([
  ['CASCADE', 'DELETE'],
  ['SET_NULL', 'EMPTY'],
  ['NULLIFY', 'EMPTY'],
  ['CLEAR', 'EMPTY'],
  ['NO_ACTION', 'RESTRICT'],
  ['PROTECT', 'RESTRICT'],
]);

const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keys that would reach an object's prototype if a record used them as property names. */
const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** Prefix of the storage's bookkeeping columns (created/updated time, version). */
const STORAGE_PREFIX = '_eg_';

/** An ENTITY_REF found while validating, resolved once every file is loaded. */
export interface EntityRefUse {
  readonly entity: string;
  readonly position: Position;
  /** What holds the reference, e.g. `field 'category' of entity PRODUCT`. */
  readonly owner: string;
  /** `category`, `tags[]`, `address.shop`: where the reference sits in the record. */
  readonly path: string;
  /** The integrity rule, when the reference declares one, and where it is written. */
  readonly onDelete?: { readonly rule: OnDeleteRule; readonly position: Position };
}

/** What the entity-level checks (lk, tree, refDisplayFields) need to know about a field. */
export interface FieldInfo {
  readonly name: string;
  readonly namePosition: Position;
  readonly type: FieldType | undefined;
  /** The allowed values of an ENUM or SELECT field, when they could be read. */
  readonly values?: readonly string[];
}

/** Shared by every field of one entity. */
export interface EntityScope {
  readonly reporter: Reporter;
  /** `entity PRODUCT` */
  readonly entityLabel: string;
  readonly refs: EntityRefUse[];
}

/** Where a list of fields sits. */
interface ListPlace {
  /** Prepended to field names to form paths: '' at top level, `address.` inside an object. */
  readonly pathPrefix: string;
  /** Names the list for fields that have no usable name, e.g. `entity PRODUCT`. */
  readonly owner: string;
  readonly topLevel: boolean;
}

/** Where a type configuration sits: a field, or an array element. */
interface ConfigPlace {
  /** `field 'price' of entity PRODUCT` or `array element 'tags[]' of entity PRODUCT`. */
  readonly label: string;
  /** `price`, `tags[]`: the prefix of inner paths. */
  readonly path: string;
  /** Names of the fields next to the field this configuration belongs to (for any.typeField). */
  readonly siblings: readonly string[];
  readonly selfName: string | undefined;
}

export interface FieldListResult {
  readonly fields: FieldDoc[];
  readonly infos: FieldInfo[];
}

/**
 * Validates a `fields` list: each field fully (recursively), names unique case-insensitively,
 * at least one field. `entry` is the `fields` key of its owner.
 */
export function validateFieldList(
  entry: MapEntry,
  place: ListPlace,
  scope: EntityScope,
): FieldListResult {
  const result: FieldListResult = { fields: [], infos: [] };
  const seq = readSeq(entry);
  if (seq === undefined) return result;
  if (seq.items.length === 0) return result;
  const siblings = seq.items.flatMap((item) => {
    const name = item.kind === 'map' ? entryOf(item, 'name')?.value : undefined;
    return name?.kind === 'scalar' && typeof name.value === 'string' ? [name.value] : [];
  });
  seq.items.forEach((item, index) => {
    if (item.kind !== 'map') return;
    const { doc, info } = validateField(item, index, place, siblings, scope);
    if (info !== undefined) checkUniqueField(info, result.infos, place, scope);
    if (info !== undefined) result.infos.push(info);
    if (doc !== undefined) result.fields.push(doc);
  });
  return result;
}

/** SQL column names (and our record lookups) ignore case, so `price` and `Price` collide. */
function checkUniqueField(
  info: FieldInfo,
  earlier: readonly FieldInfo[],
  place: ListPlace,
  scope: EntityScope,
): void {
  const first = earlier.find((other) => other.name.toLowerCase() === info.name.toLowerCase());
  if (first === undefined) return;
  const why = place.topLevel
    ? 'field names are compared case-insensitively because SQL column names are case-insensitive'
    : 'field names are compared case-insensitively';
  const message =
    `Duplicate field '${info.name}' in ${place.owner}: '${first.name}' is already declared at ` +
    `line ${first.namePosition.line}, column ${first.namePosition.column} (${why})`;
  scope.reporter.report(info.namePosition, 'DUPLICATE_FIELD', message);
}

function validateField(
  map: MapNode,
  index: number,
  place: ListPlace,
  siblings: readonly string[],
  scope: EntityScope,
): { doc: FieldDoc | undefined; info: FieldInfo | undefined } {
  const unnamed = `field #${index + 1} of ${place.owner}`;
  const nameEntry = entryOf(map, 'name');
  const name = nameEntry === undefined ? undefined : readString(nameEntry);
  if (name !== undefined && nameEntry !== undefined) {
    checkFieldName(name, nameEntry.value.position, place, scope);
  }
  const path = name === undefined ? undefined : `${place.pathPrefix}${name}`;
  const label = path === undefined ? unnamed : `field '${path}' of ${scope.entityLabel}`;
  const configPlace: ConfigPlace = {
    label,
    path: path ?? `${place.pathPrefix}#${index + 1}`,
    siblings,
    selfName: name,
  };
  const config = validateTypeConfig(map, configPlace, scope);
  const extras = readFieldExtras(map, label, place, config?.type, scope);
  const renamedFrom = readRenamedFrom(map, label, place, name, scope.reporter);
  const info =
    name === undefined || nameEntry === undefined
      ? undefined
      : {
          name,
          namePosition: nameEntry.value.position,
          type: config?.type,
          ...allowedValues(config),
        };
  if (name === undefined || config === undefined) {
    if (!place.topLevel) reportNestedDefault(map, label, scope.reporter);
    return { doc: undefined, info };
  }
  const doc: FieldDoc = {
    name,
    ...config,
    ...extras,
    ...(renamedFrom === undefined ? {} : { renamedFrom }),
  };
  const fallback = readDefault(map, label, place, doc, scope.reporter);
  return { doc: fallback === undefined ? doc : { ...doc, default: fallback }, info };
}

/**
 * `default`: only on top-level fields (it fills a column in a migration), never null, and a
 * value of the field's type; returned in canonical form.
 */
function readDefault(
  map: MapNode,
  label: string,
  place: ListPlace,
  field: FieldDoc,
  reporter: Reporter,
): JsonValue | undefined {
  const entry = entryOf(map, 'default');
  if (entry === undefined) return undefined;
  if (!place.topLevel) {
    reportNestedDefault(map, label, reporter);
    return undefined;
  }
  const value = toJsonValue(entry.value);
  if (value === null) {
    const message = `'default' of ${label} must not be null; leave it out for no default`;
    reporter.report(entry.value.position, 'INVALID_DEFAULT', message);
    return undefined;
  }
  const converted = convertDefault(value, field);
  if ('value' in converted) {
    // An insert may store the default (SPEC §16), so it must meet the field's own constraints.
    const issues: Parameters<typeof checkConstraints>[5] = [];
    if (checkConstraints(converted.value, field.type, field, 'x', [field.name], issues)) {
      return converted.value;
    }
    const why = issues[0]?.message.replace(/^Field \S+ of Entity x /, '') ?? '';
    const message = `'default' of ${label} breaks the field's constraints: it ${why}`;
    reporter.report(entry.value.position, 'INVALID_DEFAULT', message);
    return undefined;
  }
  const shown = converted.problems.slice(0, 3).join('; ');
  const more = converted.problems.length > 3 ? ` (and ${converted.problems.length - 3} more)` : '';
  const message = `'default' of ${label} is not a valid ${field.type} value: ${shown}${more}`;
  reporter.report(entry.value.position, 'INVALID_DEFAULT', message);
  return undefined;
}

function reportNestedDefault(map: MapNode, label: string, reporter: Reporter): void {
  const entry = entryOf(map, 'default');
  if (entry === undefined) return;
  const message =
    `'default' of ${label} has no effect: only top-level fields (table columns) have a default, ` +
    `which migrations use to fill existing records`;
  reporter.report(entry.keyPosition, 'INVALID_DEFAULT', message);
}

/** `renamedFrom`: the previous name of a top-level field, a valid field name other than its own. */
function readRenamedFrom(
  map: MapNode,
  label: string,
  place: ListPlace,
  name: string | undefined,
  reporter: Reporter,
): string | undefined {
  const entry = entryOf(map, 'renamedFrom');
  if (entry === undefined) return undefined;
  if (!place.topLevel) {
    const message =
      `'renamedFrom' of ${label} is not supported: only top-level fields (table columns) can be ` +
      `renamed by a migration`;
    reporter.report(entry.keyPosition, 'INVALID_RENAMED_FROM', message);
    return undefined;
  }
  const previous = readString(entry);
  if (previous === undefined) return undefined;
  const position = entry.value.position;
  if (!FIELD_NAME_PATTERN.test(previous)) {
    const message = `'renamedFrom' of ${label} must be a field name, not ${JSON.stringify(previous)}`;
    reporter.report(position, 'INVALID_RENAMED_FROM', message);
    return undefined;
  }
  if (previous === name) {
    const message = `'renamedFrom' of ${label} names the field itself; give the field's previous name`;
    reporter.report(position, 'INVALID_RENAMED_FROM', message);
    return undefined;
  }
  return previous;
}

function checkFieldName(
  name: string,
  position: Position,
  place: ListPlace,
  scope: EntityScope,
): void {
  const { reporter, entityLabel } = scope;
  if (!FIELD_NAME_PATTERN.test(name)) {
    const message =
      `Field name '${name}' in ${place.owner} is invalid: it must start with a letter or '_' ` +
      `and contain only letters, digits and '_'`;
    reporter.report(position, 'INVALID_NAME', message);
  } else if (PROTOTYPE_KEYS.includes(name)) {
    const message = `Field name '${name}' in ${place.owner} is reserved: it is a JavaScript prototype key`;
    reporter.report(position, 'RESERVED_NAME', message);
  } else if (place.topLevel && name.toLowerCase().startsWith(STORAGE_PREFIX)) {
    const message =
      `Field name '${name}' of ${entityLabel} is reserved: names starting with '${STORAGE_PREFIX}' ` +
      `are the storage's bookkeeping columns`;
    reporter.report(position, 'RESERVED_NAME', message);
  }
}

/** The keys a field has beyond its type configuration. */
function readFieldExtras(
  map: MapNode,
  label: string,
  place: ListPlace,
  type: FieldType | undefined,
  scope: EntityScope,
): Pick<FieldDoc, 'required' | 'displayName' | 'description' | 'index' | 'unique' | 'generated'> {
  const { reporter } = scope;
  const extras: {
    required?: boolean;
    displayName?: string;
    description?: string;
    index?: boolean | 'ci';
    unique?: boolean;
    generated?: Generator;
  } = {};
  const required = entryOf(map, 'required');
  if (required !== undefined) {
    assignDefined(extras, 'required', readBoolean(required));
  }
  for (const key of ['displayName', 'description'] as const) {
    const entry = entryOf(map, key);
    if (entry !== undefined) assignDefined(extras, key, readString(entry));
  }
  const indexEntry = entryOf(map, 'index');
  const index = indexEntry === undefined ? undefined : readIndex(indexEntry, label, reporter);
  if (index === true && indexEntry !== undefined) {
    checkIndexable(indexEntry, label, place, type, reporter, ['index', 'indexed', 'INVALID_INDEX']);
  } else if (index === 'ci' && indexEntry !== undefined) {
    checkCiIndexable(indexEntry, label, place, type, reporter);
  }
  assignDefined(extras, 'index', index);
  const uniqueEntry = entryOf(map, 'unique');
  const unique = uniqueEntry === undefined ? undefined : readBoolean(uniqueEntry);
  if (unique === true && uniqueEntry !== undefined) {
    checkIndexable(uniqueEntry, label, place, type, reporter, [
      'unique',
      'unique',
      'INVALID_UNIQUE',
    ]);
  }
  assignDefined(extras, 'unique', unique);
  const generatedEntry = entryOf(map, 'generated');
  if (generatedEntry !== undefined) {
    assignDefined(
      extras,
      'generated',
      readGenerated(map, generatedEntry, label, place, type, reporter),
    );
  }
  return extras;
}

/**
 * `generated`: one of the generators, on a top-level field of the type it fits, neither
 * `required` nor with a `default` (the server gives the value). Whether a key generator sits on
 * the single key field is checked with the entity (validate.ts).
 */
function readGenerated(
  map: MapNode,
  entry: MapEntry,
  label: string,
  place: ListPlace,
  type: FieldType | undefined,
  reporter: Reporter,
): Generator | undefined {
  const node = entry.value;
  const written = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
  const generator = GENERATORS.find((candidate) => candidate === written);
  if (generator === undefined) {
    const message =
      `'generated' of ${label} must be one of ${GENERATORS.join(', ')}, not ${describeNode(node)}` +
      (written === undefined ? '' : suggestionSuffix(written, GENERATORS, ''));
    reporter.report(node.position, 'INVALID_GENERATED', message);
    return undefined;
  }
  const fits = KEY_GENERATORS[generator] ?? SERVER_SET_GENERATORS[generator];
  if (!place.topLevel) {
    const message = `${capitalize(label)} cannot be generated: only top-level fields can have 'generated'`;
    reporter.report(node.position, 'INVALID_GENERATED', message);
  } else if (type !== undefined && type !== fits) {
    const message = `${capitalize(label)} has type ${type}, but generated: ${generator} gives ${fits} values`;
    reporter.report(node.position, 'INVALID_GENERATED', message);
  } else if (
    SERVER_SET_GENERATORS[generator] !== undefined &&
    readBooleanEntry(map, 'required') === true
  ) {
    const message = `${capitalize(label)} is set by the server (generated: ${generator}); it cannot be required: leave 'required' out`;
    reporter.report(node.position, 'INVALID_GENERATED', message);
  } else if (entryOf(map, 'default') !== undefined) {
    const message = `${capitalize(label)} is generated (${generator}); it cannot have a default`;
    reporter.report(node.position, 'INVALID_GENERATED', message);
  } else {
    return generator;
  }
  return undefined;
}

function readBooleanEntry(map: MapNode, key: string): boolean | undefined {
  const entry = entryOf(map, key);
  return entry === undefined ? undefined : readBoolean(entry);
}

/**
 * `index: true` and `unique: true` need a top-level field (a table column) of a type an index can
 * hold: `key` names the option, `verb` what it does to the field in the message.
 */
function checkIndexable(
  entry: MapEntry,
  label: string,
  place: ListPlace,
  type: FieldType | undefined,
  reporter: Reporter,
  [key, verb, code]: readonly ['index' | 'unique', string, 'INVALID_INDEX' | 'INVALID_UNIQUE'],
): void {
  if (!place.topLevel) {
    const message = `${capitalize(label)} cannot be ${verb}: only top-level fields (table columns) can have ${key}: true`;
    reporter.report(entry.value.position, code, message);
  } else if (type !== undefined && NOT_INDEXABLE.has(type)) {
    const message =
      `${capitalize(label)} has type ${type}, which cannot be ${verb}; ` +
      `${key}: true is for scalar types (not ${[...NOT_INDEXABLE].join(', ')})`;
    reporter.report(entry.value.position, code, message);
  }
}

/** `index`: true, false or `ci`. */
function readIndex(entry: MapEntry, label: string, reporter: Reporter): boolean | 'ci' | undefined {
  const node = entry.value;
  if (node.kind === 'scalar' && (typeof node.value === 'boolean' || node.value === 'ci')) {
    return node.value;
  }
  const written = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
  const message =
    `'index' of ${label} must be true, false or ci, not ${describeNode(node)}` +
    (written === undefined ? '' : suggestionSuffix(written, ['ci'], ''));
  reporter.report(node.position, 'INVALID_VALUE', message);
  return undefined;
}

/** The types stored as text that the case-insensitive operators compare. */
const CI_INDEXABLE: ReadonlySet<FieldType> = new Set(['STRING', 'ENUM', 'SELECT']);

/** `index: ci` needs a top-level text field (a table column the ci operators compare). */
function checkCiIndexable(
  entry: MapEntry,
  label: string,
  place: ListPlace,
  type: FieldType | undefined,
  reporter: Reporter,
): void {
  if (!place.topLevel) {
    const message = `${capitalize(label)} cannot be indexed: only top-level fields (table columns) can have index: ci`;
    reporter.report(entry.value.position, 'INVALID_INDEX', message);
  } else if (type !== undefined && !CI_INDEXABLE.has(type)) {
    const message =
      `${capitalize(label)} has type ${type}, which has no case-insensitive index; ` +
      `index: ci is for text fields (${[...CI_INDEXABLE].join(', ')}); use index: true`;
    reporter.report(entry.value.position, 'INVALID_INDEX', message);
  }
}

/**
 * Validates `type` and the configuration keys of a field or array element. Returns undefined
 * when the type itself is missing or unknown.
 */
/** `{values}` of an ENUM or SELECT configuration; `{}` for other types. */
function allowedValues(config: TypeConfigDoc | undefined): { values?: readonly string[] } {
  if (config?.enums !== undefined) return { values: config.enums };
  if (config?.select !== undefined)
    return { values: config.select.elems.map((elem) => elem.value) };
  return {};
}

function validateTypeConfig(
  map: MapNode,
  place: ConfigPlace,
  scope: EntityScope,
): TypeConfigDoc | undefined {
  const type = knownType(map);
  if (type === undefined) return undefined;
  const constraints = readConstraints(map, type, place.label, scope.reporter);
  return { type, ...readOwnConfig(map, type, place, scope), ...constraints };
}

type OwnConfig = Omit<TypeConfigDoc, 'type'>;

function readOwnConfig(
  map: MapNode,
  type: FieldType,
  place: ConfigPlace,
  scope: EntityScope,
): OwnConfig {
  switch (type) {
    case 'ENUM':
      return readEnums(map, place, scope.reporter);
    case 'SELECT':
      return readSelect(map, place, scope.reporter);
    case 'OBJECT':
      return readInnerFields(map, 'object', `${place.path}.`, place, scope);
    case 'DICTIONARY':
      return readInnerFields(map, 'dict', `${place.path}.*.`, place, scope);
    case 'ARRAY':
      return readArray(map, place, scope);
    case 'ENTITY_REF':
      return readEntityRef(map, place, scope);
    case 'ANY':
      return readAny(map, place, scope.reporter);
    case 'GEOHASH_LOCATION':
      return readGeoHashLocation(map);
    default:
      return {};
  }
}

function readEnums(map: MapNode, place: ConfigPlace, reporter: Reporter): OwnConfig {
  const entry = entryOf(map, 'enums');
  if (entry === undefined) return {};
  const values = readStringList(entry);
  if (values === undefined) return {};
  if (entry.value.kind === 'seq' && entry.value.items.length === 0) {
    reporter.report(
      entry.value.position,
      'EMPTY_ENUM',
      `'enums' of ${place.label} is empty; list at least one value`,
    );
  }
  const seen = new Map<string, string>();
  for (const { value, position } of values) {
    if (value === '') {
      reporter.report(
        position,
        'INVALID_VALUE',
        `Enum values of ${place.label} must not be empty strings`,
      );
      continue;
    }
    // Input is matched to enum values case-insensitively, so `open` and `OPEN` would be ambiguous.
    const first = seen.get(value.toLowerCase());
    if (first !== undefined) {
      const message =
        `Duplicate enum value '${value}' in ${place.label}: '${first}' is already listed ` +
        `(enum values are matched case-insensitively)`;
      reporter.report(position, 'EMPTY_ENUM', message);
    }
    seen.set(value.toLowerCase(), first ?? value);
  }
  return { enums: values.map(({ value }) => value) };
}

function readSelect(map: MapNode, place: ConfigPlace, reporter: Reporter): OwnConfig {
  const entry = entryOf(map, 'select');
  const select = entry === undefined ? undefined : readMap(entry);
  if (select === undefined) return {};
  const owner = `'select' of ${place.label}`;
  const elemsEntry = entryOf(select, 'elems');
  const elems = elemsEntry === undefined ? undefined : readSeq(elemsEntry);
  if (elems === undefined) return {};
  if (elems.items.length === 0) {
    reporter.report(
      elems.position,
      'EMPTY_ENUM',
      `'elems' of ${owner} is empty; list at least one option`,
    );
  }
  const docs: SelectElemDoc[] = [];
  const seen = new Map<string, Position>();
  elems.items.forEach((item, index) => {
    const elemOwner = `option #${index + 1} of ${owner}`;
    if (item.kind !== 'map') return;
    const doc = readSelectElem(item, elemOwner, seen, reporter);
    if (doc !== undefined) docs.push(doc);
  });
  return { select: { elems: docs } };
}

function readSelectElem(
  map: MapNode,
  owner: string,
  seen: Map<string, Position>,
  reporter: Reporter,
): SelectElemDoc | undefined {
  const valueEntry = entryOf(map, 'value');
  const value = valueEntry === undefined ? undefined : readString(valueEntry);
  if (value !== undefined && valueEntry !== undefined) {
    const position = valueEntry.value.position;
    const first = seen.get(value);
    if (value === '') {
      reporter.report(position, 'INVALID_VALUE', `'value' of ${owner} must not be empty`);
    } else if (first !== undefined) {
      const message = `Duplicate select value '${value}' in ${owner}: it is already listed at line ${first.line}, column ${first.column}`;
      reporter.report(position, 'EMPTY_ENUM', message);
    } else {
      seen.set(value, position);
    }
  }
  const displayEntry = entryOf(map, 'displayName');
  const displayName = displayEntry === undefined ? undefined : readString(displayEntry);
  const driveEntry = entryOf(map, 'driveFields');
  if (value === undefined) return undefined;
  const doc: { value: string; displayName?: string; driveFields?: JsonValue } = { value };
  assignDefined(doc, 'displayName', displayName);
  // Gemini metadata for its admin UI: any JSON is kept as written.
  if (driveEntry !== undefined) doc.driveFields = toJsonValue(driveEntry.value);
  return doc;
}

/** OBJECT `object: {fields}` and DICTIONARY `dict: {fields}`: full field definitions, recursively. */
function readInnerFields(
  map: MapNode,
  key: 'object' | 'dict',
  pathPrefix: string,
  place: ConfigPlace,
  scope: EntityScope,
): OwnConfig {
  const entry = entryOf(map, key);
  const inner = entry === undefined ? undefined : readMap(entry);
  if (inner === undefined) return {};
  const owner = `'${key}' of ${place.label}`;
  const fieldsEntry = entryOf(inner, 'fields');
  if (fieldsEntry === undefined) return {};
  const { fields } = validateFieldList(fieldsEntry, { pathPrefix, owner, topLevel: false }, scope);
  return key === 'object' ? { object: { fields } } : { dict: { fields } };
}

/** ARRAY `array: {type, …element config}`; element configurations nest (arrays of arrays). */
function readArray(map: MapNode, place: ConfigPlace, scope: EntityScope): OwnConfig {
  const entry = entryOf(map, 'array');
  const element = entry === undefined ? undefined : readMap(entry);
  if (element === undefined) return {};
  const path = `${place.path}[]`;
  const label = `array element '${path}' of ${scope.entityLabel}`;
  const config = validateTypeConfig(element, { ...place, label, path }, scope);
  return config === undefined ? {} : { array: config };
}

function readEntityRef(map: MapNode, place: ConfigPlace, scope: EntityScope): OwnConfig {
  const entry = entryOf(map, 'entityRef');
  const ref = entry === undefined ? undefined : readMap(entry);
  if (ref === undefined) return {};
  const entityEntry = entryOf(ref, 'entity');
  const entity = entityEntry === undefined ? undefined : readString(entityEntry);
  if (entityEntry === undefined || entity === undefined) return {};
  const ruleEntry = entryOf(ref, 'onDelete');
  const written = ruleEntry === undefined ? undefined : readString(ruleEntry);
  const rule = ON_DELETE_RULES.find((candidate) => candidate === written);
  if (ruleEntry !== undefined && written !== undefined && rule === undefined) {
    const alias = ON_DELETE_ALIASES.get(written.toUpperCase().replace(/[\s-]/g, '_'));
    const message =
      `'onDelete' of ${place.label} must be RESTRICT, EMPTY or DELETE, not '${written}'` +
      (alias === undefined
        ? suggestionSuffix(written, ON_DELETE_RULES)
        : `; did you mean '${alias}'?`);
    scope.reporter.report(ruleEntry.value.position, 'INVALID_VALUE', message);
  }
  scope.refs.push({
    entity,
    position: entityEntry.value.position,
    owner: place.label,
    path: place.path,
    ...(rule === undefined || ruleEntry === undefined
      ? {}
      : { onDelete: { rule, position: ruleEntry.value.position } }),
  });
  return { entityRef: rule === undefined ? { entity } : { entity, onDelete: rule } };
}

/** ANY: optional Gemini metadata `any: {typeField}` naming the sibling that holds the value's type. */
function readAny(map: MapNode, place: ConfigPlace, reporter: Reporter): OwnConfig {
  const entry = entryOf(map, 'any');
  const any = entry === undefined ? undefined : readMap(entry);
  if (any === undefined) return {};
  const owner = `'any' of ${place.label}`;
  const typeFieldEntry = entryOf(any, 'typeField');
  const typeField = typeFieldEntry === undefined ? undefined : readString(typeFieldEntry);
  if (typeFieldEntry === undefined || typeField === undefined) return {};
  const candidates = place.siblings.filter((name) => name !== place.selfName);
  const sibling = candidates.find((name) => name.toLowerCase() === typeField.toLowerCase());
  if (sibling === undefined) {
    const message =
      `'typeField' of ${owner} names '${typeField}', which is not a sibling field` +
      suggestionSuffix(typeField, candidates);
    reporter.report(typeFieldEntry.value.position, 'INVALID_ANY_TYPE_FIELD', message);
    return {};
  }
  // References are stored with the declared spelling so later stages can compare exactly.
  return { any: { typeField: sibling } };
}

function readGeoHashLocation(map: MapNode): OwnConfig {
  const entry = entryOf(map, 'geoHashLocation');
  const geo = entry === undefined ? undefined : readMap(entry);
  if (geo === undefined) return {};
  const flagEntry = entryOf(geo, 'includeGooglePlaceId');
  const includeGooglePlaceId = flagEntry === undefined ? undefined : readBoolean(flagEntry);
  return { geoHashLocation: includeGooglePlaceId === undefined ? {} : { includeGooglePlaceId } };
}

/** Sets `target[key]` only when `value` is defined, so optional properties stay absent. */
export function assignDefined<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}
