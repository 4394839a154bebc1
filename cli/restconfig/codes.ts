/**
 * The diagnostic codes `--rest-config` loading can report, with what each means. Like the schema
 * codes they are part of the CLI's output contract (users grep for them, fixtures commit them),
 * so they never change meaning once released. All carry the `REST_` prefix so that a problem in
 * the REST config is never mistaken for one in a schema file.
 */
export const REST_DIAGNOSTIC_CODES = {
  REST_PARSE_ERROR: 'The REST config file is not valid JSON or YAML.',
  REST_DUPLICATE_KEY: 'A mapping sets the same key twice.',
  REST_INVALID_TYPE:
    "A document's `type` is not ENTITY or MULTIPLE_ENTITIES (or the document is not a mapping).",
  REST_UNKNOWN_KEY:
    'A mapping holds a key the REST config format does not know, or one that belongs to the other document type.',
  REST_MISSING_KEY: 'A document lacks `type`, `entity` / `entities` or `config`.',
  REST_INVALID_VALUE:
    'A value has the wrong JSON type or is not allowed: an unknown method or strategy, a limit that is not a positive integer, defaultLimit above maxWindow, a paging option without START_LIMIT, an empty or malformed list entry.',
  REST_UNKNOWN_ENTITY: 'A document names an entity the schema does not define.',
  REST_DUPLICATE_ENTITY: 'An entity is configured more than once (compared case-insensitively).',
  REST_DUPLICATE_VALUE:
    'allowedMethods, defaultOrder or allowedOrderingFields lists an item twice.',
  REST_UNKNOWN_FIELD:
    'defaultOrder or allowedOrderingFields names a field the entity does not have (names are case-sensitive).',
  REST_UNSORTABLE_FIELD:
    'defaultOrder or allowedOrderingFields names a nested field or a field whose type cannot be sorted.',
  REST_ORDER_NOT_ALLOWED: 'defaultOrder sorts by a field that allowedOrderingFields leaves out.',
} as const;

/** One of the codes above. */
export type RestDiagnosticCode = keyof typeof REST_DIAGNOSTIC_CODES;
