/**
 * The command line: the commander program with every `entity-gen` command and option, exit codes,
 * and `main`, which runs it with the given arguments and environment.
 */
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { DRIVER_CHOICES } from './generate/options.js';
import {
  DEFAULT_OUTPUT_DIR,
  displayPath,
  resolveRequest,
  type GenerationFlags,
} from './run/invocation.js';
import { generatorVersion } from './generate/paths.js';
import { isUpToDate, planChanges, type Plan } from './plan/index.js';
import type { GenerationRequest, PreparedGeneration } from './run/prepare.js';
import {
  countPlan,
  describeConflict,
  describeMigrations,
  describePlan,
  describeUserCode,
  summarizeCounts,
} from './plan/report.js';
import { readSchemaSources } from './schema/index.js';

/**
 * The generator (Handlebars templates and the Biome formatter) is loaded only by the commands
 * that generate: `validate`, `--help` and `--version` stay fast.
 */
async function prepareGeneration(request: GenerationRequest): Promise<PreparedGeneration> {
  const prepare = await import('./run/prepare.js');
  return prepare.prepareGeneration(request);
}

/** Exit codes: success, invalid input (or out of date, for `check`), wrong usage. */
const EXIT_OK = 0;
const EXIT_INVALID = 1;
const EXIT_USAGE = 2;

interface GenerateFlags extends GenerationFlags {
  readonly force?: boolean;
  readonly dryRun?: boolean;
}

type Io = { out: (text: string) => void; err: (text: string) => void };

/** A run of the command line: where it reports, the environment it passes on, its outcome. */
export interface ProgramContext extends Io {
  /** Environment of the service `dev` starts (main.ts passes `process.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Exit code of the run: what the action of the command that ran returned (0 until then). */
  exitCode: number;
}

/** Builds the command-line program; `main` runs it. Exposed for tests. */
export function createProgram(context: ProgramContext): Command {
  const io: Io = context;
  /** An action that returns its exit code, which becomes the run's. */
  const exits =
    <A extends unknown[]>(action: (...args: A) => Promise<number>) =>
    async (...args: A): Promise<void> => {
      context.exitCode = await action(...args);
    };
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
    .action(
      exits(async (schemas: string[], flags: GenerateFlags) => {
        const resolved = await resolveRequest(schemas, flags, flags.force === true);
        if (resolved.request === undefined) return reportUsage(resolved.problem, io);
        const request = { ...resolved.request, userCodeCheck: 'changes' as const };
        const prepared = await prepareGeneration(request);
        if (prepared.diagnostics.length > 0) return reportDiagnostics(prepared.diagnostics, io);
        if (prepared.plan === undefined) return EXIT_OK;
        const plan = prepared.plan;
        const entities = prepared.model?.entities.length ?? 0;
        const counts = countPlan(plan);
        if (flags.dryRun === true) {
          io.out(
            `Dry run for ${request.outputDir} (nothing was written): ${summarizeCounts(counts, true)}.\n`,
          );
          for (const line of describePlan(plan)) io.out(`${line}\n`);
          return plan.blocked ? reportBlocked(plan, io, false) : EXIT_OK;
        }
        if (plan.blocked) return reportBlocked(plan, io, true);
        const { applyChanges } = await import('./run/write.js');
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
        return EXIT_OK;
      }),
    );

  withGenerationOptions(
    program
      .command('check')
      .description(
        'Regenerate in memory and compare with the output folder: exit 0 when it is up to date, ' +
          '1 when a file would be created, changed or removed (for CI).',
      ),
  ).action(
    exits(async (schemas: string[], flags: GenerationFlags) => {
      const resolved = await resolveRequest(schemas, flags, false);
      if (resolved.request === undefined) return reportUsage(resolved.problem, io);
      const request = resolved.request;
      const prepared = await prepareGeneration(request);
      if (prepared.diagnostics.length > 0)
        return reportDiagnostics(prepared.diagnostics, io, 'nothing was checked');
      if (prepared.plan === undefined) return EXIT_OK;
      const plan = prepared.plan;
      if (isUpToDate(plan)) {
        const problems = plan.userCode?.problems.length ?? 0;
        // Code that could not be type-checked is not known to compile: CI must not pass it.
        const unchecked = plan.userCode?.notChecked !== undefined;
        io.out(
          problems > 0
            ? `${request.outputDir} is up to date, but your own code does not compile against it.\n`
            : unchecked
              ? `${request.outputDir} is up to date, but your own code could not be type-checked.\n`
              : `${request.outputDir} is up to date.\n`,
        );
        for (const line of describeUserCode(plan)) io.out(`${line}\n`);
        for (const note of plan.notes) io.out(`note: ${note}\n`);
        return problems > 0 || unchecked ? EXIT_INVALID : EXIT_OK;
      }
      const counts = countPlan(plan);
      io.out(
        `${request.outputDir} is out of date: ${summarizeCounts(counts, true)}` +
          `${plan.conflicts.length > 0 ? `, ${plan.conflicts.length} changed by hand` : ''}.\n`,
      );
      for (const line of describePlan(plan)) io.out(`${line}\n`);
      const dataLoss = request.allowDataLoss ? ' --allow-data-loss' : '';
      const out = request.outputDir === DEFAULT_OUTPUT_DIR ? '' : ` -o ${request.outputDir}`;
      io.out(
        `Regenerate with: npx entity-gen generate${schemas.length > 0 ? ` ${request.schemaFiles.join(' ')}` : ''}${out}${dataLoss}\n`,
      );
      return EXIT_INVALID;
    }),
  );

  withGenerationOptions(
    program
      .command('dev')
      .description(
        'Generate, build and start the service, then regenerate, rebuild and restart it whenever ' +
          'a schema file or the REST configuration changes. Stop with Ctrl-C.',
      ),
  ).action(
    exits(async (schemas: string[], flags: GenerationFlags) => {
      const resolved = await resolveRequest(schemas, flags, false);
      if (resolved.request === undefined) return reportUsage(resolved.problem, io);
      const { runDev } = await import('./dev/index.js');
      return runDev(resolved.request, io, { env: context.env });
    }),
  );

  program
    .command('init')
    .description(
      'Write a commented example schema.yaml into the working folder (never overwriting one) and ' +
        'print the next commands.',
    )
    .action(
      exits(async () => {
        const { writeExampleSchema } = await import('./init.js');
        const outcome = await writeExampleSchema(process.cwd());
        if (outcome.problem !== undefined) {
          io.err(`entity-gen: ${outcome.problem}\n`);
          return EXIT_INVALID;
        }
        io.out(outcome.message);
        return EXIT_OK;
      }),
    );

  program
    .command('validate')
    .description(
      'Check schema files (and the REST configuration and access file, if given) and report ' +
        'every problem as file:line:col: message (CODE). Writes nothing.',
    )
    .argument('<schema...>', 'ENTITY schema files (.json, .yaml, .yml)')
    .option('--rest-config <file>', 'REST configuration to check against the schema')
    .option('--access <file>', 'access rules to check against the schema')
    .action(
      exits(async (schemas: string[], flags: { restConfig?: string; access?: string }) => {
        const files = [...schemas, flags.restConfig, flags.access].filter(
          (file): file is string => file !== undefined,
        );
        const { sources, diagnostics } = await readSchemaSources(files.map(displayPath));
        if (diagnostics.length > 0) return reportDiagnostics(diagnostics, io);
        const schemaSources = sources.slice(0, schemas.length);
        let next = schemas.length;
        const restConfig = flags.restConfig === undefined ? undefined : sources[next++];
        const access = flags.access === undefined ? undefined : sources[next++];
        const { buildModel } = await import('./model/build.js');
        const built = buildModel({
          sources: schemaSources,
          ...(restConfig === undefined ? {} : { restConfig }),
          ...(access === undefined ? {} : { access }),
        });
        if (built.diagnostics.length > 0) return reportDiagnostics(built.diagnostics, io);
        const count = built.model?.entities.length ?? 0;
        io.out(
          `${schemaSources.length} ${schemaSources.length === 1 ? 'file' : 'files'} OK: ${count} ${count === 1 ? 'entity' : 'entities'}.\n`,
        );
        return EXIT_OK;
      }),
    );

  return program;
}

/** Adds the arguments and options every command that generates has. */
function withGenerationOptions(command: Command): Command {
  return command
    .argument(
      '[schema...]',
      'ENTITY schema files (.json, .yaml, .yml); none: repeat the generation recorded in the output folder',
    )
    .option(
      '-o, --out <dir>',
      `output folder of the generated service (default: ${DEFAULT_OUTPUT_DIR})`,
    )
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
    .option('--no-rest-config', 'drop the REST configuration recorded by an earlier generation')
    .option(
      '--access <file>',
      'access rules (roles per entity and method, owner rows) to bake into the service',
    )
    .option('--no-access', 'drop the access rules recorded by an earlier generation')
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
      '--clear-dangling-references',
      'when a reference gains onDelete, clear its stored values that name no record',
    )
    .option(
      '--no-codemod',
      'leave your own files (src/hooks, src/server.ts, …) as they are when the schema renames something',
    )
    .option('--no-typecheck', 'do not type-check your own files against the generated code');
}

/** Prints a usage problem; returns the exit code of wrong usage. */
function reportUsage(problem: string, io: Io): number {
  io.err(`entity-gen: ${problem}\n`);
  return EXIT_USAGE;
}

/** Explains why a generation may not write (files changed by hand); returns the exit code. */
function reportBlocked(plan: Plan, io: Io, wrote: boolean): number {
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
  return EXIT_INVALID;
}

/** Prints diagnostics; returns the exit code of invalid input. */
function reportDiagnostics(
  diagnostics: readonly Diagnostic[],
  io: { err: (text: string) => void },
  outcome = 'nothing was written',
): number {
  for (const diagnostic of diagnostics) io.err(`${formatDiagnostic(diagnostic)}\n`);
  io.err(
    `${diagnostics.length} ${diagnostics.length === 1 ? 'problem' : 'problems'} found; ${outcome}.\n`,
  );
  return EXIT_INVALID;
}

/** The terminal: standard output and standard error. */
const STANDARD_IO: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/**
 * Runs the CLI with `argv` (without node and script) and `env` (handed to the service of `dev`);
 * returns the exit code.
 */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: Io = STANDARD_IO,
): Promise<number> {
  const context: ProgramContext = { out: io.out, err: io.err, env, exitCode: EXIT_OK };
  const program = createProgram(context);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with exitCode 0; anything else commander rejects is usage.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    io.err(`entity-gen: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_INVALID;
  }
}
