// What the CLI needs to know about generation before (and without) loading the generator itself:
// cli/program.ts imports this module eagerly and the generator lazily.

/** Options that shape the generated service. */
export interface EmitOptions {
  /** The schema files as the user named them, for headers and the regenerate command. */
  readonly schemaFiles: readonly string[];
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

/** The command that regenerates the service, as the user would type it. */
export function regenerateCommand(options: EmitOptions): string {
  const schemas = options.schemaFiles.map(shellWord).join(' ');
  const runtime =
    options.runtimeSpec === undefined ? '' : ` --runtime-spec ${shellWord(options.runtimeSpec)}`;
  const driver = options.driver === undefined ? '' : ` --driver ${options.driver}`;
  const rest =
    options.restConfigFile === undefined
      ? ''
      : ` --rest-config ${shellWord(options.restConfigFile)}`;
  const access =
    options.accessFile === undefined ? '' : ` --access ${shellWord(options.accessFile)}`;
  return `npx entity-gen generate ${schemas} -o ${shellWord(options.outputDir)}${rest}${access}${runtime}${driver}`;
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@^~=+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
