/**
 * The model phase of a generation: loads the schema files, the REST configuration and the access
 * file, and turns them into the frozen `ServiceModel` the emitters read (or the diagnostics that
 * prevent one).
 */
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

/** The model of a generation, or the problems that prevent one. */
export interface BuiltModel {
  readonly model?: ServiceModel;
  readonly diagnostics: readonly Diagnostic[];
  /**
   * Whether the model carries the schema's source positions. Without them (the quick parse of
   * cli/schema/parse.ts) a later phase that finds a problem builds the model again with
   * `positions: 'exact'` to say where it is.
   */
  readonly exactPositions: boolean;
}

/**
 * The front of the pipeline: schema files loaded and validated, normalized, joined with the REST
 * configuration and the access file. `validate` stops here. Problems are always reported with
 * their positions: a quick parse that turns up one is redone exactly.
 */
export function buildModel(input: ModelInput, positions: 'exact' | 'none' = 'none'): BuiltModel {
  const loaded = loadSchemas(input.sources, positions);
  const exactPositions = loaded.exactPositions;
  if (loaded.diagnostics.length > 0) return { diagnostics: loaded.diagnostics, exactPositions };
  const { model, diagnostics } = normalize(loaded.entities);
  const rest = model === undefined ? undefined : loadRestConfig(input.restConfig, model);
  const access = model === undefined ? undefined : loadAccess(input.access, model);
  const problems = [...diagnostics, ...(rest?.diagnostics ?? []), ...(access?.diagnostics ?? [])];
  if (problems.length > 0 || model === undefined || rest === undefined || access === undefined) {
    if (!exactPositions) return buildModel(input, 'exact');
    return { diagnostics: problems, exactPositions };
  }
  const named = withSourceNames(model, input.sourceNames);
  return {
    model: serveModel(named, rest.configs, access.access),
    diagnostics: [],
    exactPositions,
  };
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
