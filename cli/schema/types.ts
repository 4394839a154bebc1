/**
 * The schema as written, after validation: the typed shape of ENTITY documents, which the runtime
 * defines (`@entity-gen/runtime/schema`) because the generated code carries each document.
 * Validation guarantees every value here has the declared type and that cross-references resolve.
 */

export {
  FIELD_TYPES,
  KEY_FIELD_TYPES,
  SEARCHABLE_FIELD_TYPES,
  type FieldType,
  type JsonValue,
  type OnDeleteRule,
  type SelectElemSchema as SelectElemDoc,
  type TypeSchema as TypeConfigDoc,
  type FieldSchema as FieldDoc,
} from '@entity-gen/runtime/schema';
import type { EntitySchema, JsonValue } from '@entity-gen/runtime/schema';

/** An entity after validation: `lk` is always there (empty for a single-record entity without one). */
export interface EntityDoc extends EntitySchema {
  readonly lk: readonly string[];
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
  /**
   * The documents of `text`, already parsed (the schema a manifest records, say): the quick
   * parse then takes them as they are. `text` must be what they were parsed from.
   */
  readonly documents?: readonly JsonValue[];
}
