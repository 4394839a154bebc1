/**
 * `entity-gen dev`: generate, build and run the service, and do it again whenever the schema, the
 * REST configuration or the user's own files (`src/hooks/`, `src/server.ts`) change.
 *
 * Decisions:
 * - Every cycle runs the same plan as `generate` (without --force): an invalid schema, or a
 *   generated file changed by hand, prints the problem and keeps the running service as it is.
 * - The build is `tsc -p tsconfig.json --noEmitOnError` with the TypeScript of the service's own
 *   node_modules, so a type error leaves `dist/` (and the running service) untouched.
 * - The service runs as `node dist/server.js` in the output folder with the caller's environment;
 *   `DATABASE_URL` defaults to `sqlite:./data/dev.db` there, so dev data stays apart from
 *   `data/service.db`. A restart waits for the old process to exit before starting the new one.
 * - Ctrl-C or SIGTERM stops the watchers, then the service (SIGTERM, SIGKILL after 10 s), and
 *   exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { formatDiagnostic } from '../diagnostics.js';
import { planChanges } from '../plan/index.js';
import { prepareGeneration, type GenerationRequest } from '../run/prepare.js';
import { countPlan, describeConflict, describeMigrations } from '../plan/report.js';
import { readIfExists } from '../run/snapshot.js';
import { applyChanges } from '../run/write.js';

/** How often `dev` reads its input files besides watching them (a watcher can miss a save). */
const INPUT_POLL_MS = 1000;
/** Where `dev` reports; the service's own output is forwarded here too. */
export interface DevIo {
  out(text: string): void;
  err(text: string): void;
}

export interface DevOptions {
  /** Environment of the service (the CLI passes its own). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Quiet time after a change before a cycle starts (default 150 ms). */
  readonly debounceMs?: number;
  /** Resolves when dev should stop; default: the first SIGINT or SIGTERM. */
  readonly stopSignal?: Promise<unknown>;
}

const DEFAULT_DATABASE_URL = 'sqlite:./data/dev.db';
const STOP_TIMEOUT_MS = 10_000;

/** Runs the dev loop until stopped; returns the exit code. */
export async function runDev(
  request: GenerationRequest,
  io: DevIo,
  options: DevOptions,
): Promise<number> {
  const session = new DevSession(request, io, options);
  return session.run();
}

class DevSession {
  private readonly outputDir: string;
  private readonly say: (text: string) => void;
  private service: ChildProcess | undefined;
  private build: ChildProcess | undefined;
  private watcher: FSWatcher | undefined;
  /** Last seen text of every watched file, so saves that change nothing are ignored. */
  private readonly seen = new Map<string, string | undefined>();
  private timer: NodeJS.Timeout | undefined;
  /** The once-a-second look at the inputs (see `run`). */
  private poll: NodeJS.Timeout | undefined;
  private cycling = false;
  private again = false;
  private userCodeChanged = false;
  private lastBuildFailed = false;
  private stopping = false;
  /** The cycle in progress, which shutdown waits for. */
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly request: GenerationRequest,
    private readonly io: DevIo,
    private readonly options: DevOptions,
  ) {
    this.outputDir = resolve(request.outputDir);
    this.say = (text) => io.out(`[entity-gen dev] ${text}\n`);
  }

  async run(): Promise<number> {
    const stop = this.options.stopSignal ?? signalled();
    const inputs = [
      ...this.request.schemaFiles,
      ...(this.request.restConfigFile === undefined ? [] : [this.request.restConfigFile]),
      ...(this.request.accessFile === undefined ? [] : [this.request.accessFile]),
    ];
    this.say(
      `watching ${inputs.join(', ')}; the service runs from ${this.request.outputDir}. Ctrl-C stops.`,
    );
    for (const file of inputs) this.seen.set(resolve(file), await readIfExists(resolve(file)));
    const ready = await this.cycle(true);
    if (ready === 'missing-dependencies') {
      await this.shutdown();
      return 1;
    }
    await this.watchFiles(inputs);
    // A safety net for file systems and editors whose saves the watcher misses: the inputs (a few
    // small files) are read once a second and compared with what the last cycle saw.
    const resolved = inputs.map((input) => resolve(input));
    this.poll = setInterval(() => {
      if (!this.cycling) for (const file of resolved) this.changed(file, false);
    }, INPUT_POLL_MS);
    await stop;
    this.say('stopping');
    await this.shutdown();
    this.say('stopped');
    return 0;
  }

  /** Regenerates, rebuilds when something changed, restarts when the build succeeded. */
  private async cycle(first: boolean): Promise<'ok' | 'kept' | 'missing-dependencies'> {
    const prepared = await prepareGeneration(this.request);
    if (this.stopping) return 'kept';
    if (prepared.diagnostics.length > 0 || prepared.plan === undefined) {
      for (const diagnostic of prepared.diagnostics)
        this.io.err(`${formatDiagnostic(diagnostic)}\n`);
      const count = prepared.diagnostics.length;
      this.keepRunning(`${count} ${count === 1 ? 'problem' : 'problems'} found`);
      return 'kept';
    }
    const plan = prepared.plan;
    if (plan.blocked) {
      for (const conflict of plan.conflicts) this.io.err(`  ${describeConflict(conflict, true)}\n`);
      this.keepRunning(
        'generated files were changed by hand (move the changes to src/hooks/ or run generate --force)',
      );
      return 'kept';
    }
    const changes = planChanges(plan);
    const counts = countPlan(plan);
    const changed = counts.create + counts.update + counts.delete > 0;
    if (changes.writes.length + changes.deletes.length > 0) {
      await applyChanges(this.outputDir, changes);
      // The starter files written for a new entity are not a change of the user's code.
      for (const write of changes.writes)
        this.seen.set(join(this.outputDir, write.path), write.contents);
    }
    if (changed || first) {
      this.say(
        `generated: ${counts.create} created, ${counts.update} updated, ${counts.delete} deleted, ${counts.unchanged} unchanged`,
      );
    }
    for (const line of describeMigrations(plan)) this.say(line.trim());
    for (const note of plan.notes) this.say(`note: ${note}`);
    const missing = this.missingDependencies();
    if (missing !== undefined) {
      this.io.err(
        `[entity-gen dev] ${missing} cannot be found from ${this.request.outputDir}: run \`npm install\` there${first ? ', then start entity-gen dev again' : ''}.\n`,
      );
      return first ? 'missing-dependencies' : 'kept';
    }
    const mustBuild =
      first ||
      changed ||
      this.userCodeChanged ||
      this.lastBuildFailed ||
      this.service === undefined;
    this.userCodeChanged = false;
    if (!mustBuild) {
      this.say('nothing changed');
      return 'ok';
    }
    this.say('building (tsc)');
    const built = await this.compile();
    if (this.stopping) return 'kept';
    this.lastBuildFailed = !built;
    if (!built) {
      this.keepRunning('the build failed');
      return 'kept';
    }
    await this.restart();
    return 'ok';
  }

  private keepRunning(reason: string): void {
    this.say(
      `${reason}; ${this.service === undefined ? 'no service is running' : 'the running service is kept'}. Fix it and save to try again.`,
    );
  }

  /** The first of the service's dependencies that does not resolve from the output folder. */
  private missingDependencies(): string | undefined {
    const require = createRequire(join(this.outputDir, 'package.json'));
    for (const name of ['@entity-gen/runtime', 'typescript/package.json']) {
      try {
        require.resolve(name);
      } catch {
        return name.replace('/package.json', '');
      }
    }
    return undefined;
  }

  /** Runs tsc on the service; prints its diagnostics and resolves false when it fails. */
  private compile(): Promise<boolean> {
    const tsc = createRequire(join(this.outputDir, 'package.json')).resolve('typescript/bin/tsc');
    return new Promise((done) => {
      const build = spawn(
        process.execPath,
        [tsc, '-p', 'tsconfig.json', '--noEmitOnError', '--pretty', 'false'],
        {
          cwd: this.outputDir,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      this.build = build;
      let output = '';
      build.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      build.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      build.once('error', (error) => {
        this.build = undefined;
        this.io.err(`[entity-gen dev] tsc could not run: ${error.message}\n`);
        done(false);
      });
      build.once('close', (code) => {
        this.build = undefined;
        if (code !== 0 && !this.stopping)
          this.io.err(output.endsWith('\n') || output === '' ? output : `${output}\n`);
        done(code === 0);
      });
    });
  }

  /** Stops the running service, if any, and starts the freshly built one. */
  private async restart(): Promise<void> {
    const restarting = this.service !== undefined;
    await this.stopService();
    if (this.stopping) return;
    this.say(restarting ? 'restarting the service' : 'starting the service');
    const env = { ...this.options.env };
    env['DATABASE_URL'] ??= DEFAULT_DATABASE_URL;
    const service = spawn(process.execPath, ['dist/server.js'], {
      cwd: this.outputDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.service = service;
    service.stdout.on('data', (chunk: Buffer) => this.io.out(chunk.toString()));
    service.stderr.on('data', (chunk: Buffer) => this.io.err(chunk.toString()));
    service.once('exit', (code, signal) => {
      if (this.service !== service) return; // stopped on purpose
      this.service = undefined;
      if (!this.stopping) {
        this.say(
          `the service exited (${signal ?? `code ${code}`}); fix the problem and save to start it again`,
        );
      }
    });
  }

  private async stopService(): Promise<void> {
    const service = this.service;
    if (service === undefined) return;
    this.service = undefined;
    if (service.exitCode !== null || service.signalCode !== null) return;
    const exited = new Promise<void>((done) => service.once('exit', () => done()));
    service.kill('SIGTERM');
    const timer = setTimeout(() => service.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  /**
   * Watches the inputs and the user's files in the service (`src/hooks/*.ts`, `src/server.ts`: a
   * change there rebuilds and restarts). chokidar sees editors that save by replacing the file,
   * and folders that appear only later (no `src/hooks` before the first valid schema).
   */
  private async watchFiles(inputs: readonly string[]): Promise<void> {
    const files = new Set(inputs.map((input) => resolve(input)));
    const src = join(this.outputDir, 'src');
    const hooks = join(src, 'hooks');
    const server = join(src, 'server.ts');
    const watcher = watch([...files, hooks, server], { ignoreInitial: true, depth: 0 });
    this.watcher = watcher;
    watcher.on('all', (_event, path) => {
      const file = resolve(path);
      const userCode = file === server || (dirname(file) === hooks && file.endsWith('.ts'));
      if (userCode || files.has(file)) this.changed(file, userCode);
    });
    watcher.on('error', () => undefined); // a watch that fails leaves dev running, just not watching
    await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  }

  /** Files events named since the last quiet spell, each with whether it is the user's code. */
  private readonly touched = new Map<string, boolean>();

  private changed(file: string, userCode: boolean): void {
    if (this.stopping) return;
    this.touched.set(file, userCode);
    // A save often arrives as several events (and an editor may write several files): the files
    // are read once a quiet spell follows, when the writes are done — read at the first event, a
    // file being written could look empty, and a later event of the same save may never come.
    // chokidar's own awaitWriteFinish polls file sizes, slower than this.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.settle(), this.options.debounceMs ?? 150);
  }

  /** Reads the touched files and runs a cycle if one of them holds another text than last seen. */
  private async settle(): Promise<void> {
    const touched = [...this.touched];
    this.touched.clear();
    let changed = false;
    for (const [file, userCode] of touched) {
      const text = await readIfExists(file).catch(() => undefined);
      if (this.seen.has(file) && this.seen.get(file) === text) continue;
      this.seen.set(file, text);
      changed = true;
      if (userCode) this.userCodeChanged = true;
    }
    if (changed && !this.stopping) await this.runCycle();
  }

  /** Runs one cycle at a time; changes that arrive meanwhile run one more. */
  private runCycle(): Promise<void> {
    if (this.cycling) {
      this.again = true;
      return this.current;
    }
    this.current = this.cycleUntilQuiet();
    return this.current;
  }

  private async cycleUntilQuiet(): Promise<void> {
    this.cycling = true;
    try {
      do {
        this.again = false;
        this.say('change detected');
        await this.cycle(false).catch((error: unknown) => {
          this.io.err(
            `[entity-gen dev] ${error instanceof Error ? error.message : String(error)}\n`,
          );
        });
      } while (this.again && !this.stopping);
    } finally {
      this.cycling = false;
    }
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.poll);
    await this.watcher?.close();
    this.build?.kill('SIGTERM');
    await this.current;
    await this.stopService();
  }
}

/** Resolves on the first SIGINT or SIGTERM, then stops listening for them. */
function signalled(): Promise<NodeJS.Signals> {
  return new Promise((done) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      done(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
