/**
 * The TypeScript compiler as the user-code pass uses it (./rename.ts, ./typecheck.ts): a program
 * over a view of the output folder in which
 *
 * - some files have other texts than on disk (the user's files as they will be written, the new
 *   generated code), some files on disk do not exist (stale generated modules, moved user files);
 * - a generated module with code (routes, definitions, the app, the client) is seen through its
 *   declarations only (`ts.transpileDeclaration`: the generated code declares the type of every
 *   export, so that needs no type checker), so that a user file importing `src/app.ts` loads the
 *   runtime's declarations and not the whole service;
 * - the service's packages resolve from its own node_modules, else from entity-gen's installation
 *   (see `Packages`);
 * - the standard library's declarations come from the compiler's own copy.
 *
 * Only the files the program's root files import are read, parsed and bound.
 */
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ts } from 'ts-morph';
import { isGeneratedText } from '../header.js';
import type { UserCodeRequest } from './types.js';

export { ts };

const RUNTIME_PACKAGE = '@entity-gen/runtime';

/** A path as the compiler spells file names: joined, with forward slashes on every system. */
export function compilerPath(...parts: string[]): string {
  return join(...parts)
    .split(sep)
    .join('/');
}

/** A file next to this module: where the generator's own dependencies resolve from. */
const GENERATOR_ANCHOR = fileURLToPath(import.meta.url);

/** What a program sees of the output folder. */
export interface FolderView {
  /** Texts by absolute path that replace (or add to) the files on disk. */
  readonly texts: ReadonlyMap<string, string>;
  /** Absolute paths of files on disk that do not exist for the program. */
  readonly hidden: ReadonlySet<string>;
  readonly packages: Packages;
  /**
   * Resolve no package but the runtime (the renames need its hook types and nothing of koa's or
   * Node's): an import of any other package is of unknown type.
   */
  readonly runtimeOnly?: boolean;
}

/**
 * Where the service's packages are found: in its own node_modules (or a parent folder's), else,
 * for a package that installing the service would provide, in entity-gen's own installation.
 * `check` in a CI job that never ran npm install in the service thus still type-checks the user's
 * files, against the runtime this entity-gen generates for and the types it depends on.
 */
export interface Packages {
  readonly outputDir: string;
  /** Package names that may come from entity-gen's installation. */
  readonly fallback: ReadonlySet<string>;
}

export function packagesOf(input: UserCodeRequest): Packages {
  const manifest = input.generated.find((file) => file.path === 'package.json')?.contents;
  const names = new Set([RUNTIME_PACKAGE, ...dependencyNames(manifest, true)]);
  // The runtime's dependencies are installed with it (hoisted into the service's node_modules).
  const runtime = generatorPackages().runtimeManifest;
  if (runtime !== undefined)
    for (const name of dependencyNames(ts.sys.readFile(runtime), false)) names.add(name);
  return { outputDir: input.outputDir, fallback: names };
}

/**
 * The compiler options of the generated service (its tsconfig.json, as generated now), for
 * checking only.
 */
export function compilerOptions(input: UserCodeRequest): ts.CompilerOptions {
  const tsconfig = input.generated.find((file) => file.path === 'tsconfig.json');
  const fallback: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
  };
  if (tsconfig === undefined) return { ...fallback, noEmit: true };
  const parsed = ts.parseConfigFileTextToJson('tsconfig.json', tsconfig.contents);
  const json = (parsed.config as { compilerOptions?: object } | undefined)?.compilerOptions ?? {};
  const converted = ts.convertCompilerOptionsFromJson(json, input.outputDir).options;
  // Only checked, never emitted: the output settings do not apply.
  const rest = { ...converted };
  delete rest.rootDir;
  delete rest.outDir;
  delete rest.sourceMap;
  // The service is ESM ("type": "module"); the check resolves like a bundler so that it does not
  // depend on reading package.json scopes, which an in-memory view cannot do reliably.
  return {
    ...fallback,
    ...rest,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: true,
  };
}

/** The names in the compiler option `types` whose declarations are found nowhere. */
export function missingTypes(options: ts.CompilerOptions, packages: Packages): string[] {
  return (options.types ?? []).filter(
    (name) => resolveTypes(name, packages.outputDir, packages, ts.sys, options) === undefined,
  );
}

/** The dependencies (and devDependencies, with `dev`) a package.json text names. */
function dependencyNames(manifest: string | undefined, dev: boolean): string[] {
  if (manifest === undefined) return [];
  try {
    const json = JSON.parse(manifest) as Record<string, unknown>;
    return (dev ? ['dependencies', 'devDependencies'] : ['dependencies']).flatMap((key) => {
      const deps = json[key];
      return typeof deps === 'object' && deps !== null ? Object.keys(deps) : [];
    });
  } catch {
    return []; // not JSON: nothing to add
  }
}

/** The package a bare module specifier names (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.includes(':'))
    return undefined;
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

// The standard library ------------------------------------------------------------------------

interface LibFiles {
  readonly folder: string;
  readonly texts: ReadonlyMap<string, string>;
}

let libFilesFound: LibFiles | undefined;

/**
 * The declarations of the standard library (`lib.es2022.d.ts`, …) of the compiler ts-morph
 * bundles: they come with it (`@ts-morph/common`, its own dependency), in memory, not as files.
 */
function libFiles(): LibFiles {
  if (libFilesFound !== undefined) return libFilesFound;
  const morph = createRequire(GENERATOR_ANCHOR).resolve('ts-morph');
  const common = createRequire(morph)('@ts-morph/common') as {
    getLibFiles(): readonly { fileName: string; text: string }[];
    libFolderInMemoryPath: string;
  };
  const folder = common.libFolderInMemoryPath;
  const texts = new Map(
    common.getLibFiles().map((file) => [`${folder}/${file.fileName}`, file.text]),
  );
  libFilesFound = { folder, texts };
  return libFilesFound;
}

// The view ------------------------------------------------------------------------------------

/** The resolution and file access of a view; shared by the compiler and language service hosts. */
export interface ViewHost extends ts.ModuleResolutionHost {
  readonly options: ts.CompilerOptions;
  /** The text of a file as the program sees it (a declaration view for generated code). */
  sourceText(path: string): string | undefined;
  resolveModuleNames(
    names: readonly string[],
    containingFile: string,
  ): (ts.ResolvedModuleFull | undefined)[];
  resolveTypeReferenceDirectives(
    names: readonly (string | ts.FileReference)[],
    containingFile: string,
  ): (ts.ResolvedTypeReferenceDirective | undefined)[];
  readonly libFolder: string;
}

export function viewHost(view: FolderView, options: ts.CompilerOptions): ViewHost {
  const libs = libFiles();
  const { texts, hidden, packages } = view;
  const folders = new Set<string>();
  for (const path of texts.keys())
    for (let dir = dirname(path); !folders.has(dir) && dir !== dirname(dir); dir = dirname(dir))
      folders.add(dir);
  const readFile = (path: string): string | undefined =>
    texts.get(path) ??
    libs.texts.get(path) ??
    (hidden.has(path) ? undefined : ts.sys.readFile(path));
  const fileExists = (path: string): boolean =>
    texts.has(path) || libs.texts.has(path) || (!hidden.has(path) && ts.sys.fileExists(path));
  const resolution: ts.ModuleResolutionHost = {
    fileExists,
    readFile,
    directoryExists: (path) => folders.has(path) || ts.sys.directoryExists(path),
    realpath: (path) => (texts.has(path) ? path : (ts.sys.realpath?.(path) ?? path)),
    getCurrentDirectory: () => packages.outputDir,
    getDirectories: (path) => ts.sys.getDirectories(path),
    useCaseSensitiveFileNames: ts.sys.useCaseSensitiveFileNames,
  };
  const cache = ts.createModuleResolutionCache(packages.outputDir, (name) => name, options);
  const declarations = new Map<string, string>();
  const sourceText = (path: string): string | undefined => {
    const text = readFile(path);
    if (text === undefined || !isDeclarationViewable(path, text)) return text;
    let view = declarations.get(path);
    if (view === undefined) {
      const output = ts.transpileDeclaration(text, {
        fileName: path,
        reportDiagnostics: true,
        compilerOptions: { ...options, noLib: true, noResolve: true },
      });
      // Code whose declarations need the type checker is seen as it is.
      view =
        output.diagnostics !== undefined && output.diagnostics.length > 0
          ? text
          : output.outputText;
      declarations.set(path, view);
    }
    return view;
  };
  return {
    ...resolution,
    options,
    libFolder: libs.folder,
    sourceText,
    resolveModuleNames: (names, containingFile) =>
      names.map((name) => {
        const pkg = packageName(name);
        if (view.runtimeOnly === true && pkg !== undefined && pkg !== RUNTIME_PACKAGE)
          return undefined;
        const found = ts.resolveModuleName(name, containingFile, options, resolution, cache);
        if (found.resolvedModule !== undefined || pkg === undefined) return found.resolvedModule;
        if (!packages.fallback.has(pkg)) return undefined;
        for (const from of generatorPackages().anchors) {
          const module = ts.resolveModuleName(name, from, options, resolution, cache);
          if (module.resolvedModule !== undefined) return module.resolvedModule;
        }
        return undefined;
      }),
    resolveTypeReferenceDirectives: (names, containingFile) =>
      names.map((reference) => {
        if (view.runtimeOnly === true) return undefined;
        const name = typeof reference === 'string' ? reference : reference.fileName;
        // A reference in a declaration file (`@types/koa` naming `node`) resolves from there;
        // the compiler option `types` from the service folder, not the working directory.
        const from = containingFile.includes('/node_modules/')
          ? dirname(containingFile)
          : packages.outputDir;
        return resolveTypes(name, from, packages, resolution, options);
      }),
  };
}

/**
 * A generated module with code under the service's `src/`: seen through its declarations. The
 * entities' `types.ts` hold declarations only and are seen as they are (the renames work on them).
 */
function isDeclarationViewable(path: string, text: string): boolean {
  return (
    path.endsWith('.ts') &&
    !path.endsWith('.d.ts') &&
    !path.endsWith('/types.ts') &&
    !path.includes('/node_modules/') &&
    isGeneratedText(text)
  );
}

/**
 * Files parsed by an earlier program of this process (the renames' language service), by name:
 * a later program (the type check) takes a file from here when its text is the same, parsed and
 * bound already (the standard library, the packages' declarations, unchanged user files).
 */
const parsedFiles = new Map<string, ts.SourceFile>();

/** Keeps the files of `program` for the later programs of this process (see `parsedFiles`). */
export function shareParsedFiles(program: ts.Program): void {
  for (const file of program.getSourceFiles()) parsedFiles.set(file.fileName, file);
}

/** A compiler host over a view: `ts.createProgram` with it reads only what the roots import. */
export function compilerHost(host: ViewHost): ts.CompilerHost {
  return {
    ...host,
    getSourceFile: (fileName, languageVersion) => {
      const text = host.sourceText(fileName);
      if (text === undefined) return undefined;
      let file = parsedFiles.get(fileName);
      if (file?.text !== text) {
        file = ts.createSourceFile(fileName, text, languageVersion, true);
        parsedFiles.set(fileName, file);
      }
      return file;
    },
    getDefaultLibFileName: (options) => `${host.libFolder}/${ts.getDefaultLibFileName(options)}`,
    getDefaultLibLocation: () => host.libFolder,
    writeFile: () => undefined,
    getCanonicalFileName: (name) => name,
    getNewLine: () => '\n',
    getCurrentDirectory: host.getCurrentDirectory ?? (() => '/'),
    useCaseSensitiveFileNames: () => ts.sys.useCaseSensitiveFileNames,
  };
}

/**
 * The type declarations `name` (`node` of the compiler option `types`): from the node_modules/@types
 * folders at and above `dir`, else from entity-gen's installation when installing the service
 * would provide them.
 */
function resolveTypes(
  name: string,
  dir: string,
  packages: Packages,
  host: ts.ModuleResolutionHost,
  options: ts.CompilerOptions,
): ts.ResolvedTypeReferenceDirective | undefined {
  const fallback = packages.fallback.has(`@types/${name}`) || packages.fallback.has(name);
  const starts = [
    dir,
    ...(fallback ? generatorPackages().anchors.map((file) => dirname(file)) : []),
  ];
  for (const start of starts) {
    // The default type roots are the node_modules/@types folders above the current directory.
    const here: ts.ModuleResolutionHost = { ...host, getCurrentDirectory: () => start };
    const found = ts.resolveTypeReferenceDirective(
      name,
      join(start, '__inferred type names__.ts'),
      { ...options, typeRoots: undefined },
      here,
    ).resolvedTypeReferenceDirective;
    if (found?.resolvedFileName !== undefined) return found;
  }
  return undefined;
}

interface GeneratorPackages {
  /** Files that entity-gen's own dependencies resolve from, in order. */
  readonly anchors: readonly string[];
  /** The package.json of the runtime entity-gen depends on. */
  readonly runtimeManifest?: string;
}

let generatorPackagesFound: GeneratorPackages | undefined;

/**
 * Where entity-gen's own dependencies are, wherever the package manager put them: next to this
 * module (the CLI depends on `@entity-gen/runtime`), next to the runtime (koa, `@types/koa`) and
 * next to `@types/koa` (`@types/node`, which it depends on).
 */
function generatorPackages(): GeneratorPackages {
  if (generatorPackagesFound !== undefined) return generatorPackagesFound;
  const resolve = (specifier: string, from: string): string | undefined => {
    try {
      return createRequire(from).resolve(specifier);
    } catch {
      return undefined; // not installed: the other places may still have it
    }
  };
  const anchors = [GENERATOR_ANCHOR];
  const runtimeManifest = resolve(`${RUNTIME_PACKAGE}/package.json`, GENERATOR_ANCHOR);
  if (runtimeManifest !== undefined) {
    anchors.push(runtimeManifest);
    const koaTypes = resolve('@types/koa/package.json', runtimeManifest);
    if (koaTypes !== undefined) anchors.push(koaTypes);
  }
  generatorPackagesFound =
    runtimeManifest === undefined ? { anchors } : { anchors, runtimeManifest };
  return generatorPackagesFound;
}
