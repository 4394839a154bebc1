/**
 * The schema as written, after validation: the typed shape of ENTITY documents. Validation
 * guarantees every value here has the declared type and that cross-references resolve.
 */

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

/** A JSON value as parsed from JSON or YAML. */
export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export interface SelectElemDoc {
  readonly value: string;
  readonly displayName?: string;
  /** Gemini metadata, kept as written. */
  readonly driveFields?: JsonValue;
}

/** The type-specific configuration shared by fields and array elements. */
export interface TypeConfigDoc {
  readonly type: FieldType;
  readonly enums?: readonly string[];
  readonly select?: { readonly elems: readonly SelectElemDoc[] };
  readonly object?: { readonly fields: readonly FieldDoc[] };
  readonly array?: TypeConfigDoc;
  readonly dict?: { readonly fields: readonly FieldDoc[] };
  readonly entityRef?: { readonly entity: string };
  /** Gemini metadata: names a sibling field that holds the type of this ANY value. */
  readonly any?: { readonly typeField: string };
  /** Gemini metadata. */
  readonly geoHashLocation?: { readonly includeGooglePlaceId?: boolean };
}

export interface FieldDoc extends TypeConfigDoc {
  readonly name: string;
  readonly required?: boolean;
  readonly displayName?: string;
  readonly description?: string;
  /** Ask the storage to index this top-level field (for filtering and sorting). */
  readonly index?: boolean;
  /**
   * Top-level fields only: the value a migration gives existing records when the field is added,
   * becomes required, or loses values in a lossy change. Not an insert default (a request
   * without a required field is still refused). Held in canonical form (`"19.990"` → `"19.99"`);
   * the document keeps it as written.
   */
  readonly default?: JsonValue;
  /** Top-level fields only: the field's previous name; the next migration renames the column. */
  readonly renamedFrom?: string;
}

export interface EntityDoc {
  readonly name: string;
  readonly displayName?: string;
  readonly description?: string;
  readonly lk: readonly string[];
  readonly lkSeparator?: string;
  readonly singleRecord?: boolean;
  readonly lkValue?: string;
  readonly fields: readonly FieldDoc[];
  /** Gemini metadata. */
  readonly tree?: { readonly enabled?: boolean; readonly parentField?: string };
  readonly refDisplayFields?: readonly string[];
  readonly refDisplaySeparator?: string;
  /** The entity's previous name; the next migration renames its table and keeps the records. */
  readonly renamedFrom?: string;
}

/** Where something was written: 1-based line and column. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One validated ENTITY document. */
export interface LoadedEntity {
  readonly entity: EntityDoc;
  /** The whole document exactly as written (`{type: ENTITY, entity: {...}}`), for `/entity`. */
  readonly document: JsonValue;
  /** Position of the document's `entity` key. */
  readonly position: SourcePosition;
  /** Position of each top-level field's name, by field name (for diagnostics of later phases). */
  readonly fieldPositions?: Readonly<Record<string, SourcePosition>>;
}

/** One schema file's name (as given by the user) and text. */
export interface SchemaSource {
  readonly file: string;
  readonly text: string;
}
