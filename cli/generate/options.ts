// What the CLI needs to know about generation before (and without) loading the generator itself:
// cli/program.ts imports this module eagerly and the generator lazily.

/** Options that shape the generated service. */
export interface EmitOptions {
  /** The schema files as headers name them. */
  readonly schemaFiles: readonly string[];
  /**
   * How generated files name each schema file (by the name it was read under): the CLI names them
   * relative to the output folder, so the output does not depend on the working directory.
   */
  readonly sourceNames?: Readonly<Record<string, string>>;
  /** The output folder as the user named it. */
  readonly outputDir: string;
  /** npm spec of the `@entity-gen/runtime` dependency (default: `^<generator version>`). */
  readonly runtimeSpec?: string;
  /** Database clients the service depends on (default `both`). */
  readonly driver?: DriverChoice;
  /** The REST configuration file as the user named it, when one was given. */
  readonly restConfigFile?: string;
  /** The access file as the user named it, when one was given. */
  readonly accessFile?: string;
}

/** Which database clients the generated package.json pulls in. */
export type DriverChoice = 'sqlite' | 'postgres' | 'both';

/** The `--driver` values, for the CLI. */
export const DRIVER_CHOICES: readonly DriverChoice[] = ['sqlite', 'postgres', 'both'];

export { REGENERATE_COMMAND } from '../header.js';
