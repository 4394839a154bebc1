import { join, resolve } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { generate, type DriverChoice } from '../generate/index.js';
import { generatorVersion } from '../generate/paths.js';
import { MANIFEST_PATH } from '../manifest/index.js';
import type { SchemaModel } from '../model/types.js';
import { readSchemaSources, type SchemaSource } from '../schema/index.js';
import { isUpToDate, planOutput, withUserCode, type Plan } from './index.js';
import { readOutputSnapshot } from './snapshot.js';

/** A generation as the CLI's `generate`, `check` and `dev` commands describe it. */
export interface GenerationRequest {
  /** Schema files, as the user named them (relative to the working folder). */
  readonly schemaFiles: readonly string[];
  /** The output folder, as the user named it. */
  readonly outputDir: string;
  readonly restConfigFile?: string;
  /** The access file (roles per entity and method), as the user named it. */
  readonly accessFile?: string;
  readonly runtimeSpec?: string;
  readonly driver?: DriverChoice;
  /** Overwrite generator files changed by hand. */
  readonly force: boolean;
  /** Allow migrations that lose data. */
  readonly allowDataLoss: boolean;
  /** Rewrite the user's files for renames (default true; `--no-codemod` turns it off). */
  readonly codemod?: boolean;
  /**
   * `changes` (what `generate` does): look at the user's code only when the generation changes
   * something, since it was checked when the folder was last written; `always` (`check`).
   */
  readonly userCodeCheck?: 'always' | 'changes';
}

/** The plan of a generation, or the diagnostics that prevent one. */
export interface PreparedGeneration {
  readonly diagnostics: readonly Diagnostic[];
  readonly model?: SchemaModel;
  readonly plan?: Plan;
}

/**
 * Reads the inputs and the output folder and plans the generation, writing nothing: load →
 * validate → normalize → emit → format (`generate`), then `planOutput` against the folder.
 */
export async function prepareGeneration(request: GenerationRequest): Promise<PreparedGeneration> {
  const read = await readSchemaSources(request.schemaFiles);
  if (read.diagnostics.length > 0) return { diagnostics: read.diagnostics };
  let restConfig: SchemaSource | undefined;
  if (request.restConfigFile !== undefined) {
    const rest = await readSchemaSources([request.restConfigFile]);
    if (rest.diagnostics.length > 0) return { diagnostics: rest.diagnostics };
    restConfig = rest.sources[0];
  }
  let access: SchemaSource | undefined;
  if (request.accessFile !== undefined) {
    const read = await readSchemaSources([request.accessFile]);
    if (read.diagnostics.length > 0) return { diagnostics: read.diagnostics };
    access = read.sources[0];
  }
  const result = await generate(
    read.sources,
    {
      schemaFiles: read.sources.map((source) => source.file),
      outputDir: request.outputDir,
      ...(request.runtimeSpec === undefined ? {} : { runtimeSpec: request.runtimeSpec }),
      ...(request.driver === undefined ? {} : { driver: request.driver }),
    },
    restConfig,
    access,
  );
  if (result.model === undefined) return { diagnostics: result.diagnostics };
  const snapshot = await readOutputSnapshot(
    resolve(request.outputDir),
    result.files.map((file) => file.path),
  );
  let plan = planOutput({ files: result.files, model: result.model }, snapshot, {
    force: request.force,
    allowDataLoss: request.allowDataLoss,
    generatorVersion: generatorVersion(),
  });
  const unchanged = request.userCodeCheck === 'changes' && isUpToDate(plan);
  if (plan.diagnostics.length === 0 && !unchanged) {
    const { planUserCode } = await import('../codemod/index.js');
    const userCode = await planUserCode({
      outputDir: resolve(request.outputDir),
      generated: result.files,
      renames: plan.renames,
      changes: plan.migrationSteps.map((step) => step.description),
      codemod: request.codemod ?? true,
    });
    plan = withUserCode(plan, userCode);
  }
  const diagnostics = plan.diagnostics.map((diagnostic) =>
    diagnostic.file === MANIFEST_PATH
      ? { ...diagnostic, file: join(request.outputDir, MANIFEST_PATH).split('\\').join('/') }
      : diagnostic,
  );
  return { diagnostics, model: result.model, plan };
}
