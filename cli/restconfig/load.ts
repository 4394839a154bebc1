/**
 * Entry point of `--rest-config`: parse the file (JSON or YAML, reusing the schema parser and
 * its source positions) and validate every document against the schema model.
 */
import { sortDiagnostics, type Diagnostic } from '../diagnostics.js';
import type { SchemaModel } from '../model/types.js';
import type { SchemaNode } from '../schema/node.js';
import { parseSchemaText } from '../schema/parse.js';
import { RestReporter } from './report.js';
import { DEFAULT_ENTITY_REST_CONFIG, type EntityRestConfig } from './types.js';
import { validateDocument, type ValidationContext } from './validate.js';

/** The text of a REST config file; `file` is used in diagnostics and picks the format. */
export interface RestConfigSource {
  readonly file: string;
  readonly text: string;
}

/**
 * Reads the REST configuration of every entity of `model`.
 *
 * - `source` undefined (no `--rest-config`): every entity gets DEFAULT_ENTITY_REST_CONFIG.
 * - Format: a `.json` file holds one document or an array of them; a `.yaml`/`.yml` file one or
 *   more `---`-separated documents (a top-level list of documents is accepted too). Other names
 *   are JSON when the text starts with `{` or `[`. A file with no document configures nothing.
 * - Each document is `{type: ENTITY, entity, config}` or `{type: MULTIPLE_ENTITIES, entities,
 *   config}`; entity names match the schema case-insensitively.
 *
 * On success `configs` has one frozen entry per entity of the model, keyed by the schema's
 * spelling and iterated in name order; entities not mentioned get the defaults. Every problem
 * is collected into `diagnostics` (sorted by position); when there is any, `configs` is empty
 * so that nothing can be generated from a half-valid config.
 *
 * @example loadRestConfig({ file: 'rest.yaml', text }, model).configs.get('PRODUCT')
 */
export function loadRestConfig(
  source: RestConfigSource | undefined,
  model: SchemaModel,
): { configs: ReadonlyMap<string, EntityRestConfig>; diagnostics: Diagnostic[] } {
  const entities = [...model.entities].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const given = new Map<string, EntityRestConfig>();
  if (source !== undefined) {
    const reporter = new RestReporter(source.file);
    const context: ValidationContext = {
      reporter,
      entities: new Map(entities.map((entity) => [entity.name.toUpperCase(), entity])),
      entityNames: entities.map((entity) => entity.name),
      configuredAt: new Map(),
      configs: given,
    };
    for (const root of parseSchemaText(source.file, source.text, reporter).roots) {
      for (const node of documentNodes(root)) validateDocument(node, context);
    }
    const diagnostics = sortDiagnostics(unique(reporter.diagnostics));
    if (diagnostics.length > 0) return { configs: new Map(), diagnostics };
  }
  const configs = new Map(
    entities.map((entity) => [entity.name, given.get(entity.name) ?? DEFAULT_ENTITY_REST_CONFIG]),
  );
  return { configs, diagnostics: [] };
}

/** The documents of one parsed document: itself, or the items of a top-level list. */
function documentNodes(root: SchemaNode): readonly SchemaNode[] {
  return root.kind === 'seq' ? root.items : [root];
}

/** Drops repeated diagnostics (an aliased YAML node is checked once per alias). */
function unique(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((diagnostic) => {
    const key = JSON.stringify([
      diagnostic.line,
      diagnostic.column,
      diagnostic.code,
      diagnostic.message,
    ]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
