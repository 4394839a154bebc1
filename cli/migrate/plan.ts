import type { Diagnostic } from '../diagnostics.js';
import { MANIFEST_PATH } from '../manifest/index.js';
import {
  MIGRATIONS_DIR,
  planMigrations,
  type MigrationStep,
  type PreviousSchema,
  type SchemaRename,
} from './index.js';
import type { SchemaModel } from '../model/types.js';
import type { JsonValue } from '../schema/types.js';

export { MIGRATIONS_DIR, type MigrationStep } from './index.js';

/** What the migrations planner adds to a generation. */
export interface MigrationPlan {
  /** New migration files, with paths relative to the output folder (`migrations/…`). */
  readonly files: readonly { readonly path: string; readonly contents: string }[];
  readonly steps: readonly MigrationStep[];
  /** Entity and field renames of the schema change, for the user's code. */
  readonly renames: readonly SchemaRename[];
  /** Problems that stop the generation (e.g. a destructive change without --allow-data-loss). */
  readonly diagnostics: readonly Diagnostic[];
}

/** Options of the migrations planner. */
export interface MigrationOptions {
  readonly allowDataLoss: boolean;
  /** Clear the dangling values of references that gain `onDelete` (`--clear-dangling-references`). */
  readonly clearDanglingReferences?: boolean;
  /** File names already in `<out>/migrations`. */
  readonly existingMigrations: readonly string[];
  /** The previous schema loaded already (`loadPreviousSchema` of cli/migrate). */
  readonly previous?: PreviousSchema;
}

/**
 * The single call site of the migrations planner (`cli/migrate`): diffs the schema of the previous
 * generation (`manifest.schema`; none on a first generation) with the new model. Its files are
 * generator files like any other (in the manifest, never deleted), its diagnostics stop the run.
 */
export function planMigrationFiles(
  previousSchema: readonly JsonValue[] | undefined,
  model: SchemaModel,
  options: MigrationOptions,
): MigrationPlan {
  const planned = planMigrations(previousSchema, model, {
    allowDataLoss: options.allowDataLoss,
    clearDanglingReferences: options.clearDanglingReferences === true,
    existingMigrations: options.existingMigrations,
    previousSchemaFile: MANIFEST_PATH,
    ...(options.previous === undefined ? {} : { previous: options.previous }),
  });
  return {
    files: planned.files.map((file) => ({
      path: migrationPath(file.path),
      contents: file.contents,
    })),
    steps: planned.steps,
    renames: planned.renames,
    diagnostics: planned.diagnostics,
  };
}

/** `0002_add_color.sql` or `migrations/0002_add_color.sql` → `migrations/0002_add_color.sql`. */
export function migrationPath(path: string): string {
  return path.startsWith(`${MIGRATIONS_DIR}/`) ? path : `${MIGRATIONS_DIR}/${path}`;
}
