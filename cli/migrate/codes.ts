/**
 * The diagnostic codes the migrations planner reports. Like the schema codes they are part of
 * the CLI's output contract and never change meaning once released.
 */
export const MIGRATION_DIAGNOSTIC_CODES = {
  MIGRATION_PREVIOUS_SCHEMA_INVALID:
    "The schema recorded by the previous generation (the manifest's snapshot) no longer loads.",
  MIGRATION_REMOVES_ENTITY:
    'An entity was removed: its table and records would be deleted (needs --allow-data-loss).',
  MIGRATION_REMOVES_FIELD:
    'A field was removed: its values would be deleted (needs --allow-data-loss).',
  MIGRATION_LOSSY_TYPE_CHANGE:
    'A field changes type (or shape) in a way stored values may not survive (needs --allow-data-loss).',
  MIGRATION_KEY_CHANGE:
    "An entity's logical key changes: records are re-keyed, some may be lost (needs --allow-data-loss).",
  MIGRATION_REQUIRED_WITHOUT_DEFAULT:
    'A field is added as, or becomes, required (or loses values) without a default for existing records.',
  MIGRATION_REMOVES_SOFT_DELETE:
    'softDelete was switched off: the soft-deleted records would be purged (needs --allow-data-loss).',
  MIGRATION_REMOVES_HISTORY:
    'history was switched off: the kept versions of its records would be deleted (needs --allow-data-loss).',
  MIGRATION_AMBIGUOUS_RENAME:
    'renamedFrom names nothing in the previous schema, a name that still exists, or a name claimed twice.',
} as const;

/** One of the codes above. */
export type MigrationDiagnosticCode = keyof typeof MIGRATION_DIAGNOSTIC_CODES;
