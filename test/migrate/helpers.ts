import { formatDiagnostic } from '../../cli/diagnostics.js';
import { planMigrations, type MigrationPlan } from '../../cli/migrate/index.js';
import { normalize } from '../../cli/model/normalize.js';
import type { SchemaModel } from '../../cli/model/types.js';
import { loadSchemas } from '../../cli/schema/index.js';
import type { JsonValue } from '../../cli/schema/types.js';

/** The model of a schema text (YAML), failing on diagnostics. */
export function modelOf(text: string, file = 'schema.yaml'): SchemaModel {
  const loaded = loadSchemas([{ file, text }]);
  if (loaded.diagnostics.length > 0) {
    throw new Error(loaded.diagnostics.map(formatDiagnostic).join('\n'));
  }
  const { model, diagnostics } = normalize(loaded.entities);
  if (model === undefined) throw new Error(diagnostics.map(formatDiagnostic).join('\n'));
  return model;
}

/** What a manifest records: the ENTITY documents as written. */
export function snapshotOf(model: SchemaModel): JsonValue[] {
  return model.entities.map((entity) => entity.document);
}

/** Plans the migration from one schema text to another. */
export function planBetween(
  before: string,
  after: string,
  options: { allowDataLoss?: boolean; existingMigrations?: readonly string[] } = {},
): MigrationPlan {
  return planMigrations(snapshotOf(modelOf(before)), modelOf(after), {
    allowDataLoss: options.allowDataLoss ?? false,
    existingMigrations: options.existingMigrations ?? [],
  });
}

/** YAML of one entity from its name, key and field lines (each `{name: …, type: …}`). */
export function entity(
  name: string,
  lk: readonly string[],
  fields: readonly string[],
  extra = '',
): string {
  return [
    'type: ENTITY',
    'entity:',
    `  name: ${name}`,
    ...(extra === '' ? [] : [`  ${extra}`]),
    `  lk: [${lk.join(', ')}]`,
    '  fields:',
    ...fields.map((field) => `    - ${field}`),
  ].join('\n');
}

/** Several entities as one multi-document YAML text. */
export function schema(...entities: readonly string[]): string {
  return `${entities.join('\n---\n')}\n`;
}
