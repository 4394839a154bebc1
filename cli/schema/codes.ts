/**
 * The diagnostic codes schema loading can report, with what each means. The codes are part of
 * the CLI's output contract (users grep for them, fixtures commit them), so they never change
 * meaning once released.
 */
export const SCHEMA_DIAGNOSTIC_CODES = {
  FILE_NOT_READABLE: 'A schema file could not be read from disk.',
  PARSE_ERROR: 'A schema file is not valid JSON or YAML.',
  DUPLICATE_KEY: 'A mapping sets the same key twice.',
  NOT_AN_ENTITY: 'A document is not an ENTITY document (not a mapping, or `type` is not ENTITY).',
  UNKNOWN_KEY: 'A mapping holds a key the schema format does not know.',
  MISSING_KEY: 'A mapping lacks a key that must be present.',
  INVALID_VALUE:
    'A value has the wrong JSON type or a type-config key does not fit the field type.',
  INVALID_NAME: 'An entity or field name does not match the allowed pattern.',
  RESERVED_NAME: 'A name is reserved (prototype keys, `_eg_` storage columns).',
  DUPLICATE_ENTITY: 'Two entities share a name (compared case-insensitively, across files).',
  DUPLICATE_FIELD: 'Two fields of one fields list share a name (compared case-insensitively).',
  UNKNOWN_TYPE: 'A field or array element names a type that does not exist.',
  MISSING_TYPE_CONFIG: "A field lacks its type's own configuration (enums, select.elems, fields…).",
  EMPTY_ENUM: 'An enums / select list is empty or lists a value twice.',
  EMPTY_FIELDS: 'An entity, object or dictionary declares no fields.',
  UNKNOWN_FIELD:
    'A list of field names (refDisplayFields, an index of indexes, search) names an undeclared field.',
  LK_EMPTY: 'The logical key lists no field.',
  LK_UNKNOWN_FIELD: 'The logical key names an undeclared field.',
  LK_DUPLICATE: 'The logical key names a field twice.',
  LK_INVALID_TYPE: 'A logical key field has a type that cannot be part of a key.',
  UNKNOWN_ENTITY_REF: 'An ENTITY_REF names an entity that no loaded file defines.',
  INVALID_ON_DELETE:
    'entityRef.onDelete is set where integrity cannot hold: on a nested field, on a reference to a single-record entity, or EMPTY on a required or key field.',
  INVALID_SEPARATOR:
    'lkSeparator is empty, holds a character that is unsafe in URLs, or can occur in the text of a key part.',
  SINGLE_RECORD:
    "lkValue is set without singleRecord, is empty, or is not a value the single-record entity's one key field can hold.",
  INVALID_SOFT_DELETE:
    'softDelete is set on a single-record entity, whose record cannot be deleted.',
  INVALID_TREE: 'A tree entity has a bad parent field or not exactly one key field.',
  INVALID_ANY_TYPE_FIELD: 'any.typeField does not name a sibling field.',
  INVALID_INDEX:
    'index: true on a nested field or on a type that cannot be indexed; index: ci on a nested field or a field that is not text; an entry of indexes that is empty, repeats a field, names a field that cannot be indexed, or repeats another index.',
  INVALID_UNIQUE:
    'unique: true on a nested field or on a type an index cannot hold; a unique entry of indexes with a descending (-name) field.',
  INVALID_GENERATED:
    "generated names no generator, sits on a nested field or a field of another type, on a required field or one with a default (server-set fields), or a key generator is not on the entity's single key field, or a server-set one is on a key field.",
  INVALID_CONSTRAINT:
    'A constraint (min, max, minLength, maxLength, pattern, minItems, maxItems) is set on a type it does not fit, is not a value of that type, has min above max, or is a pattern that does not compile.',
  INVALID_DEFAULT: "A field's default does not fit its type, is null, or is set on a nested field.",
  INVALID_SEARCH:
    'search is empty, names a field twice or a field that is not a top-level STRING field, or searchLanguage is not a text search configuration name.',
  INVALID_RENAMED_FROM:
    'renamedFrom is not a valid name, names the field or entity itself, or is set on a nested field.',
} as const;

/** One of the codes above. */
export type SchemaDiagnosticCode = keyof typeof SCHEMA_DIAGNOSTIC_CODES;
