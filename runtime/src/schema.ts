/**
 * The ENTITY schema format, and what follows from a schema alone: every entity's table layout and
 * the field tree that filters and sorting accept. The generator checks schemas and writes each
 * entity's document into its `definition.ts`; `defineEntity` (./definition.ts) derives the rest
 * from it with the functions below, and the generator's migrations call the same functions, so
 * the tables a migration expects are the tables the drivers create. Subpath
 * `@entity-gen/runtime/schema` (no database client, no Koa).
 */
import type {
  ColumnDescriptor,
  ColumnKind,
  FilterOperator,
  IndexColumnDescriptor,
  ReferenceDescriptor,
  TableDescriptor,
} from './driver.js';
import type { FieldConstraints } from './constraints.js';

/** A JSON value as parsed from JSON or YAML. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

export const FIELD_TYPES = [
  'STRING',
  'INTEGER',
  'DOUBLE',
  'DECIMAL',
  'BOOL',
  'DATE',
  'DATE_TIME',
  'ENUM',
  'SELECT',
  'OBJECT',
  'ARRAY',
  'DICTIONARY',
  'B64_IMAGE',
  'ANY',
  'ENTITY_REF',
  'GEOHASH_LOCATION',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** Field types that may be part of a logical key. */
export const KEY_FIELD_TYPES: readonly FieldType[] = [
  'STRING',
  'INTEGER',
  'DATE',
  'ENUM',
  'SELECT',
  'ENTITY_REF',
  'BOOL',
];

/** Joins the key values of a composite key into the record id unless `lkSeparator` says otherwise. */
export const DEFAULT_KEY_SEPARATOR = '~';

/** The id of a single-record entity's record unless `lkValue` says otherwise. */
export const DEFAULT_SINGLE_RECORD_ID = '_singlerec_lk';

/**
 * The storage-only key column of a single-record entity that does not declare exactly one key
 * field: it holds `lkValue` and is never part of the record.
 */
export const FIXED_KEY_COLUMN = '_eg_id';

export interface SelectElemSchema {
  readonly value: string;
  readonly displayName?: string;
  /** Gemini metadata, kept as written. */
  readonly driveFields?: JsonValue;
}

/**
 * What deleting a referenced record does to the records that reference it (SPEC §11): refuse the
 * delete (`RESTRICT`), clear the field or remove the array element (`EMPTY`), or delete them too
 * (`DELETE`).
 */
export type OnDeleteRule = 'RESTRICT' | 'EMPTY' | 'DELETE';

/** The target of an ENTITY_REF and, when set, its integrity rule. */
export interface EntityRefSchema {
  readonly entity: string;
  /** Absent: the reference is not checked (Gemini's default). */
  readonly onDelete?: OnDeleteRule;
}

/** The type of a field or an array element, with that type's own configuration and constraints. */
export interface TypeSchema extends FieldConstraints {
  readonly type: FieldType;
  readonly enums?: readonly string[];
  readonly select?: { readonly elems: readonly SelectElemSchema[] };
  readonly object?: { readonly fields: readonly FieldSchema[] };
  readonly array?: TypeSchema;
  readonly dict?: { readonly fields: readonly FieldSchema[] };
  readonly entityRef?: EntityRefSchema;
  /** Gemini metadata: names a sibling field that holds the type of this ANY value. */
  readonly any?: { readonly typeField: string };
  /** Gemini metadata. */
  readonly geoHashLocation?: { readonly includeGooglePlaceId?: boolean };
}

export interface FieldSchema extends TypeSchema {
  readonly name: string;
  readonly required?: boolean;
  readonly displayName?: string;
  readonly description?: string;
  /**
   * Ask the storage to index this top-level field: `true` for filtering and sorting, `ci` (text
   * fields) for the case-insensitive operators, on the case-folded text.
   */
  readonly index?: boolean | 'ci';
  /**
   * Top-level fields only: no two records hold the same value (absent values do not collide),
   * enforced by a unique index (SPEC §16).
   */
  readonly unique?: boolean;
  /**
   * Top-level fields only: the value a migration gives existing records when the field is added
   * or becomes required, and the value an insert (POST, a PUT that creates) gives the field when
   * the body leaves it out (SPEC §16).
   */
  readonly default?: JsonValue;
  /** Top-level fields only: the field's previous name; the next migration renames the column. */
  readonly renamedFrom?: string;
  /**
   * Top-level fields only: the server gives the value (SPEC §16). `uuid`, `ulid` (STRING) and
   * `sequence` (INTEGER) on the single key field; `createdAt`, `updatedAt` (DATE_TIME),
   * `createdBy`, `updatedBy` (STRING) on other fields.
   */
  readonly generated?: Generator;
}

/** What the server generates for a field (SPEC §16). */
export type Generator =
  | 'uuid'
  | 'ulid'
  | 'sequence'
  | 'createdAt'
  | 'updatedAt'
  | 'createdBy'
  | 'updatedBy';

/** Generators of a key field, and the one field type each fits. */
export const KEY_GENERATORS: Readonly<Partial<Record<Generator, FieldType>>> = {
  uuid: 'STRING',
  ulid: 'STRING',
  sequence: 'INTEGER',
};

/** Generators of the fields the server sets on every write, and the field type each fits. */
export const SERVER_SET_GENERATORS: Readonly<Partial<Record<Generator, FieldType>>> = {
  createdAt: 'DATE_TIME',
  updatedAt: 'DATE_TIME',
  createdBy: 'STRING',
  updatedBy: 'STRING',
};

/** Every generator, in the order the docs list them. */
export const GENERATORS: readonly Generator[] = [
  'uuid',
  'ulid',
  'sequence',
  'createdAt',
  'updatedAt',
  'createdBy',
  'updatedBy',
];

/** An entity as the schema declares it (the `entity` member of an ENTITY document). */
export interface EntitySchema {
  readonly name: string;
  readonly displayName?: string;
  readonly description?: string;
  /** The logical key; a single-record entity may have none. */
  readonly lk?: readonly string[];
  readonly lkSeparator?: string;
  readonly singleRecord?: boolean;
  readonly lkValue?: string;
  /** DELETE keeps the record, marked deleted (SPEC §13): it can be restored or purged. */
  readonly softDelete?: boolean;
  /** Every committed version of each record is kept (SPEC §13): history and `asOf` reads. */
  readonly history?: boolean;
  readonly fields: readonly FieldSchema[];
  /** Gemini metadata. */
  readonly tree?: { readonly enabled?: boolean; readonly parentField?: string };
  readonly refDisplayFields?: readonly string[];
  readonly refDisplaySeparator?: string;
  /** The entity's previous name; the next migration renames its table and keeps the records. */
  readonly renamedFrom?: string;
  /**
   * Composite indexes: each a list of top-level field names, a name prefixed with `-` for a
   * descending column (`[[category, -price]]`), or `{fields: [...], unique: true}` for a
   * combination of fields no two records may share (SPEC §16).
   */
  readonly indexes?: readonly IndexEntry[];
  /**
   * The text fields full-text search (`q=` of a list, SPEC §17) looks in, in this order; absent:
   * the entity is not searchable.
   */
  readonly search?: readonly string[];
  /**
   * The text search language of PostgreSQL (a text search configuration, e.g. `english`);
   * `simple` by default. SQLite's tokenizer does not stem, whatever the language.
   */
  readonly searchLanguage?: string;
}

/** An entry of `indexes` in its mapping form. */
export interface IndexSchema {
  readonly fields: readonly string[];
  /** No two records hold the same combination (a record lacking any of the fields never collides). */
  readonly unique?: boolean;
}

/** An entry of `indexes`: the list form, or the mapping form. */
export type IndexEntry = readonly string[] | IndexSchema;

/** The fields of an `indexes` entry as written, and whether it is unique. */
export function indexEntryOf(entry: IndexEntry): { fields: readonly string[]; unique: boolean } {
  if (isFieldList(entry)) return { fields: entry, unique: false };
  return { fields: entry.fields, unique: entry.unique === true };
}

function isFieldList(entry: IndexEntry): entry is readonly string[] {
  return Array.isArray(entry);
}

/** One ENTITY document, as written in a schema file (what `/entity` shows). */
export interface EntityDocument {
  readonly type: 'ENTITY';
  readonly entity: EntitySchema;
}

/** The schema type of a field and, for OBJECT and ARRAY fields, what lies inside. */
export interface FieldInfo {
  readonly type: FieldType;
  /** Inner fields of an OBJECT field. */
  readonly fields?: Readonly<Record<string, FieldInfo>>;
  /** Element of an ARRAY field. */
  readonly element?: FieldInfo;
  /** ENTITY_REF to an entity keyed by one INTEGER field: ids are numbers. */
  readonly integerRef?: true;
  /** Allowed values of an ENUM or SELECT field. */
  readonly values?: readonly string[];
}

/** How each field type is stored (an ENTITY_REF to an integer-keyed entity is an integer). */
const COLUMN_KINDS: Readonly<Record<FieldType, ColumnKind>> = {
  STRING: 'text',
  INTEGER: 'integer',
  DOUBLE: 'double',
  DECIMAL: 'decimal',
  BOOL: 'boolean',
  DATE: 'date',
  DATE_TIME: 'datetime',
  ENUM: 'text',
  SELECT: 'text',
  OBJECT: 'json',
  ARRAY: 'json',
  DICTIONARY: 'json',
  B64_IMAGE: 'text',
  ANY: 'json',
  ENTITY_REF: 'text',
  GEOHASH_LOCATION: 'json',
};

/**
 * The names of the entities whose record ids are numbers: those keyed by exactly one INTEGER
 * field. An ENTITY_REF to one of them holds a number. The functions below take these names in
 * upper case.
 */
export function integerKeyedEntities(entities: readonly EntitySchema[]): string[] {
  return entities
    .filter((entity) => {
      if (entity.lk?.length !== 1) return false;
      const key = entity.fields.find((field) => field.name === entity.lk?.[0]);
      return key?.type === 'INTEGER';
    })
    .map((entity) => entity.name);
}

/** Whether an ENTITY_REF points at an entity whose ids are numbers. */
function isIntegerRef(type: TypeSchema, integerKeyed: ReadonlySet<string>): boolean {
  const target = type.entityRef?.entity;
  return (
    type.type === 'ENTITY_REF' && target !== undefined && integerKeyed.has(target.toUpperCase())
  );
}

/** How a field of this type is stored. */
export function columnKindOf(type: TypeSchema, integerKeyed: ReadonlySet<string>): ColumnKind {
  return isIntegerRef(type, integerKeyed) ? 'integer' : COLUMN_KINDS[type.type];
}

/**
 * Whether a single-record entity is addressed by `lkValue` alone, kept in `FIXED_KEY_COLUMN`:
 * it declares no key field, or several (Gemini accepts an `lk` there and ignores it).
 */
export function hasFixedKey(entity: EntitySchema): boolean {
  return entity.singleRecord === true && (entity.lk?.length ?? 0) !== 1;
}

/** The id of a single-record entity's record; `undefined` for other entities. */
export function singleRecordIdOf(entity: EntitySchema): string | undefined {
  return entity.singleRecord === true ? (entity.lkValue ?? DEFAULT_SINGLE_RECORD_ID) : undefined;
}

/** The fields whose values make a record's id, in `lk` order (none for a fixed key). */
export function keyFieldsOf(entity: EntitySchema): FieldSchema[] {
  if (hasFixedKey(entity)) return [];
  return (entity.lk ?? []).map((name) => {
    const field = entity.fields.find((candidate) => candidate.name === name);
    if (field === undefined) throw new Error(`lk field ${name} of ${entity.name} is not declared`);
    return field;
  });
}

/** The SQL table of an entity: its name in lower case (unique, since names are). */
export function tableNameOf(entityName: string): string {
  return entityName.toLowerCase();
}

/**
 * The storage layout of an entity: one column per top-level field in declared order (key fields
 * required), after the fixed key column when it has one; keyed by `lk` or by that column.
 */
export function tableOf(entity: EntitySchema, integerKeyed: ReadonlySet<string>): TableDescriptor {
  const fixedKey = hasFixedKey(entity);
  const references = referencesOf(entity);
  const lk = new Set(fixedKey ? [] : (entity.lk ?? []));
  const columns: ColumnDescriptor[] = entity.fields.map((field) => ({
    name: field.name,
    kind: columnKindOf(field, integerKeyed),
    fieldType: field.type,
    required: lk.has(field.name) || field.required === true,
    indexed: field.index === true,
    ...(field.index === 'ci' ? { ciIndexed: true } : {}),
  }));
  if (fixedKey) {
    columns.unshift({
      name: FIXED_KEY_COLUMN,
      kind: 'text',
      fieldType: 'STRING',
      required: true,
      indexed: false,
      fixed: singleRecordIdOf(entity) ?? DEFAULT_SINGLE_RECORD_ID,
    });
  }
  const entries = (entity.indexes ?? []).map(indexEntryOf);
  const indexes = entries.filter((entry) => !entry.unique).map((entry) => entry.fields);
  const unique = uniqueFieldsOf(entity);
  const sequence = entity.fields.find(
    (field) => field.generated === 'sequence' && lk.has(field.name),
  )?.name;
  return {
    entity: entity.name,
    table: tableNameOf(entity.name),
    columns,
    key: fixedKey ? [FIXED_KEY_COLUMN] : [...lk],
    keySeparator: entity.lkSeparator ?? DEFAULT_KEY_SEPARATOR,
    ...(indexes.length === 0 ? {} : { indexes: indexes.map(indexColumnsOf) }),
    ...(unique.length === 0 ? {} : { unique }),
    ...(sequence === undefined ? {} : { sequence }),
    ...(references.length === 0 ? {} : { references }),
    ...(entity.softDelete === true ? { softDelete: true } : {}),
    ...(entity.history === true ? { history: true } : {}),
    ...(entity.search === undefined || entity.search.length === 0
      ? {}
      : {
          search: {
            fields: [...entity.search],
            language: entity.searchLanguage ?? DEFAULT_SEARCH_LANGUAGE,
          },
        }),
  };
}

/** The text search language of an entity whose schema names none. */
export const DEFAULT_SEARCH_LANGUAGE = 'simple';

/** The field types full-text search can look in (`search:`). */
export const SEARCHABLE_FIELD_TYPES: readonly FieldType[] = ['STRING'];

/**
 * The unique rules of an entity: each `unique: true` field in declared order, then each unique
 * entry of `indexes` in declared order.
 */
export function uniqueFieldsOf(entity: EntitySchema): (readonly string[])[] {
  // The only key field is unique already (the primary key).
  const key = entity.lk?.length === 1 && !hasFixedKey(entity) ? entity.lk[0] : undefined;
  return [
    ...entity.fields
      .filter((field) => field.unique === true && field.name !== key)
      .map((field) => [field.name]),
    ...(entity.indexes ?? [])
      .map(indexEntryOf)
      .filter((entry) => entry.unique)
      .map((entry) => [...entry.fields]),
  ];
}

/** The top-level references of an entity that declare `onDelete`, in field order. */
export function referencesOf(entity: EntitySchema): ReferenceDescriptor[] {
  const references: ReferenceDescriptor[] = [];
  for (const field of entity.fields) {
    const type = field.type === 'ARRAY' ? field.array : field;
    const onDelete = type?.type === 'ENTITY_REF' ? type.entityRef?.onDelete : undefined;
    if (type?.entityRef === undefined || onDelete === undefined) continue;
    references.push({
      field: field.name,
      entity: type.entityRef.entity,
      array: field.type === 'ARRAY',
      onDelete,
    });
  }
  return references;
}

/** The columns of one declared composite index: `-price` is `price`, descending. */
export function indexColumnsOf(fields: readonly string[]): IndexColumnDescriptor[] {
  return fields.map((field) =>
    field.startsWith('-')
      ? { column: field.slice(1), descending: true }
      : { column: field, descending: false },
  );
}

/** The field tree of an entity's top-level fields, for filters and sorting. */
export function fieldTreeOf(
  fields: readonly FieldSchema[],
  integerKeyed: ReadonlySet<string>,
): Record<string, FieldInfo> {
  const tree: Record<string, FieldInfo> = {};
  for (const field of fields) tree[field.name] = fieldInfoOf(field, integerKeyed);
  return tree;
}

function fieldInfoOf(type: TypeSchema, integerKeyed: ReadonlySet<string>): FieldInfo {
  const values =
    type.type === 'ENUM'
      ? type.enums
      : type.type === 'SELECT'
        ? type.select?.elems.map((elem) => elem.value)
        : undefined;
  return {
    type: type.type,
    ...(type.type === 'OBJECT' && type.object !== undefined
      ? { fields: fieldTreeOf(type.object.fields, integerKeyed) }
      : {}),
    ...(type.type === 'ARRAY' && type.array !== undefined
      ? { element: fieldInfoOf(type.array, integerKeyed) }
      : {}),
    ...(isIntegerRef(type, integerKeyed) ? { integerRef: true as const } : {}),
    ...(values === undefined ? {} : { values }),
  };
}

const EQUALITY: readonly FilterOperator[] = ['EQUALS', 'NOT_EQUALS'];
const ORDERING: readonly FilterOperator[] = [...EQUALITY, 'GT', 'GTE', 'LT', 'LTE'];
const TEXT: readonly FilterOperator[] = [
  ...ORDERING,
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
  'IEQUALS',
  'ICONTAINS',
  'ISTARTS_WITH',
  'IENDS_WITH',
];

/** The operators a list filter of each scalar type accepts; the other types cannot be filtered. */
const FILTER_OPERATORS: Partial<Readonly<Record<FieldType, readonly FilterOperator[]>>> = {
  STRING: TEXT,
  ENUM: TEXT,
  SELECT: TEXT,
  ENTITY_REF: TEXT,
  INTEGER: ORDERING,
  DOUBLE: ORDERING,
  DECIMAL: ORDERING,
  DATE: ORDERING,
  DATE_TIME: ORDERING,
  BOOL: EQUALITY,
};

/** The operators that test an ARRAY of scalars for a member. */
export const MEMBERSHIP_OPERATORS: readonly FilterOperator[] = ['CONTAINS', 'NOT_CONTAINS'];

/**
 * The operators a filter on a value of this type accepts, or `undefined` when it cannot be
 * filtered or sorted (OBJECT, ARRAY, DICTIONARY, ANY, B64_IMAGE, GEOHASH_LOCATION).
 */
export function filterOperatorsOf(
  field: Pick<FieldInfo, 'type' | 'integerRef'>,
): readonly FilterOperator[] | undefined {
  // An id of an INTEGER-keyed entity is a number: substring tests make no sense on it.
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return ORDERING;
  return FILTER_OPERATORS[field.type];
}
