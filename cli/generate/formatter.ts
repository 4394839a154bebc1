/**
 * Biome's formatter, run as its native command-line program (the `@biomejs/biome` package installs
 * the binary of this platform, pinned exactly in package.json so that every machine formats
 * alike): one process formats every file of a call in a temporary folder.
 *
 * This is the one place where generation touches the disk and starts a process, on purpose:
 * Biome's in-process JavaScript API runs its WebAssembly build, which measured three times the
 * CPU time of a whole `generate` of the shop fixture (1.3 s against 0.45 s) and more than ten
 * times the native binary's formatting time on 100 entities (docs/architecture.md). The phase stays
 * a function of the texts it is given: the folder is private to the call and removed after it.
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A file to format: its path (which tells Biome the language) and its text. */
export interface FormatRequest {
  readonly path: string;
  readonly contents: string;
}

/** The binary of each platform's Biome package; npm installs the one that fits this machine. */
const PLATFORM_BINARIES: Readonly<Record<string, readonly string[]>> = {
  'linux-x64': ['@biomejs/cli-linux-x64/biome', '@biomejs/cli-linux-x64-musl/biome'],
  'linux-arm64': ['@biomejs/cli-linux-arm64/biome', '@biomejs/cli-linux-arm64-musl/biome'],
  'darwin-x64': ['@biomejs/cli-darwin-x64/biome'],
  'darwin-arm64': ['@biomejs/cli-darwin-arm64/biome'],
  'win32-x64': ['@biomejs/cli-win32-x64/biome.exe'],
  'win32-arm64': ['@biomejs/cli-win32-arm64/biome.exe'],
};

let binary: string | undefined;

/** The Biome binary: `BIOME_BINARY` when set, else the platform package's. */
export function biomeBinary(env: Readonly<Record<string, string | undefined>>): string {
  const given = env['BIOME_BINARY'];
  if (given !== undefined && given !== '') return given;
  // The platform packages are dependencies of @biomejs/biome: resolve them from there.
  const biome = createRequire(
    createRequire(import.meta.url).resolve('@biomejs/biome/package.json'),
  );
  const candidates = PLATFORM_BINARIES[`${process.platform}-${process.arch}`] ?? [];
  for (const candidate of candidates) {
    try {
      return biome.resolve(candidate);
    } catch {
      // Not this variant (glibc or musl); try the next.
    }
  }
  throw new Error(
    `entity-gen formats the generated code with Biome, which has no binary for ` +
      `${process.platform}-${process.arch} here; install @biomejs/biome for this platform or set ` +
      'BIOME_BINARY to a Biome executable',
  );
}

/** Linux's memory-backed file system, when it is there and writable. */
const MEMORY_FOLDER = '/dev/shm';

/**
 * Where the private folder of a call is made: the system's temporary folder when `TMPDIR` names
 * one, else, on Linux, the memory-backed `/dev/shm` (the files live for a fraction of a second;
 * on a disk, writing and removing them cost the 100-entity generation about 0.6 s of system CPU
 * time on the benchmark machine, docs/benchmarks.md), else the system's temporary folder.
 */
export function scratchRoot(env: Readonly<Record<string, string | undefined>>): string {
  if (env['TMPDIR'] !== undefined && env['TMPDIR'] !== '') return tmpdir();
  if (process.platform === 'linux') {
    try {
      accessSync(MEMORY_FOLDER, constants.W_OK);
      return MEMORY_FOLDER;
    } catch {
      // Not there, or not ours to write: the temporary folder.
    }
  }
  return tmpdir();
}

/** Finds the Biome binary ahead of the first files to format (the worker does it at start). */
export function prepareBiome(_configuration: object): void {
  binary ??= biomeBinary(process.env);
}

/**
 * Formats TypeScript files with Biome under `configuration`. Throws when Biome reports a problem:
 * the generator emitted code with a syntax error, which is a bug.
 */
export function formatWithBiome(
  files: readonly FormatRequest[],
  configuration: object,
): Map<string, string> {
  const formatted = new Map<string, string>();
  if (files.length === 0) return formatted;
  binary ??= biomeBinary(process.env);
  const dir = mkdtempSync(join(scratchRoot(process.env), 'entity-gen-format-'));
  try {
    const config = join(dir, 'biome.json');
    writeFileSync(config, JSON.stringify(configuration));
    const root = join(dir, 'files');
    // Each folder made once (an entity's four files share one), not once per file.
    const folders = new Set<string>();
    for (const file of files) {
      const target = join(root, file.path);
      const folder = dirname(target);
      if (!folders.has(folder)) {
        mkdirSync(folder, { recursive: true });
        folders.add(folder);
      }
      writeFileSync(target, file.contents);
    }
    const result = spawnSync(binary, ['format', '--write', `--config-path=${config}`, root], {
      encoding: 'utf8',
      // No telemetry or colours; the project's own configuration files are not consulted.
      env: { ...process.env, NO_COLOR: '1', BIOME_DISTRIBUTION: 'npm' },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error !== undefined)
      throw new Error(`entity-gen could not run Biome (${binary}): ${result.error.message}`);
    if (result.status !== 0)
      throw new Error(
        `Biome could not format the generated code (a bug of entity-gen; please report it):\n${`${result.stdout}${result.stderr}`.trim()}`,
      );
    for (const file of files) formatted.set(file.path, readFileSync(join(root, file.path), 'utf8'));
    return formatted;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
