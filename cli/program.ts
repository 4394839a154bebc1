import { relative, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { DRIVER_CHOICES, regenerateCommand, type DriverChoice } from './generate/options.js';
import { generatorVersion } from './generate/paths.js';
import { isUpToDate, planChanges, type Plan } from './plan/index.js';
import type { GenerationRequest, PreparedGeneration } from './plan/prepare.js';
import {
  countPlan,
  describeConflict,
  describeMigrations,
  describePlan,
  describeUserCode,
  summarizeCounts,
} from './plan/report.js';
import { loadSchemas, readSchemaSources } from './schema/index.js';
import { normalize } from './model/normalize.js';

/**
 * The generator (Handlebars templates and the code layout) is loaded only by the commands
 * that generate: `validate`, `--help` and `--version` stay fast.
 */
async function prepareGeneration(request: GenerationRequest): Promise<PreparedGeneration> {
  const prepare = await import('./plan/prepare.js');
  return prepare.prepareGeneration(request);
}

/** Exit codes: success, invalid input (or out of date, for `check`), wrong usage. */
const EXIT_OK = 0;
const EXIT_INVALID = 1;
const EXIT_USAGE = 2;

/** Options shared by `generate`, `check` and `dev`. */
interface GenerationFlags {
  readonly out: string;
  readonly runtimeSpec?: string;
  readonly driver?: DriverChoice;
  readonly restConfig?: string;
  readonly access?: string;
  readonly allowDataLoss?: boolean;
  /** `--no-codemod` sets it false. */
  readonly codemod?: boolean;
}

interface GenerateFlags extends GenerationFlags {
  readonly force?: boolean;
  readonly dryRun?: boolean;
}

type Io = { out: (text: string) => void; err: (text: string) => void };

/** Builds the command-line program; `main` runs it. Exposed for tests. */
export function createProgram(io: Io): Command {
  const program = new Command();
  program
    .name('entity-gen')
    .description('Generate a typed Koa REST service from ENTITY schemas.')
    .version(generatorVersion(), '-v, --version', 'print the entity-gen version')
    .helpOption('-h, --help', 'show help for a command')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  withGenerationOptions(
    program
      .command('generate')
      .description(
        'Validate the schema files and write the service into the output folder. Files changed ' +
          'by hand since they were generated are not overwritten (the run stops) unless --force.',
      ),
  )
    .option('--force', 'overwrite generated files that were changed by hand')
    .option('--dry-run', 'print what would be created, updated and deleted; write nothing')
    .action(async (schemas: string[], flags: GenerateFlags) => {
      const request = {
        ...generationRequest(schemas, flags, flags.force === true),
        userCodeCheck: 'changes' as const,
      };
      const prepared = await prepareGeneration(request);
      if (reportDiagnostics(prepared.diagnostics, io) || prepared.plan === undefined) return;
      const plan = prepared.plan;
      const entities = prepared.model?.entities.length ?? 0;
      const counts = countPlan(plan);
      if (flags.dryRun === true) {
        io.out(
          `Dry run for ${request.outputDir} (nothing was written): ${summarizeCounts(counts, true)}.\n`,
        );
        for (const line of describePlan(plan)) io.out(`${line}\n`);
        if (plan.blocked) reportBlocked(plan, io, false);
        return;
      }
      if (plan.blocked) {
        reportBlocked(plan, io, true);
        return;
      }
      const { applyChanges } = await import('./write.js');
      await applyChanges(resolve(request.outputDir), planChanges(plan));
      const total = plan.files.filter(
        (file) => file.owner !== 'manifest' && file.action !== 'delete',
      ).length;
      io.out(
        `Generated ${total} files for ${entities} ${entities === 1 ? 'entity' : 'entities'} in ${request.outputDir}: ${summarizeCounts(counts, false)}.\n`,
      );
      for (const file of plan.files) {
        if (file.action === 'delete' && file.forced !== true)
          io.out(`  deleted  ${file.path} (${file.reason ?? 'no longer generated'})\n`);
      }
      for (const conflict of plan.conflicts) io.out(`  ${describeConflict(conflict, false)}\n`);
      for (const line of describeMigrations(plan)) io.out(`${line}\n`);
      for (const line of describeUserCode(plan)) io.out(`${line}\n`);
      for (const note of plan.notes) io.out(`note: ${note}\n`);
    });

  withGenerationOptions(
    program
      .command('check')
      .description(
        'Regenerate in memory and compare with the output folder: exit 0 when it is up to date, ' +
          '1 when a file would be created, changed or removed (for CI).',
      ),
  ).action(async (schemas: string[], flags: GenerationFlags) => {
    const request = generationRequest(schemas, flags, false);
    const prepared = await prepareGeneration(request);
    if (
      reportDiagnostics(prepared.diagnostics, io, 'nothing was checked') ||
      prepared.plan === undefined
    )
      return;
    const plan = prepared.plan;
    if (isUpToDate(plan)) {
      const problems = plan.userCode?.problems.length ?? 0;
      io.out(
        problems === 0
          ? `${request.outputDir} is up to date.\n`
          : `${request.outputDir} is up to date, but your own code does not compile against it.\n`,
      );
      for (const line of describeUserCode(plan)) io.out(`${line}\n`);
      for (const note of plan.notes) io.out(`note: ${note}\n`);
      if (problems > 0) process.exitCode = EXIT_INVALID;
      return;
    }
    const counts = countPlan(plan);
    io.out(
      `${request.outputDir} is out of date: ${summarizeCounts(counts, true)}` +
        `${plan.conflicts.length > 0 ? `, ${plan.conflicts.length} changed by hand` : ''}.\n`,
    );
    for (const line of describePlan(plan)) io.out(`${line}\n`);
    const dataLoss = request.allowDataLoss ? ' --allow-data-loss' : '';
    io.out(`Regenerate with: ${regenerateCommand(emitOptionsOf(request))}${dataLoss}\n`);
    process.exitCode = EXIT_INVALID;
  });

  withGenerationOptions(
    program
      .command('dev')
      .description(
        'Generate, build and start the service, then regenerate, rebuild and restart it whenever ' +
          'a schema file or the REST configuration changes. Stop with Ctrl-C.',
      ),
  ).action(async (schemas: string[], flags: GenerationFlags) => {
    const request = generationRequest(schemas, flags, false);
    const { runDev } = await import('./dev/index.js');
    process.exitCode = await runDev(request, io);
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

/** Adds the arguments and options every command that generates has. */
function withGenerationOptions(command: Command): Command {
  return command
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
    .option(
      '--access <file>',
      'access rules (roles per entity and method, owner rows) to bake into the service',
    )
    .addOption(
      new Option(
        '--driver <driver>',
        'database clients the generated package.json depends on (both lets DATABASE_URL choose)',
      )
        .choices(DRIVER_CHOICES)
        .default(undefined, 'both'),
    )
    .option('--allow-data-loss', 'allow migrations that drop stored data (columns, tables)')
    .option(
      '--no-codemod',
      'leave your own files (src/hooks, src/server.ts, …) as they are when the schema renames something',
    );
}

function generationRequest(
  schemas: readonly string[],
  flags: GenerationFlags,
  force: boolean,
): GenerationRequest {
  return {
    schemaFiles: schemas.map(displayPath),
    outputDir: displayPath(flags.out),
    ...(flags.restConfig === undefined ? {} : { restConfigFile: displayPath(flags.restConfig) }),
    ...(flags.access === undefined ? {} : { accessFile: displayPath(flags.access) }),
    ...(flags.runtimeSpec === undefined ? {} : { runtimeSpec: flags.runtimeSpec }),
    ...(flags.driver === undefined ? {} : { driver: flags.driver }),
    force,
    allowDataLoss: flags.allowDataLoss === true,
    codemod: flags.codemod !== false,
  };
}

function emitOptionsOf(request: GenerationRequest): Parameters<typeof regenerateCommand>[0] {
  return {
    schemaFiles: request.schemaFiles,
    outputDir: request.outputDir,
    ...(request.restConfigFile === undefined ? {} : { restConfigFile: request.restConfigFile }),
    ...(request.accessFile === undefined ? {} : { accessFile: request.accessFile }),
    ...(request.runtimeSpec === undefined ? {} : { runtimeSpec: request.runtimeSpec }),
    ...(request.driver === undefined ? {} : { driver: request.driver }),
  };
}

/** Explains why a generation may not write (files changed by hand) and marks the run failed. */
function reportBlocked(plan: Plan, io: Io, wrote: boolean): void {
  const count = plan.conflicts.length;
  io.err(
    `entity-gen: ${count} ${count === 1 ? 'file' : 'files'} would be overwritten or deleted although ` +
      `entity-gen may not:\n`,
  );
  for (const conflict of plan.conflicts) io.err(`  ${describeConflict(conflict, true)}\n`);
  io.err(
    'Generated files are rewritten on every run: move your changes to src/hooks/ or ' +
      'src/server.ts (yours, never overwritten), or run again with --force to overwrite them.' +
      `${wrote ? ' Nothing was written.' : ''}\n`,
  );
  process.exitCode = EXIT_INVALID;
}

/** Prints diagnostics and marks the run as failed; returns whether there were any. */
function reportDiagnostics(
  diagnostics: readonly Diagnostic[],
  io: { err: (text: string) => void },
  outcome = 'nothing was written',
): boolean {
  if (diagnostics.length === 0) return false;
  for (const diagnostic of diagnostics) io.err(`${formatDiagnostic(diagnostic)}\n`);
  io.err(
    `${diagnostics.length} ${diagnostics.length === 1 ? 'problem' : 'problems'} found; ${outcome}.\n`,
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
