import { relative, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { DRIVER_CHOICES, generate, type DriverChoice } from './generate/index.js';
import { generatorVersion } from './generate/paths.js';
import { loadSchemas, readSchemaSources, type SchemaSource } from './schema/index.js';
import { normalize } from './model/normalize.js';
import { writeFiles } from './write.js';

/** Exit codes: success, invalid input, wrong usage. */
const EXIT_OK = 0;
const EXIT_INVALID = 1;
const EXIT_USAGE = 2;

interface GenerateFlags {
  readonly out: string;
  readonly runtimeSpec?: string;
  readonly driver?: DriverChoice;
  readonly restConfig?: string;
}

/** Builds the command-line program; `main` runs it. Exposed for tests. */
export function createProgram(io: {
  out: (text: string) => void;
  err: (text: string) => void;
}): Command {
  const program = new Command();
  program
    .name('entity-gen')
    .description('Generate a typed Koa REST service from ENTITY schemas.')
    .version(generatorVersion(), '-v, --version', 'print the entity-gen version')
    .helpOption('-h, --help', 'show help for a command')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program
    .command('generate')
    .description('Validate the schema files and write the service into the output folder.')
    .argument('<schema...>', 'ENTITY schema files (.json, .yaml, .yml)')
    .requiredOption('-o, --out <dir>', 'output folder of the generated service')
    .addOption(
      new Option('--runtime-spec <spec>', 'npm spec of the @entity-gen/runtime dependency').default(
        undefined,
        `^${generatorVersion()}`,
      ),
    )
    .option(
      '--rest-config <file>',
      'REST configuration (allowed methods, paging, ordering) to bake into the service',
    )
    .addOption(
      new Option(
        '--driver <driver>',
        'database clients the generated package.json depends on (both lets DATABASE_URL choose)',
      )
        .choices(DRIVER_CHOICES)
        .default(undefined, 'both'),
    )
    .action(async (schemas: string[], flags: GenerateFlags) => {
      const { sources, diagnostics } = await readSchemaSources(schemas.map(displayPath));
      if (reportDiagnostics(diagnostics, io)) return;
      const outputDir = displayPath(flags.out);
      let restConfig: SchemaSource | undefined;
      if (flags.restConfig !== undefined) {
        const read = await readSchemaSources([displayPath(flags.restConfig)]);
        if (reportDiagnostics(read.diagnostics, io)) return;
        restConfig = read.sources[0];
      }
      const result = await generate(
        sources,
        {
          schemaFiles: sources.map((source) => source.file),
          outputDir,
          ...(flags.runtimeSpec === undefined ? {} : { runtimeSpec: flags.runtimeSpec }),
          ...(flags.driver === undefined ? {} : { driver: flags.driver }),
        },
        restConfig,
      );
      if (reportDiagnostics(result.diagnostics, io)) return;
      const summary = await writeFiles(resolve(flags.out), result.files);
      const entities = result.model?.entities.length ?? 0;
      io.out(
        `Generated ${result.files.length} files for ${entities} ${entities === 1 ? 'entity' : 'entities'} in ${outputDir}: ` +
          `${summary.created.length} created, ${summary.updated.length} updated, ${summary.unchanged.length} unchanged.\n`,
      );
    });

  program
    .command('validate')
    .description('Check schema files and report every problem as file:line:col: message (CODE).')
    .argument('<schema...>', 'ENTITY schema files (.json, .yaml, .yml)')
    .action(async (schemas: string[]) => {
      const { sources, diagnostics } = await readSchemaSources(schemas.map(displayPath));
      if (reportDiagnostics(diagnostics, io)) return;
      const loaded = loadSchemas(sources);
      if (reportDiagnostics(loaded.diagnostics, io)) return;
      const normalized = normalize(loaded.entities);
      if (reportDiagnostics(normalized.diagnostics, io)) return;
      const count = loaded.entities.length;
      io.out(
        `${sources.length} ${sources.length === 1 ? 'file' : 'files'} OK: ${count} ${count === 1 ? 'entity' : 'entities'}.\n`,
      );
    });

  return program;
}

/** Prints diagnostics and marks the run as failed; returns whether there were any. */
function reportDiagnostics(
  diagnostics: readonly Diagnostic[],
  io: { err: (text: string) => void },
): boolean {
  if (diagnostics.length === 0) return false;
  for (const diagnostic of diagnostics) io.err(`${formatDiagnostic(diagnostic)}\n`);
  io.err(
    `${diagnostics.length} ${diagnostics.length === 1 ? 'problem' : 'problems'} found; nothing was written.\n`,
  );
  process.exitCode = EXIT_INVALID;
  return true;
}

/** Paths as the user typed them, relative to the working folder and with `/` separators. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), resolve(path));
  const shown = rel === '' ? '.' : rel.startsWith('..') && resolve(path) === path ? path : rel;
  return shown.split('\\').join('/');
}

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const io = {
    out: (text: string) => process.stdout.write(text),
    err: (text: string) => process.stderr.write(text),
  };
  const program = createProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with exitCode 0; anything else commander rejects is usage.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    io.err(`entity-gen: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_INVALID;
  }
}
