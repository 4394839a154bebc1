/**
 * The remembered invocation (SPEC §6): `generate`, `check` and `dev` without schema files repeat
 * the generation recorded in the output folder's manifest, from any working directory; options
 * given explicitly replace the recorded ones and are recorded in turn. Paths are recorded
 * relative to the output folder, and shown relative to the working directory.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { DriverChoice } from '../generate/options.js';
import { MANIFEST_PATH, parseManifest, type Invocation } from '../manifest/index.js';

/** The output folder when `-o` is not given. */
export const DEFAULT_OUTPUT_DIR = 'service';

/** What the command line said; `false` for `--no-rest-config` / `--no-access`. */
export interface GenerationFlags {
  readonly out?: string;
  readonly runtimeSpec?: string;
  readonly driver?: DriverChoice;
  readonly restConfig?: string | false;
  readonly access?: string | false;
  readonly allowDataLoss?: boolean;
  readonly clearDanglingReferences?: boolean;
  readonly codemod?: boolean;
  readonly typecheck?: boolean;
}

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
  /** Migrations clear dangling values of references that gain `onDelete`. */
  readonly clearDanglingReferences?: boolean;
  /** Rewrite the user's files for renames (default true; `--no-codemod` turns it off). */
  readonly codemod?: boolean;
  /** Type-check the user's files (default true; `--no-typecheck` turns it off). */
  readonly typecheck?: boolean;
  /**
   * `changes` (what `generate` does): look at the user's code only when the generation changes
   * something, since it was checked when the folder was last written; `always` (`check`).
   */
  readonly userCodeCheck?: 'always' | 'changes';
}

/** The request of a run, or why there is none (a usage problem). */
export type ResolvedRequest =
  | { readonly request: GenerationRequest; readonly problem?: undefined }
  | { readonly request?: undefined; readonly problem: string };

/**
 * Combines the command line with the invocation recorded in `<out>/.entity-gen/manifest.json`:
 * schema files, REST configuration, access file, runtime spec and driver each come from the
 * command line when given there, else from the record. Without schema files on either, there is
 * nothing to generate.
 */
export async function resolveRequest(
  schemas: readonly string[],
  flags: GenerationFlags,
  force: boolean,
): Promise<ResolvedRequest> {
  const out = displayPath(flags.out ?? DEFAULT_OUTPUT_DIR);
  const recorded = await readInvocation(out);
  const fromRecord = (path: string): string => displayPath(resolve(out, path));
  const schemaFiles =
    schemas.length > 0 ? schemas.map(displayPath) : (recorded?.schemas.map(fromRecord) ?? []);
  if (schemaFiles.length === 0) {
    return {
      problem:
        `no schema files given, and ${out} records no earlier generation to repeat; ` +
        `run: npx entity-gen generate <schema...>${flags.out === undefined ? '' : ` -o ${out}`}`,
    };
  }
  const chosen = (
    given: string | false | undefined,
    saved: string | undefined,
  ): string | undefined =>
    given === false
      ? undefined
      : given !== undefined
        ? displayPath(given)
        : saved && fromRecord(saved);
  const restConfigFile = chosen(flags.restConfig, recorded?.restConfig);
  const accessFile = chosen(flags.access, recorded?.access);
  const runtimeSpec = flags.runtimeSpec ?? recorded?.runtimeSpec;
  const driver = flags.driver ?? (recorded?.driver as DriverChoice | undefined);
  return {
    request: {
      schemaFiles,
      outputDir: out,
      ...(restConfigFile === undefined ? {} : { restConfigFile }),
      ...(accessFile === undefined ? {} : { accessFile }),
      ...(runtimeSpec === undefined ? {} : { runtimeSpec }),
      ...(driver === undefined ? {} : { driver }),
      force,
      allowDataLoss: flags.allowDataLoss === true,
      clearDanglingReferences: flags.clearDanglingReferences === true,
      codemod: flags.codemod !== false,
      typecheck: flags.typecheck !== false,
    },
  };
}

/** What a request records in the manifest: the same generation, paths relative to the folder. */
export function invocationOf(request: GenerationRequest): Invocation {
  const toFolder = (path: string): string => folderPath(request.outputDir, path);
  return {
    schemas: request.schemaFiles.map(toFolder),
    ...(request.restConfigFile === undefined
      ? {}
      : { restConfig: toFolder(request.restConfigFile) }),
    ...(request.accessFile === undefined ? {} : { access: toFolder(request.accessFile) }),
    ...(request.runtimeSpec === undefined ? {} : { runtimeSpec: request.runtimeSpec }),
    ...(request.driver === undefined ? {} : { driver: request.driver }),
  };
}

/** `path` (relative to the working directory) relative to the output folder, `/`-separated. */
export function folderPath(outputDir: string, path: string): string {
  const rel = relative(resolve(outputDir), resolve(path));
  return (rel === '' ? '.' : rel).split('\\').join('/');
}

/** The invocation recorded in a folder, if its manifest has one (a broken manifest has none). */
async function readInvocation(outputDir: string): Promise<Invocation | undefined> {
  let text: string;
  try {
    text = await readFile(join(outputDir, MANIFEST_PATH), 'utf8');
  } catch {
    return undefined;
  }
  return parseManifest(text).manifest?.invocation;
}

/** Paths as the user typed them, relative to the working folder and with `/` separators. */
export function displayPath(path: string): string {
  const absolute = resolve(path);
  const rel = relative(process.cwd(), absolute);
  const shown = rel === '' ? '.' : rel.startsWith('..') && isAbsolute(path) ? path : rel;
  return shown.split('\\').join('/');
}
