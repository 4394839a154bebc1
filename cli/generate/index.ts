import { loadAccess, type AccessSource } from '../access/index.js';
import type { Diagnostic } from '../diagnostics.js';
import { normalize } from '../model/normalize.js';
import type { SchemaModel } from '../model/types.js';
import { loadRestConfig, type RestConfigSource } from '../restconfig/index.js';
import { loadSchemas } from '../schema/index.js';
import type { SchemaSource } from '../schema/types.js';
import {
  emitService,
  headerLine,
  REGENERATE_COMMAND,
  type EmitOptions,
  type FileOwner,
} from './emit.js';
import { finishFile } from './format.js';

export {
  DRIVER_CHOICES,
  hooksPath,
  type DriverChoice,
  type EmitOptions,
  type FileOwner,
} from './emit.js';

/**
 * One file of the generated service: a path relative to the output folder, its text, and who owns
 * it (generator files are rewritten on every run, user files are only created when absent).
 */
export interface GeneratedFile {
  readonly path: string;
  readonly contents: string;
  readonly owner: FileOwner;
}

/** Outcome of `generate`: files when the input was valid, diagnostics otherwise. */
export interface GenerateResult {
  readonly files: readonly GeneratedFile[];
  readonly diagnostics: readonly Diagnostic[];
  readonly model: SchemaModel | undefined;
}

/**
 * The whole generator as a pure function: load → validate → normalize → emit. Returns
 * every file sorted by path, or the diagnostics and no files. Never touches the disk; what to do
 * with files already in the output folder is decided by `planOutput` (cli/plan).
 */
export async function generate(
  sources: readonly SchemaSource[],
  options: EmitOptions,
  restConfig?: RestConfigSource,
  accessFile?: AccessSource,
): Promise<GenerateResult> {
  const loaded = loadSchemas(sources);
  if (loaded.diagnostics.length > 0)
    return { files: [], diagnostics: loaded.diagnostics, model: undefined };
  const { model, diagnostics } = normalize(loaded.entities);
  if (model === undefined) return { files: [], diagnostics, model: undefined };
  const rest = loadRestConfig(restConfig, model);
  if (rest.diagnostics.length > 0)
    return { files: [], diagnostics: rest.diagnostics, model: undefined };
  const access = loadAccess(accessFile, model);
  if (access.diagnostics.length > 0)
    return { files: [], diagnostics: access.diagnostics, model: undefined };
  const emitOptions = {
    ...options,
    ...(restConfig === undefined || options.restConfigFile !== undefined
      ? {}
      : { restConfigFile: restConfig.file }),
    ...(accessFile === undefined || options.accessFile !== undefined
      ? {}
      : { accessFile: accessFile.file }),
  };
  const named = withSourceNames(model, options.sourceNames);
  const emitted = emitService(named, emitOptions, rest.configs, access.access, accessFile?.text);
  const files = emitted.map((file) => ({
    path: file.path,
    contents: finishFile(
      file.owner === 'user'
        ? file.contents
        : withHeader(file.path, file.contents, headerLine(named, file.sources)),
    ),
    owner: file.owner,
  }));
  return { files, diagnostics: [], model: named };
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

/**
 * Adds the "generated, do not edit" header in the comment syntax of the file type. The command
 * is the same wherever and by whomever the service was generated: the options are remembered in
 * the folder's manifest, so repeating the generation needs none.
 */
function withHeader(path: string, contents: string, header: string): string {
  const command = `Regenerate: ${REGENERATE_COMMAND}`;
  if (path.endsWith('.ts') || path.endsWith('tsconfig.json'))
    return `// ${header}\n// ${command}\n\n${contents}`;
  if (path.endsWith('.md')) return `<!-- ${header} -->\n<!-- ${command} -->\n\n${contents}`;
  // package.json carries the header in its "//" property (JSON has no comments).
  return contents;
}
