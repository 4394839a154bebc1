import {
  enumConverter,
  selectConverter,
  toBoolean,
  toDate,
  toInteger,
  toText,
  type Converter,
} from './convert.js';
import type { KeyValue, KeyValues, TableDescriptor } from './driver.js';
import type { Issue } from './issues.js';
import { parseKey, parseSingleRecordId, toRefInteger, toRefText } from './record.js';
import { recordIdFunction } from './record-id.js';
import {
  DEFAULT_KEY_SEPARATOR,
  fieldTreeOf,
  keyFieldsOf,
  singleRecordIdOf,
  tableOf,
  type EntityDocument,
  type FieldInfo,
  type FieldSchema,
} from './schema.js';

export type { FieldInfo } from './schema.js';

/** The converter type lives with the converters (./convert.ts); exported here as before. */
export type { Converter } from './convert.js';

/** Everything the generic record operations need to know about one entity. */
export interface EntityDefinition<TRecord extends object = object> {
  /** Entity name as written in the schema, e.g. `PRODUCT`. */
  readonly name: string;
  /** The ENTITY document as the schema declares it (what `/entity` shows). */
  readonly document: EntityDocument;
  readonly table: TableDescriptor;
  /** Joins the key values of a composite key into the record id. */
  readonly keySeparator: string;
  /** For a single-record entity, the id of its one record. */
  readonly singleRecordId: string | undefined;
  /** Every top-level field by name, for filters and sorting. */
  readonly fields: Readonly<Record<string, FieldInfo>>;
  /**
   * Converts and validates one record of a request body (every field, required fields, unknown
   * fields). Issue paths are relative to the record. Returns `undefined` when any issue was pushed.
   */
  read(input: unknown, issues: Issue[]): TRecord | undefined;
  /** The key field values of a valid record, in `lk` order. */
  keyOf(record: TRecord): KeyValues;
  /** The record id: the key values as text joined by the key separator. */
  idOf(record: TRecord): string;
  /** Splits and converts an id from a URL; `undefined` when no record can have that id. */
  parseId(id: string): KeyValues | undefined;
}

/** What the generator writes for one entity; `defineEntity` derives the rest. */
export interface EntitySpec<TRecord extends object> {
  /** The ENTITY document as the schema declares it. */
  readonly document: EntityDocument;
  /**
   * The entities this one refers to (ENTITY_REF) whose record ids are numbers, because they are
   * keyed by one INTEGER field. Only the whole schema knows this.
   */
  readonly integerKeyed?: readonly string[];
  /** The generated validator of a request body record. */
  readonly read: (input: unknown, issues: Issue[]) => TRecord | undefined;
}

/**
 * The definition of an entity, derived from its ENTITY document: table, field tree, key and id
 * handling. The generated `definition.ts` of each entity calls it once with the document and the
 * generated validator, so the entity is described in one place.
 */
export function defineEntity<TRecord extends object>(
  spec: EntitySpec<TRecord>,
): EntityDefinition<TRecord> {
  const entity = spec.document.entity;
  const integerKeyed = new Set((spec.integerKeyed ?? []).map((name) => name.toUpperCase()));
  const separator = entity.lkSeparator ?? DEFAULT_KEY_SEPARATOR;
  const singleRecordId = singleRecordIdOf(entity);
  const keyFields = keyFieldsOf(entity);
  const keyNames = keyFields.map((field) => field.name);
  const base = {
    name: entity.name,
    document: spec.document,
    table: tableOf(entity, integerKeyed),
    keySeparator: separator,
    singleRecordId,
    fields: fieldTreeOf(entity.fields, integerKeyed),
    read: spec.read,
  };
  const idOf = recordIdFunction(base.table) as (record: TRecord) => string;
  if (keyFields.length === 0) {
    // A single-record entity without a key field: its one id is also its key column's value.
    const id = singleRecordId ?? '';
    return {
      ...base,
      keyOf: () => [id],
      idOf,
      parseId: (text) => parseSingleRecordId(text, id),
    };
  }
  const converters = keyFields.map((field) => keyConverterOf(field, integerKeyed));
  const fieldValue = (record: TRecord, name: string): KeyValue =>
    (record as Record<string, unknown>)[name] as KeyValue;
  return {
    ...base,
    keyOf: (record) => keyNames.map((name) => fieldValue(record, name)),
    idOf,
    parseId: (text) => parseKey(text, separator, converters),
  };
}

/** Converts one part of a record id taken from a URL to the key field's type. */
function keyConverterOf(
  field: FieldSchema,
  integerKeyed: ReadonlySet<string>,
): Converter<KeyValue> {
  switch (field.type) {
    case 'INTEGER':
      return toInteger;
    case 'DATE':
      return toDate;
    case 'BOOL':
      return toBoolean;
    case 'ENUM':
      return enumConverter(field.enums ?? []);
    case 'SELECT':
      return selectConverter((field.select?.elems ?? []).map((elem) => elem.value));
    case 'ENTITY_REF':
      return integerKeyed.has((field.entityRef?.entity ?? '').toUpperCase())
        ? toRefInteger
        : toRefText;
    default:
      return toText;
  }
}
