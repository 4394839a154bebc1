import { loadAccess, type AccessSource } from '../access/index.js';
import type { Diagnostic } from '../diagnostics.js';
import { loadRestConfig, type RestConfigSource } from '../restconfig/index.js';
import { loadSchemas } from '../schema/index.js';
import type { SchemaSource } from '../schema/types.js';
import { normalize } from './normalize.js';
import { serveModel } from './serve.js';
import type { SchemaModel, ServiceModel } from './types.js';

/** The inputs of a generation that make its model. */
export interface ModelInput {
  readonly sources: readonly SchemaSource[];
  readonly restConfig?: RestConfigSource;
  readonly access?: AccessSource;
  /** How generated files name each schema file, by the name it was read under. */
  readonly sourceNames?: Readonly<Record<string, string>>;
}

/**
 * The front of the pipeline: schema files loaded and validated, normalized, joined with the REST
 * configuration and the access file. `validate` stops here.
 */
export function buildModel(input: ModelInput): {
  model?: ServiceModel;
  diagnostics: readonly Diagnostic[];
} {
  const loaded = loadSchemas(input.sources);
  if (loaded.diagnostics.length > 0) return { diagnostics: loaded.diagnostics };
  const { model, diagnostics } = normalize(loaded.entities);
  if (model === undefined) return { diagnostics };
  const rest = loadRestConfig(input.restConfig, model);
  const access = loadAccess(input.access, model);
  if (rest.diagnostics.length > 0 || access.diagnostics.length > 0)
    return { diagnostics: [...rest.diagnostics, ...access.diagnostics] };
  const named = withSourceNames(model, input.sourceNames);
  return { model: serveModel(named, rest.configs, access.access), diagnostics: [] };
}

/** The model with its schema files named as generated files name them (see `sourceNames`). */
function withSourceNames(
  model: SchemaModel,
  names: Readonly<Record<string, string>> | undefined,
): SchemaModel {
  if (names === undefined) return model;
  const name = (file: string): string => names[file] ?? file;
  return Object.freeze({
    ...model,
    sourceFiles: Object.freeze(model.sourceFiles.map(name)),
    entities: Object.freeze(
      model.entities.map((entity) =>
        Object.freeze({ ...entity, sourceFile: name(entity.sourceFile) }),
      ),
    ),
  });
}
