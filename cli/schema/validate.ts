/**
 * Validation of one ENTITY document: the document wrapper, the entity's own keys (name, lk,
 * separator, single-record and tree settings, refDisplayFields) and, through validate-field,
 * every field. Checks that need all files (duplicate entities, ENTITY_REF targets) are in
 * references.ts.
 */
import {
  DEFAULT_KEY_SEPARATOR,
  DEFAULT_SINGLE_RECORD_ID,
  KEY_GENERATORS,
  type FieldSchema as FieldDoc,
  type IndexEntry,
} from '@entity-gen/runtime/schema';
import {
  KEY_FIELD_TYPES,
  SEARCHABLE_FIELD_TYPES,
  type EntityDoc,
  type FieldType,
} from './types.js';
import type { MapEntry, MapNode, SchemaNode, SeqNode } from './node.js';
import type { Position, Reporter } from './report.js';
import { reportStructure } from './structure.js';
import { suggestionSuffix } from './suggest.js';
import {
  assignDefined,
  NOT_INDEXABLE,
  validateFieldList,
  type EntityRefUse,
  type EntityScope,
  type FieldInfo,
} from './validate-field.js';
import {
  entryOf,
  readBoolean,
  readMap,
  readString,
  readSeq,
  readStringList,
  type PositionedString,
} from './values.js';

const ENTITY_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * Entity names are looked up case-insensitively, often as object keys; these two would hit
 * `Object.prototype` in such a lookup.
 */
const RESERVED_ENTITY_NAMES: readonly string[] = ['constructor', 'prototype'];

/** Record ids are the rest of a URL path, so the separator must not carry URL syntax. */
const URL_UNSAFE_SEPARATOR_CHARS: readonly string[] = ['/', '?', '#', '%'];

/** Gemini's default when a tree has no `parentField`. */
const DEFAULT_TREE_PARENT = 'parent';

/** One ENTITY document after validation; `entity` is undefined when a required part is invalid. */
export interface ValidatedDocument {
  readonly entity: EntityDoc | undefined;
  /** The entity's name as written, for the cross-file checks. */
  readonly name: PositionedString | undefined;
  /** Position of the document's `entity` key. */
  readonly entityKeyPosition: Position;
  readonly refs: readonly EntityRefUse[];
  /** The top-level fields' names and where they are written. */
  readonly fields: readonly FieldInfo[];
}

/**
 * Validates one document (`{type: ENTITY, entity: {...}}`), reporting every problem found.
 * Returns undefined when the node is not an ENTITY document at all.
 */
export function validateEntityDocument(
  root: SchemaNode,
  reporter: Reporter,
): ValidatedDocument | undefined {
  reportStructure(root, reporter);
  if (root.kind !== 'map') return undefined;
  const type = entryOf(root, 'type')?.value;
  if (type !== undefined && !(type.kind === 'scalar' && type.value === 'ENTITY')) return undefined;
  const entityEntry = entryOf(root, 'entity');
  const entityMap = entityEntry === undefined ? undefined : readMap(entityEntry);
  if (entityEntry === undefined || entityMap === undefined) return undefined;
  const refs: EntityRefUse[] = [];
  const { entity, name, fields } = validateEntity(entityMap, reporter, refs);
  return { entity, name, entityKeyPosition: entityEntry.keyPosition, refs, fields };
}

/** The key of a JSON file that names its JSON Schema, for editors; it is no part of the schema. */
export const SCHEMA_KEY = '$schema';

function validateEntity(
  map: MapNode,
  reporter: Reporter,
  refs: EntityRefUse[],
): {
  entity: EntityDoc | undefined;
  name: PositionedString | undefined;
  fields: readonly FieldInfo[];
} {
  const name = readEntityName(map, reporter);
  const scope: EntityScope = {
    reporter,
    entityLabel: name === undefined ? 'the entity' : `entity ${name.value}`,
    refs,
  };
  const label = scope.entityLabel;
  const fieldsEntry = entryOf(map, 'fields');
  const list =
    fieldsEntry === undefined
      ? undefined
      : validateFieldList(fieldsEntry, { pathPrefix: '', owner: label, topLevel: true }, scope);
  // Without a readable, non-empty fields list every name check below would only repeat that problem.
  const declared = fieldsEntry?.value.kind === 'seq' && fieldsEntry.value.items.length > 0;
  const fields = list !== undefined && declared ? list.infos : undefined;
  const singleRecord = readOptional(map, 'singleRecord', (entry) => readBoolean(entry));
  const separator = readSeparator(map, scope);
  const lk = readLk(map, fields, singleRecord === true, scope);
  const entity: Partial<Mutable<EntityDoc>> = readEntityTexts(map);
  assignDefined(entity, 'lkSeparator', separator);
  assignDefined(entity, 'singleRecord', singleRecord);
  assignDefined(entity, 'lkValue', readLkValue(map, singleRecord, scope));
  assignDefined(entity, 'softDelete', readSoftDelete(map, singleRecord, scope));
  assignDefined(
    entity,
    'history',
    readOptional(map, 'history', (entry) => readBoolean(entry)),
  );
  if (lk !== undefined && fields !== undefined) {
    checkKeyText(map, lk, fields, separator, singleRecord === true, entity.lkValue, scope);
  }
  if (fieldsEntry?.value.kind === 'seq') {
    checkGeneratedKeys(fieldsEntry.value, list?.fields, lk, singleRecord === true, scope);
  }
  assignDefined(entity, 'tree', readTree(map, fields, lk, scope));
  assignDefined(entity, 'refDisplayFields', readRefDisplayFields(map, fields, scope));
  assignDefined(entity, 'indexes', readIndexes(map, fields, scope));
  assignDefined(entity, 'search', readSearch(map, fields, scope));
  assignDefined(entity, 'searchLanguage', readSearchLanguage(map, scope));
  assignDefined(entity, 'renamedFrom', readEntityRenamedFrom(map, name, scope));
  const infos = list?.infos ?? [];
  if (name === undefined || lk === undefined || list === undefined) {
    return { entity: undefined, name, fields: infos };
  }
  return { entity: { name: name.value, lk, fields: list.fields, ...entity }, name, fields: infos };
}

/**
 * A key generator (`uuid`, `ulid`, `sequence`) belongs on the entity's single key field (not on a
 * single-record entity); a server-set generator never on a key field.
 */
function checkGeneratedKeys(
  seq: SeqNode,
  fields: readonly FieldDoc[] | undefined,
  lk: readonly string[] | undefined,
  singleRecord: boolean,
  scope: EntityScope,
): void {
  if (fields === undefined || lk === undefined) return;
  const { reporter, entityLabel } = scope;
  for (const item of seq.items) {
    if (item.kind !== 'map') continue;
    const name = entryOf(item, 'name')?.value;
    const entry = entryOf(item, 'generated');
    const field = fields.find(
      (candidate) => name?.kind === 'scalar' && candidate.name === name.value,
    );
    if (entry === undefined || field?.generated === undefined) continue;
    const generator = field.generated;
    const isKey = lk.includes(field.name);
    let message: string | undefined;
    if (KEY_GENERATORS[generator] !== undefined) {
      if (singleRecord)
        message = `Field '${field.name}' of ${entityLabel} cannot be generated (${generator}): a single-record entity has one record, with id lkValue`;
      else if (!isKey || lk.length !== 1)
        message = `Field '${field.name}' of ${entityLabel} cannot be generated (${generator}): a generated key must be the entity's single key field (lk: [${field.name}])`;
    } else if (isKey) {
      message = `Field '${field.name}' of ${entityLabel} is a key field; it cannot be set by the server (${generator})`;
    }
    if (message !== undefined) reporter.report(entry.value.position, 'INVALID_GENERATED', message);
  }
}

/** `renamedFrom`: the entity's previous name (a valid entity name other than its own). */
function readEntityRenamedFrom(
  map: MapNode,
  name: PositionedString | undefined,
  scope: EntityScope,
): string | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'renamedFrom');
  const previous = entry === undefined ? undefined : readString(entry);
  if (previous === undefined || entry === undefined) return undefined;
  if (!ENTITY_NAME_PATTERN.test(previous)) {
    const message = `'renamedFrom' of ${entityLabel} must be an entity name, not ${JSON.stringify(previous)}`;
    reporter.report(entry.value.position, 'INVALID_RENAMED_FROM', message);
    return undefined;
  }
  if (previous === name?.value) {
    const message = `'renamedFrom' of ${entityLabel} names the entity itself; give its previous name`;
    reporter.report(entry.value.position, 'INVALID_RENAMED_FROM', message);
    return undefined;
  }
  return previous;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const ENTITY_TEXT_KEYS = ['displayName', 'description', 'refDisplaySeparator'] as const;

/** The entity's optional free-text keys, kept as written. */
function readEntityTexts(map: MapNode): Partial<Mutable<EntityDoc>> {
  const texts: Partial<Mutable<EntityDoc>> = {};
  for (const key of ENTITY_TEXT_KEYS) {
    assignDefined(
      texts,
      key,
      readOptional(map, key, (entry) => readString(entry)),
    );
  }
  return texts;
}

/** Reads `key` with `read` when present. */
function readOptional<T>(
  map: MapNode,
  key: string,
  read: (entry: MapEntry) => T | undefined,
): T | undefined {
  const entry = entryOf(map, key);
  return entry === undefined ? undefined : read(entry);
}

function readEntityName(map: MapNode, reporter: Reporter): PositionedString | undefined {
  const entry = entryOf(map, 'name');
  if (entry === undefined) return undefined;
  const value = readString(entry);
  if (value === undefined) return undefined;
  const position = entry.value.position;
  if (!ENTITY_NAME_PATTERN.test(value)) {
    const message = `Entity name '${value}' is invalid: it must start with a letter and contain only letters, digits and '_'`;
    reporter.report(position, 'INVALID_NAME', message);
  } else if (RESERVED_ENTITY_NAMES.includes(value.toLowerCase())) {
    reporter.report(
      position,
      'RESERVED_NAME',
      `Entity name '${value}' is reserved: it is a JavaScript prototype key`,
    );
  }
  return { value, position };
}

/** The declared field `name` refers to; names are matched case-insensitively, like SQL columns. */
function findField(fields: readonly FieldInfo[], name: string): FieldInfo | undefined {
  return fields.find((field) => field.name.toLowerCase() === name.toLowerCase());
}

/**
 * The logical key, with each name in its declared spelling. Single-record entities may omit it
 * (Gemini does): their one record's id is `lkValue`, so the result is then `[]`.
 */
function readLk(
  map: MapNode,
  fields: readonly FieldInfo[] | undefined,
  singleRecord: boolean,
  scope: EntityScope,
): string[] | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'lk');
  if (entry === undefined) return singleRecord ? [] : undefined;
  const names = readStringList(entry);
  if (names === undefined) return undefined;
  if (entry.value.kind === 'seq' && entry.value.items.length === 0 && !singleRecord) {
    reporter.report(
      entry.value.position,
      'LK_EMPTY',
      `'lk' of ${entityLabel} is empty; name at least one key field`,
    );
  }
  if (fields === undefined) return names.map(({ value }) => value);
  const lk: string[] = [];
  for (const { value, position } of names) {
    // Unresolved names stay as written so that counts (e.g. for trees) match what the user wrote.
    lk.push(checkKeyField(value, position, fields, lk, scope)?.name ?? value);
  }
  return lk;
}

/** Checks one lk entry; returns the field when it can be part of the key. */
function checkKeyField(
  name: string,
  position: Position,
  fields: readonly FieldInfo[],
  earlier: readonly string[],
  scope: EntityScope,
): FieldInfo | undefined {
  const { reporter, entityLabel } = scope;
  const field = findField(fields, name);
  if (field === undefined) {
    const declared = fields.map((candidate) => candidate.name);
    const message =
      `Logical key field '${name}' of ${entityLabel} is not a declared field` +
      suggestionSuffix(name, declared, `; declared fields are ${declared.join(', ')}`);
    reporter.report(position, 'LK_UNKNOWN_FIELD', message);
    return undefined;
  }
  if (earlier.includes(field.name)) {
    reporter.report(
      position,
      'LK_DUPLICATE',
      `Field '${field.name}' appears more than once in 'lk' of ${entityLabel}`,
    );
    return undefined;
  }
  if (field.type !== undefined && !KEY_FIELD_TYPES.includes(field.type)) {
    const message =
      `Logical key field '${field.name}' of ${entityLabel} has type ${field.type}, which cannot be part of a key; ` +
      `key fields must have one of the types ${KEY_FIELD_TYPES.join(', ')}`;
    reporter.report(position, 'LK_INVALID_TYPE', message);
  }
  return field;
}

function readSeparator(map: MapNode, scope: EntityScope): string | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'lkSeparator');
  const separator = entry === undefined ? undefined : readString(entry);
  if (separator === undefined || entry === undefined) return undefined;
  const unsafe = URL_UNSAFE_SEPARATOR_CHARS.filter((char) => separator.includes(char));
  if (separator === '') {
    reporter.report(
      entry.value.position,
      'INVALID_SEPARATOR',
      `'lkSeparator' of ${entityLabel} must not be empty`,
    );
  } else if (unsafe.length > 0) {
    const message =
      `'lkSeparator' of ${entityLabel} must not contain ${unsafe.map((char) => `'${char}'`).join(', ')}: ` +
      `record ids appear in URLs, where '/', '?', '#' and '%' have a meaning`;
    reporter.report(entry.value.position, 'INVALID_SEPARATOR', message);
  }
  return separator;
}

/** `softDelete`: a boolean, not on a single-record entity (which has no DELETE). */
function readSoftDelete(
  map: MapNode,
  singleRecord: boolean | undefined,
  scope: EntityScope,
): boolean | undefined {
  const entry = entryOf(map, 'softDelete');
  const softDelete = entry === undefined ? undefined : readBoolean(entry);
  if (softDelete === true && singleRecord === true && entry !== undefined) {
    scope.reporter.report(
      entry.value.position,
      'INVALID_SOFT_DELETE',
      `'softDelete' of ${scope.entityLabel} cannot be true: a single-record entity's record is never deleted`,
    );
  }
  return softDelete;
}

function readLkValue(
  map: MapNode,
  singleRecord: boolean | undefined,
  scope: EntityScope,
): string | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'lkValue');
  const lkValue = entry === undefined ? undefined : readString(entry);
  if (lkValue === undefined || entry === undefined) return undefined;
  const position = entry.value.position;
  if (singleRecord !== true) {
    const message = `'lkValue' of ${entityLabel} is set but 'singleRecord' is not true; lkValue is the id of a single-record entity's only record`;
    reporter.report(position, 'SINGLE_RECORD', message);
  } else if (lkValue === '') {
    reporter.report(position, 'SINGLE_RECORD', `'lkValue' of ${entityLabel} must not be empty`);
  }
  // The separator may occur in lkValue: a single-record id is never split into key parts.
  return lkValue;
}

/** Characters the canonical text of a key value of this type can contain (undefined: any). */
const KEY_TEXT_CHARS: Partial<Record<FieldType, string>> = {
  INTEGER: '-0123456789',
  DATE: '-0123456789',
  BOOL: 'truefals',
};

/** What a valid text id part of each key type looks like, for `lkValue`. */
const KEY_TEXT_PATTERNS: Partial<Record<FieldType, RegExp>> = {
  // Canonical forms only: the id is compared as text, so `007` could never be found.
  INTEGER: /^-?(0|[1-9][0-9]{0,14})$/,
  DATE: /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/,
  BOOL: /^(true|false)$/,
};

/** A `YYYY-MM-DD` text that names a real calendar day. */
function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.split('-').map(Number);
  if (year === undefined || month === undefined || day === undefined || year < 1) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/**
 * Checks that record ids can be built and split again: a composite key's separator must not occur
 * in the text of its INTEGER, DATE or BOOL parts, and a single-record entity needs exactly one key
 * field whose type admits its `lkValue`. Otherwise every insert of such an entity would fail.
 */
function checkKeyText(
  map: MapNode,
  lk: readonly string[],
  fields: readonly FieldInfo[],
  separator: string | undefined,
  singleRecord: boolean,
  lkValue: string | undefined,
  scope: EntityScope,
): void {
  const { reporter, entityLabel } = scope;
  const keyFields = lk.map((name) => findField(fields, name));
  const effectiveSeparator =
    separator === undefined || separator === '' ? DEFAULT_KEY_SEPARATOR : separator;
  if (lk.length > 1 && !singleRecord) {
    for (const field of keyFields) {
      const chars = field?.type === undefined ? undefined : KEY_TEXT_CHARS[field.type];
      if (field === undefined || chars === undefined) continue;
      if ([...effectiveSeparator].some((char) => chars.includes(char))) {
        const position = entryOf(map, 'lkSeparator')?.value.position ?? map.position;
        const message =
          `The key separator '${effectiveSeparator}' of ${entityLabel} can occur in the ${field.type} key field ` +
          `'${field.name}', so its record ids could not be split; choose another lkSeparator`;
        reporter.report(position, 'INVALID_SEPARATOR', message);
      }
    }
  }
  // A single-record entity without exactly one key field is addressed by lkValue alone (its lk,
  // if any, is kept as metadata, as Gemini does); with one, that field always holds lkValue.
  if (!singleRecord || lk.length !== 1) return;
  const field = keyFields[0];
  if (field === undefined) return;
  const value = lkValue ?? DEFAULT_SINGLE_RECORD_ID;
  const problem = lkValueProblem(field, value);
  if (problem !== undefined) {
    const entry = entryOf(map, 'lkValue');
    const message =
      `'lkValue' ${JSON.stringify(value)}${lkValue === undefined ? ' (the default)' : ''} of ${entityLabel} ` +
      `is not a valid ${field.type} for its key field '${field.name}'${problem}`;
    reporter.report(entry?.value.position ?? map.position, 'SINGLE_RECORD', message);
  }
}

/**
 * Why the key field of a single-record entity cannot hold `value` (a sentence tail, possibly
 * empty), or `undefined` when it can.
 */
function lkValueProblem(field: FieldInfo, value: string): string | undefined {
  if (field.type === 'ENUM' || field.type === 'SELECT') {
    const values = field.values ?? [];
    if (values.includes(value)) return undefined;
    const spelled = values.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
    if (spelled !== undefined) return `; write it as the schema spells it: '${spelled}'`;
    return `; it must be one of ${values.map((candidate) => `'${candidate}'`).join(', ')}`;
  }
  const pattern = field.type === undefined ? undefined : KEY_TEXT_PATTERNS[field.type];
  if (pattern === undefined) return undefined;
  if (!pattern.test(value) || (field.type === 'DATE' && !isCalendarDate(value))) return '';
  return undefined;
}

function readTree(
  map: MapNode,
  fields: readonly FieldInfo[] | undefined,
  lk: readonly string[] | undefined,
  scope: EntityScope,
): EntityDoc['tree'] {
  const entry = entryOf(map, 'tree');
  const tree = entry === undefined ? undefined : readMap(entry);
  if (tree === undefined) return undefined;
  const enabled = readOptional(tree, 'enabled', (flag) => readBoolean(flag));
  const parentEntry = entryOf(tree, 'parentField');
  const parentField = parentEntry === undefined ? undefined : readString(parentEntry);
  const result: { enabled?: boolean; parentField?: string } = {};
  assignDefined(result, 'enabled', enabled);
  if (
    enabled !== true ||
    fields === undefined ||
    (parentEntry !== undefined && parentField === undefined)
  ) {
    assignDefined(result, 'parentField', parentField);
    return result;
  }
  const parent = checkTree(tree, parentEntry, parentField, fields, lk, scope);
  assignDefined(
    result,
    'parentField',
    parentField === undefined ? undefined : (parent?.name ?? parentField),
  );
  return result;
}

/** An enabled tree needs one key field and a parent field of that field's type (Gemini's rule). */
function checkTree(
  tree: MapNode,
  parentEntry: MapEntry | undefined,
  parentField: string | undefined,
  fields: readonly FieldInfo[],
  lk: readonly string[] | undefined,
  scope: EntityScope,
): FieldInfo | undefined {
  const { reporter, entityLabel } = scope;
  const at = parentEntry?.value.position ?? tree.position;
  if (lk !== undefined && lk.length !== 1) {
    const message = `Tree ${entityLabel} must have exactly one key field (its parent field holds the parent's key), but its lk has ${lk.length}`;
    reporter.report(tree.position, 'INVALID_TREE', message);
  }
  const parentName = parentField ?? DEFAULT_TREE_PARENT;
  const parent = findField(fields, parentName);
  if (parent === undefined) {
    const names = fields.map((field) => field.name);
    const message =
      parentField === undefined
        ? `Tree ${entityLabel} has no 'parentField' and no field named '${DEFAULT_TREE_PARENT}' (the default); name the field that holds the parent's key`
        : `Tree parent field '${parentField}' of ${entityLabel} is not a declared field${suggestionSuffix(parentField, names)}`;
    reporter.report(at, 'INVALID_TREE', message);
    return undefined;
  }
  const keyField = lk?.length === 1 ? findField(fields, lk[0]!) : undefined;
  if (keyField === undefined) return parent;
  if (keyField.name === parent.name) {
    reporter.report(
      at,
      'INVALID_TREE',
      `Tree parent field of ${entityLabel} must not be its key field '${keyField.name}'`,
    );
  } else if (
    parent.type !== undefined &&
    keyField.type !== undefined &&
    parent.type !== keyField.type
  ) {
    const message =
      `Tree parent field '${parent.name}' of ${entityLabel} has type ${parent.type}, ` +
      `but the key field '${keyField.name}' has type ${keyField.type}; they must be the same`;
    reporter.report(at, 'INVALID_TREE', message);
  }
  return parent;
}

function readRefDisplayFields(
  map: MapNode,
  fields: readonly FieldInfo[] | undefined,
  scope: EntityScope,
): string[] | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'refDisplayFields');
  const names = entry === undefined ? undefined : readStringList(entry);
  if (names === undefined) return undefined;
  if (fields === undefined) return names.map(({ value }) => value);
  const declared = fields.map((field) => field.name);
  return names.map(({ value, position }) => {
    const field = findField(fields, value);
    if (field !== undefined) return field.name;
    const message =
      `'refDisplayFields' of ${entityLabel} names '${value}', which is not a declared field` +
      suggestionSuffix(value, declared);
    reporter.report(position, 'UNKNOWN_FIELD', message);
    return value;
  });
}

/**
 * `search`: the top-level STRING fields full-text search looks in (SPEC §17), at least one, each
 * once.
 */
function readSearch(
  map: MapNode,
  fields: readonly FieldInfo[] | undefined,
  scope: EntityScope,
): string[] | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'search');
  const names = entry === undefined ? undefined : readStringList(entry);
  if (entry === undefined || names === undefined) return undefined;
  if (names.length === 0) {
    const message = `'search' of ${entityLabel} is empty; name the text fields to search, e.g. search: [name, description]`;
    reporter.report(entry.value.position, 'INVALID_SEARCH', message);
    return undefined;
  }
  if (fields === undefined) return names.map(({ value }) => value);
  const declared = fields.map((field) => field.name);
  const search: string[] = [];
  for (const { value, position } of names) {
    const field = findField(fields, value);
    if (field === undefined) {
      const message =
        `'search' of ${entityLabel} names '${value}', which is not a declared field` +
        suggestionSuffix(value, declared);
      reporter.report(position, 'UNKNOWN_FIELD', message);
    } else if (search.includes(field.name)) {
      const message = `'search' of ${entityLabel} names field '${field.name}' twice`;
      reporter.report(position, 'INVALID_SEARCH', message);
    } else if (field.type !== undefined && !SEARCHABLE_FIELD_TYPES.includes(field.type)) {
      const message = `'search' of ${entityLabel} names field '${field.name}' of type ${field.type}; only text fields (${SEARCHABLE_FIELD_TYPES.join(', ')}) can be searched`;
      reporter.report(position, 'INVALID_SEARCH', message);
    } else {
      search.push(field.name);
    }
  }
  return search;
}

/** `searchLanguage`: a PostgreSQL text search configuration name, with `search` only. */
function readSearchLanguage(map: MapNode, scope: EntityScope): string | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'searchLanguage');
  const language = entry === undefined ? undefined : readString(entry);
  if (entry === undefined || language === undefined) return undefined;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(language)) {
    const message = `'searchLanguage' of ${entityLabel} must be a text search configuration name (lower-case letters, digits and '_', e.g. english), not ${JSON.stringify(language)}`;
    reporter.report(entry.value.position, 'INVALID_SEARCH', message);
    return undefined;
  }
  if (entryOf(map, 'search') === undefined) {
    const message = `'searchLanguage' of ${entityLabel} is set without 'search'; name the fields to search`;
    reporter.report(entry.value.position, 'INVALID_SEARCH', message);
    return undefined;
  }
  return language;
}

/**
 * `indexes`: a list of composite indexes, each a non-empty list of distinct top-level field
 * names of indexable types, `-name` for a descending column, or a mapping `{fields, unique}`
 * (a unique combination, SPEC §16: no descending fields); no index declared twice.
 */
function readIndexes(
  map: MapNode,
  fields: readonly FieldInfo[] | undefined,
  scope: EntityScope,
): IndexEntry[] | undefined {
  const { reporter, entityLabel } = scope;
  const entry = entryOf(map, 'indexes');
  if (entry === undefined) return undefined;
  const seq = readSeq(entry);
  if (seq === undefined) return undefined;
  const indexes: IndexEntry[] = [];
  const declared = new Map<string, Position>();
  for (const item of seq.items) {
    let list: SeqNode | undefined;
    let unique = false;
    let form: 'list' | 'map' = 'list';
    if (item.kind === 'seq') list = item;
    else if (item.kind === 'map') {
      form = 'map';
      const read = readIndexMap(item);
      if (read === undefined) continue;
      ({ list, unique } = read);
    } else continue;
    if (list.items.length === 0) {
      const message = `An index of ${entityLabel} lists no field; name its fields in order, e.g. [category, -price]`;
      reporter.report(list.position, 'INVALID_INDEX', message);
      continue;
    }
    const index = readIndex(list, fields, scope);
    if (index === undefined) continue;
    if (unique) {
      const descending = index.findIndex((name) => name.startsWith('-'));
      if (descending >= 0) {
        const message = `Unique index [${index.join(', ')}] of ${entityLabel} names '${index[descending]}': a unique combination has no direction; write the field name without '-'`;
        reporter.report(list.items[descending]!.position, 'INVALID_UNIQUE', message);
        continue;
      }
    }
    const written = `${unique ? 'unique ' : ''}[${index.join(', ')}]`;
    const earlier = declared.get(written);
    if (earlier !== undefined) {
      const named = unique ? `Unique index ${written.slice('unique '.length)}` : `Index ${written}`;
      const message = `${named} of ${entityLabel} is declared twice (first at line ${earlier.line})`;
      reporter.report(item.position, 'INVALID_INDEX', message);
      continue;
    }
    declared.set(written, item.position);
    if (form === 'list') indexes.push(index);
    else indexes.push(unique ? { fields: index, unique: true } : { fields: index });
  }
  return indexes;
}

/**
 * The mapping form of an `indexes` entry: its `fields` list and `unique` flag; undefined when its
 * shape is wrong (reported by the structure check).
 */
function readIndexMap(map: MapNode): { list: SeqNode; unique: boolean } | undefined {
  if (map.entries.some((entry) => entry.key !== 'fields' && entry.key !== 'unique'))
    return undefined;
  const uniqueEntry = entryOf(map, 'unique');
  const unique = uniqueEntry === undefined ? false : readBoolean(uniqueEntry);
  const fieldsEntry = entryOf(map, 'fields');
  const list = fieldsEntry === undefined ? undefined : readSeq(fieldsEntry);
  if (unique === undefined || list === undefined) return undefined;
  return { list, unique };
}

/** One index's field names as written, or undefined when any is wrong (each problem reported). */
function readIndex(
  seq: SeqNode,
  fields: readonly FieldInfo[] | undefined,
  scope: EntityScope,
): string[] | undefined {
  const { reporter, entityLabel } = scope;
  const names: string[] = [];
  const seen = new Set<string>();
  let valid = true;
  for (const node of seq.items) {
    if (node.kind !== 'scalar' || typeof node.value !== 'string') {
      valid = false;
      continue;
    }
    const written = node.value;
    const name = written.startsWith('-') ? written.slice(1) : written;
    if (fields !== undefined) {
      const field = fields.find((candidate) => candidate.name === name);
      if (field === undefined) {
        const message =
          `An index of ${entityLabel} names '${name}', which is not a top-level field` +
          suggestionSuffix(
            name,
            fields.map((candidate) => candidate.name),
          );
        reporter.report(node.position, 'UNKNOWN_FIELD', message);
        valid = false;
        continue;
      }
      if (field.type !== undefined && NOT_INDEXABLE.has(field.type)) {
        const message =
          `Field '${name}' of ${entityLabel} has type ${field.type}, which cannot be part of an index; ` +
          `indexes are for scalar types (not ${[...NOT_INDEXABLE].join(', ')})`;
        reporter.report(node.position, 'INVALID_INDEX', message);
        valid = false;
      }
    }
    if (seen.has(name)) {
      const message = `Field '${name}' appears more than once in an index of ${entityLabel}`;
      reporter.report(node.position, 'INVALID_INDEX', message);
      valid = false;
      continue;
    }
    seen.add(name);
    names.push(written);
  }
  return valid ? names : undefined;
}
