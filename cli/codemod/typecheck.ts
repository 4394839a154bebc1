/**
 * The type check of the user-code pass (see ./rewrite.ts): the user's files, as they will be
 * written, against the new generated code. The program's root files are the user files; it reads
 * only what they import, generated modules with code through their declarations (./compiler.ts).
 *
 * Incremental: the errors of each checked file are kept in `TYPECHECK_CACHE_PATH` of the output
 * folder (git-ignored, written with the generation) with the hash of every file under `src/` it
 * imports, directly or not, and a stamp of its surroundings (compiler, options, the files under
 * `src/`, the packages the check read). A file whose imports and surroundings are unchanged gets
 * its errors from there without a program; the others are checked.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { isGeneratedText } from '../header.js';
import { compilerHost, compilerPath, type FolderView, ts, viewHost } from './compiler.js';
import { SOURCE_DIR } from './files.js';
import { diagnosticOf } from './rename.js';

/** Where the type check keeps what it found, relative to the output folder. */
export const TYPECHECK_CACHE_PATH = 'node_modules/.cache/entity-gen/typecheck.json';

/** The cache format this generator reads and writes; another one is ignored. */
const CACHE_FORMAT = 1;

/** The errors of one user file, and whether they are syntax errors (the user's own doing). */
export interface FileCheck {
  readonly diagnostics: readonly Diagnostic[];
  readonly syntax: boolean;
}

interface CacheEntry extends FileCheck {
  /** Hash of the file's text and of every file under `src/` it imports, by path. */
  readonly inputs: Readonly<Record<string, string>>;
}

interface Cache {
  readonly format: number;
  /** See `stampOf`. */
  readonly stamp: string;
  /** The files the check read outside `src/` (the packages' declarations): size and time. */
  readonly packages: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, CacheEntry>>;
}

export interface CheckResult {
  readonly checks: ReadonlyMap<string, FileCheck>;
  /** The cache file's new text, when it changed. */
  readonly cache?: string;
}

/**
 * Checks `roots` (user files, paths relative to the output folder) in a program over `view`;
 * `cacheText` is the cache file as read.
 */
export function checkFiles(
  outputDir: string,
  roots: readonly string[],
  view: FolderView,
  options: ts.CompilerOptions,
  cacheText: string | undefined,
): CheckResult {
  const hashOf = (path: string): string => {
    const text = view.texts.get(compilerPath(outputDir, path));
    return text === undefined ? 'absent' : textHash(text);
  };
  const stamp = stampOf(options, view);
  const read = readCache(cacheText);
  const previous =
    read?.stamp === stamp &&
    Object.entries(read.packages).every(([file, mark]) => fileStamp(file) === mark)
      ? read
      : undefined;
  const packages: Record<string, string> = { ...previous?.packages };
  const checks = new Map<string, FileCheck>();
  const entries: Record<string, CacheEntry> = {};
  const unknown: string[] = [];
  for (const path of roots) {
    const entry = previous?.files[path];
    const fresh =
      entry !== undefined &&
      Object.entries(entry.inputs).every(([input, hash]) => hashOf(input) === hash);
    if (fresh) {
      checks.set(path, { diagnostics: entry.diagnostics, syntax: entry.syntax });
      entries[path] = entry;
    } else unknown.push(path);
  }
  if (unknown.length === 0) return cacheResult(stamp, packages, entries, cacheText, checks);

  const host = viewHost(view, options);
  const imports = new Map<string, Set<string>>();
  const compiler = compilerHost(host);
  compiler.resolveModuleNames = (names, containingFile) => {
    const resolved = host.resolveModuleNames(names, containingFile);
    const edges = imports.get(containingFile) ?? new Set<string>();
    for (const module of resolved) if (module !== undefined) edges.add(module.resolvedFileName);
    imports.set(containingFile, edges);
    return resolved;
  };
  compiler.resolveTypeReferenceDirectives = (names, containingFile) =>
    host.resolveTypeReferenceDirectives(names, containingFile);
  const program = ts.createProgram({
    rootNames: unknown.map((path) => compilerPath(outputDir, path)),
    options,
    host: compiler,
  });
  const source = `${compilerPath(outputDir, SOURCE_DIR)}/`;
  // What the check read outside `src/` (the packages' declarations) is part of the cache key.
  for (const file of program.getSourceFiles()) {
    const name = file.fileName;
    if (!name.startsWith(source) && !name.startsWith(host.libFolder) && !(name in packages))
      packages[name] = fileStamp(name);
  }
  for (const path of unknown) {
    const file = program.getSourceFile(compilerPath(outputDir, path));
    if (file === undefined) continue;
    const syntax = program.getSyntacticDiagnostics(file);
    const found = syntax.length > 0 ? syntax : program.getSemanticDiagnostics(file);
    const check = {
      diagnostics: found.map((diagnostic) => diagnosticOf(outputDir, diagnostic)),
      syntax: syntax.length > 0,
    };
    checks.set(path, check);
    const inputs: Record<string, string> = {};
    const pending = [file.fileName];
    while (pending.length > 0) {
      const next = pending.pop()!;
      const relativeName = relative(outputDir, next).split(sep).join('/');
      if (relativeName in inputs) continue;
      inputs[relativeName] = hashOf(relativeName);
      for (const imported of imports.get(next) ?? [])
        if (imported.startsWith(source)) pending.push(imported);
    }
    entries[path] = { ...check, inputs };
  }
  return cacheResult(stamp, packages, entries, cacheText, checks);
}

function cacheResult(
  stamp: string,
  packages: Record<string, string>,
  files: Record<string, CacheEntry>,
  cacheText: string | undefined,
  checks: ReadonlyMap<string, FileCheck>,
): CheckResult {
  const sorted = sortedRecord(files);
  const cache: Cache = {
    format: CACHE_FORMAT,
    stamp,
    packages: sortedRecord(packages),
    files: sorted,
  };
  const text = `${JSON.stringify(cache)}\n`;
  return text === cacheText ? { checks } : { checks, cache: text };
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function readCache(text: string | undefined): Cache | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<Cache> | null;
    if (parsed?.format !== CACHE_FORMAT || typeof parsed.stamp !== 'string') return undefined;
    if (typeof parsed.files !== 'object' || parsed.files === null) return undefined;
    if (typeof parsed.packages !== 'object' || parsed.packages === null) return undefined;
    return parsed as Cache;
  } catch {
    return undefined; // not a cache: everything is checked
  }
}

/**
 * The hash of a file's text as the check sees it: a generated file without its header, which
 * names the schema's hash and changes with every schema change, but not the code.
 */
function textHash(text: string): string {
  const body = isGeneratedText(text) ? text.replace(/^(\/\/[^\n]*\n)+/, '') : text;
  return createHash('sha256').update(body).digest('base64url').slice(0, 22);
}

/**
 * What every cached result depends on besides its imports and the packages: the compiler and its
 * options, the files that exist under `src/` (a new one may change what an import resolves to),
 * the node_modules folders of the service (an install changes what its packages resolve to).
 */
function stampOf(options: ts.CompilerOptions, view: FolderView): string {
  const folder = view.packages.outputDir;
  const sources = [...view.texts.keys()]
    .map((path) => relative(folder, path).split(sep).join('/'))
    .sort();
  const parts = [
    ts.version,
    JSON.stringify(options, Object.keys(options).sort()),
    sources.join(','),
    ...['node_modules', 'node_modules/@types', 'node_modules/@entity-gen'].map((dir) =>
      fileStamp(join(folder, dir)),
    ),
  ];
  return createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 22);
}

function fileStamp(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return 'absent';
  }
}
