import { basename, join, resolve } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { generate, reusableFiles } from '../generate/index.js';
import { inWorker, startWorker } from '../worker/index.js';
import { MANIFEST_PATH } from '../manifest/index.js';
import type { ServiceModel } from '../model/types.js';
import { isUpToDate, planOutput, withUserCode, type Plan } from '../plan/index.js';
import { readSchemaSources, type SchemaSource } from '../schema/index.js';
import { folderPath, invocationOf, type GenerationRequest } from './invocation.js';
import { readOutputSnapshot, readPreviousOutput } from './snapshot.js';

export type { GenerationRequest } from './invocation.js';

/** The plan of a generation, or the diagnostics that prevent one. */
export interface PreparedGeneration {
  readonly diagnostics: readonly Diagnostic[];
  readonly model?: ServiceModel;
  readonly plan?: Plan;
}

/**
 * Reads the inputs and the output folder and plans the generation, writing nothing: load →
 * validate → normalize → emit → format (`generate`), then `planOutput` against the folder.
 */
export async function prepareGeneration(request: GenerationRequest): Promise<PreparedGeneration> {
  // The worker loads what it needs (json-schema-to-typescript above all) while the schema is read.
  startWorker();
  const read = await readSchemaSources(request.schemaFiles);
  if (read.diagnostics.length > 0) return { diagnostics: read.diagnostics };
  const optional = async (file: string | undefined): Promise<ReadOptional> => {
    if (file === undefined) return { source: undefined };
    const found = await readSchemaSources([file]);
    return found.diagnostics.length > 0
      ? { diagnostics: found.diagnostics }
      : { source: found.sources[0] };
  };
  const rest = await optional(request.restConfigFile);
  if (rest.diagnostics !== undefined) return { diagnostics: rest.diagnostics };
  const access = await optional(request.accessFile);
  if (access.diagnostics !== undefined) return { diagnostics: access.diagnostics };
  // What is generated names its inputs relative to the output folder, so that it does not depend
  // on the working directory; diagnostics name them as the user did.
  const inFolder = (file: string): string => folderPath(request.outputDir, file);
  const sourceNames = Object.fromEntries(
    read.sources.map((source) => [source.file, inFolder(source.file)]),
  );
  const asShown = (diagnostics: readonly Diagnostic[]): Diagnostic[] =>
    diagnostics.map((diagnostic) =>
      diagnostic.file === MANIFEST_PATH
        ? { ...diagnostic, file: join(request.outputDir, MANIFEST_PATH).split('\\').join('/') }
        : diagnostic,
    );
  const outputDir = resolve(request.outputDir);
  const previous = await readPreviousOutput(outputDir);
  if (previous.diagnostic !== undefined) return { diagnostics: asShown([previous.diagnostic]) };
  const result = await generate(
    {
      sources: read.sources,
      ...(rest.source === undefined ? {} : { restConfig: rest.source }),
      ...(access.source === undefined ? {} : { access: access.source }),
      options: {
        schemaFiles: read.sources.map((source) => inFolder(source.file)),
        sourceNames,
        outputDir: basename(outputDir),
        ...(rest.source === undefined ? {} : { restConfigFile: inFolder(rest.source.file) }),
        ...(access.source === undefined ? {} : { accessFile: inFolder(access.source.file) }),
        ...(request.runtimeSpec === undefined ? {} : { runtimeSpec: request.runtimeSpec }),
        ...(request.driver === undefined ? {} : { driver: request.driver }),
      },
      previous: previous.output,
      allowDataLoss: request.allowDataLoss,
      clearDanglingReferences: request.clearDanglingReferences === true,
      invocation: invocationOf(request),
    },
    {
      // Files of the last generation that are still as it wrote them need not be made again.
      cache: reusableFiles(previous.cacheText, previous.files),
      run: inWorker,
    },
  );
  if (result.model === undefined) return { diagnostics: asShown(result.diagnostics) };
  const snapshot = await readOutputSnapshot(outputDir, previous, result.files);
  let plan = planOutput(result, snapshot, { force: request.force });
  const unchanged = request.userCodeCheck === 'changes' && isUpToDate(plan);
  if (plan.diagnostics.length === 0 && !unchanged) {
    const { planUserCode } = await import('../codemod/index.js');
    const userCode = await planUserCode({
      outputDir,
      generated: result.files,
      renames: result.renames,
      changes: result.migrationSteps.map((step) => step.description),
      codemod: request.codemod ?? true,
      typecheck: request.typecheck ?? true,
      ...(result.formerStarters === undefined ? {} : { formerStarters: result.formerStarters }),
      read: snapshot.files,
    });
    plan = withUserCode(plan, userCode);
  }
  return { diagnostics: asShown(plan.diagnostics), model: result.model, plan };
}

/** A REST configuration or access file read, or why it could not be. */
type ReadOptional =
  | { readonly source: SchemaSource | undefined; readonly diagnostics?: undefined }
  | { readonly source?: undefined; readonly diagnostics: readonly Diagnostic[] };
