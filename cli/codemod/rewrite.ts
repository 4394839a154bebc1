/**
 * The ts-morph side of `planUserCode` (see ./index.ts), loaded only when there is work:
 *
 * 1. Renames. A project holds the service as it is on disk (the previous generated code and the
 *    user's files). Each field rename renames the property of the entity's record and input
 *    interfaces with the language service (type-aware: every access, destructuring and object key
 *    of that property follows, a same-named property of another type does not; a destructured
 *    local keeps its name). Each entity rename renames the generated type names and the hooks
 *    constant the same way, and moves the entity's types module and hooks file, which rewrites
 *    the imports that name them. Nothing is saved: the new texts become part of the generation.
 * 2. Type check. A second project holds the new generated code and the user's files as they will
 *    be; the user files' errors are reported with the schema change that most likely caused them.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ExportDeclaration,
  type ImportDeclaration,
  Node,
  Project,
  ts,
  type SourceFile,
} from 'ts-morph';
import type { Diagnostic } from '../diagnostics.js';
import type { SchemaRename } from '../migrate/index.js';
import {
  isGeneratedText,
  SOURCE_DIR,
  typeScriptFiles,
  type UserCodeEdit,
  type UserCodeRequest,
  type UserCodeResult,
} from './index.js';

interface RewriteInput extends UserCodeRequest {
  /** The user files on disk, by path relative to the output folder. */
  readonly userFiles: ReadonlyMap<string, string>;
  /** Apply the renames (otherwise only type-check). */
  readonly rename: boolean;
}

const RUNTIME_PACKAGE = '@entity-gen/runtime';

/** A file next to this module: where the generator's own dependencies resolve from. */
const GENERATOR_ANCHOR = fileURLToPath(import.meta.url);

export async function rewriteUserCode(input: RewriteInput): Promise<UserCodeResult> {
  const options = compilerOptions(input);
  const renamed = input.rename
    ? await applyRenames(input, options)
    : { edits: [], rewrites: [], skipped: [] };
  const finalFiles = new Map(input.userFiles);
  for (const edit of renamed.edits) {
    finalFiles.delete(edit.from);
    finalFiles.set(edit.path, edit.contents);
  }
  const packages = packagesOf(input);
  const missing = (options.types ?? []).filter(
    (name) => resolveTypes(name, input.outputDir, packages, ts.sys, options) === undefined,
  );
  if (missing.length > 0) {
    return {
      ...renamed,
      problems: [],
      notChecked:
        `the type declarations ${missing.map((name) => `'${name}'`).join(', ')} were found ` +
        "neither in the service's node_modules nor among entity-gen's own packages (run npm " +
        'install in the service folder)',
    };
  }
  const problems = typeCheck(input, finalFiles, options);
  return { ...renamed, problems };
}

// Renames ---------------------------------------------------------------------------------------

interface Renamed {
  readonly edits: UserCodeEdit[];
  readonly rewrites: string[];
  readonly skipped: Diagnostic[];
}

async function applyRenames(input: RewriteInput, options: ts.CompilerOptions): Promise<Renamed> {
  const { outputDir } = input;
  const project = newProject(packagesOf(input), { ...options, types: [] }, new Set());
  for (const path of await typeScriptFiles(outputDir, SOURCE_DIR)) {
    project.addSourceFileAtPath(join(outputDir, path));
  }
  const userFiles = new Map<string, SourceFile>();
  const skipped: Diagnostic[] = [];
  const program = project.getProgram().compilerObject;
  for (const path of input.userFiles.keys()) {
    const file = project.getSourceFile(join(outputDir, path));
    if (file === undefined) continue;
    const syntax = program.getSyntacticDiagnostics(file.compilerNode);
    if (syntax.length === 0) {
      userFiles.set(path, file);
      continue;
    }
    const problem = diagnosticOf(outputDir, syntax[0]!);
    skipped.push({
      ...problem,
      message: `${problem.message} The file does not parse, so it was not rewritten for the renames`,
    });
  }
  const rewrites: string[] = [];
  const isUserFile = (file: SourceFile): boolean => [...userFiles.values()].includes(file);
  const rename = (node: Node, to: string): void => {
    const from = node.getText();
    for (const location of renameLocations(project, node)) {
      const file = project.getSourceFile(location.fileName);
      if (file === undefined || !isUserFile(file)) continue;
      const { line } = file.getLineAndColumnAtPos(location.textSpan.start);
      rewrites.push(`${pathOf(outputDir, file)}:${line}: ${from} → ${to}`);
    }
    if (Node.isRenameable(node)) node.rename(to, { usePrefixAndSuffixText: true });
  };

  // Fields first, while every generated module is still where the previous generation put it.
  for (const change of input.renames) {
    if (change.kind !== 'field' || change.field === undefined) continue;
    const types = project.getSourceFile(typesPath(outputDir, change.old.fileName));
    // The record, input and patch types (an older service's patch type follows its input type).
    for (const suffix of ['', 'Input', 'Patch']) {
      const name = `${change.old.typeName}${suffix}`;
      const property = types?.getInterface(name)?.getProperty(change.field.old);
      if (property !== undefined) rename(property.getNameNode(), change.field.new);
    }
  }
  const imports = new Map([...userFiles].map(([path, file]) => [path, moduleSpecifiers(file)]));
  const moves: string[] = [];
  for (const change of input.renames) {
    if (change.kind !== 'entity') continue;
    renameEntity(project, outputDir, change, userFiles, rename, moves, skipped);
  }
  for (const [path, file] of userFiles) {
    const before = imports.get(path) ?? [];
    moduleSpecifiers(file).forEach((specifier, index) => {
      const old = before[index];
      if (old === undefined || old.text === specifier.text) return;
      // ts-morph writes moved paths without an extension; Node's ESM resolution needs it.
      let text = specifier.text;
      if (old.text.endsWith('.js') && !text.endsWith('.js')) {
        text = `${text}.js`;
        specifier.declaration.setModuleSpecifier(text);
      }
      rewrites.push(`${path}:${old.line}: '${old.text}' → '${text}'`);
    });
  }
  rewrites.sort(compareRewrites);
  rewrites.push(...moves);

  const edits: UserCodeEdit[] = [];
  for (const [from, file] of userFiles) {
    const path = pathOf(outputDir, file);
    const contents = file.getFullText();
    if (path !== from || contents !== input.userFiles.get(from))
      edits.push({ from, path, contents });
  }
  return { edits, rewrites, skipped };
}

function renameEntity(
  project: Project,
  outputDir: string,
  change: SchemaRename,
  userFiles: ReadonlyMap<string, SourceFile>,
  rename: (node: Node, to: string) => void,
  moves: string[],
  skipped: Diagnostic[],
): void {
  const types = project.getSourceFile(typesPath(outputDir, change.old.fileName));
  if (types !== undefined) {
    // Record, input, patch and nested object types all start with the entity's type name.
    const declarations = [...types.getInterfaces(), ...types.getTypeAliases()];
    for (const declaration of declarations) {
      const name = declaration.getName();
      const rest = name.slice(change.old.typeName.length);
      if (!name.startsWith(change.old.typeName) || !/^([A-Z]|$)/.test(rest)) continue;
      rename(declaration.getNameNode(), `${change.new.typeName}${rest}`);
    }
  }
  const oldHooks = `${SOURCE_DIR}/hooks/${change.old.fileName}.ts`;
  const newHooks = `${SOURCE_DIR}/hooks/${change.new.fileName}.ts`;
  const hooks = userFiles.get(oldHooks);
  const constant = hooks?.getVariableDeclaration(`${change.old.camelName}Hooks`);
  if (constant !== undefined) rename(constant.getNameNode(), `${change.new.camelName}Hooks`);
  // Moving the modules rewrites the imports that name them.
  types?.move(typesPath(outputDir, change.new.fileName), { overwrite: true });
  if (hooks === undefined) return;
  if (existsSync(join(outputDir, newHooks))) {
    skipped.push({
      file: oldHooks,
      line: 1,
      column: 1,
      code: 'CODEMOD_TARGET_EXISTS',
      message:
        `entity ${change.old.name} is now ${change.new.name}, but ${newHooks} already exists, ` +
        `so ${oldHooks} was not moved there; merge the two files by hand`,
    });
    return;
  }
  hooks.move(join(outputDir, newHooks));
  moves.push(
    `${oldHooks} → ${newHooks} (moved: entity ${change.old.name} is now ${change.new.name})`,
  );
}

/** Where the language service renames `node`, prefixes and suffixes included. */
function renameLocations(project: Project, node: Node): readonly ts.RenameLocation[] {
  const service = project.getLanguageService().compilerObject;
  return (
    service.findRenameLocations(node.getSourceFile().getFilePath(), node.getStart(), false, false, {
      providePrefixAndSuffixTextForRename: true,
    }) ?? []
  );
}

/** The module specifiers of a file's imports and re-exports, with their lines. */
function moduleSpecifiers(
  file: SourceFile,
): { text: string; line: number; declaration: ImportDeclaration | ExportDeclaration }[] {
  return [...file.getImportDeclarations(), ...file.getExportDeclarations()].flatMap(
    (declaration) => {
      const specifier = declaration.getModuleSpecifier();
      return specifier === undefined
        ? []
        : [
            {
              text: specifier.getLiteralText(),
              line: specifier.getStartLineNumber(),
              declaration,
            },
          ];
    },
  );
}

/** `file:line: …` lines by file, then line. */
function compareRewrites(a: string, b: string): number {
  const [fileA = '', lineA = '0'] = a.split(':');
  const [fileB = '', lineB = '0'] = b.split(':');
  return fileA < fileB ? -1 : fileA > fileB ? 1 : Number(lineA) - Number(lineB);
}

function typesPath(outputDir: string, fileName: string): string {
  return join(outputDir, SOURCE_DIR, 'entities', fileName, 'types.ts');
}

// Type check ------------------------------------------------------------------------------------

/** Errors of the user's files against the new generated code. */
function typeCheck(
  input: RewriteInput,
  userFiles: ReadonlyMap<string, string>,
  options: ts.CompilerOptions,
): Diagnostic[] {
  const { outputDir } = input;
  const sources = new Map<string, string>();
  for (const file of input.generated) {
    if (file.path.startsWith(`${SOURCE_DIR}/`) && file.path.endsWith('.ts'))
      sources.set(file.path, file.contents);
  }
  for (const [path, text] of userFiles) sources.set(path, text);
  // Files on disk that will be gone (stale generated modules, moved user files) must not be
  // found by module resolution.
  const hidden = new Set<string>();
  for (const path of input.userFiles.keys())
    if (!userFiles.has(path)) hidden.add(join(outputDir, path));
  const project = newProject(packagesOf(input), options, hidden);
  for (const [path, text] of sources)
    project.createSourceFile(join(outputDir, path), text, { overwrite: true });
  for (const path of staleGenerated(outputDir, sources)) hidden.add(path);
  const problems: Diagnostic[] = [];
  for (const path of userFiles.keys()) {
    const file = project.getSourceFile(join(outputDir, path));
    if (file === undefined) continue;
    const program = project.getProgram().compilerObject;
    const syntax = program.getSyntacticDiagnostics(file.compilerNode);
    const found = syntax.length > 0 ? syntax : program.getSemanticDiagnostics(file.compilerNode);
    for (const diagnostic of found) {
      const located = diagnosticOf(outputDir, diagnostic);
      // A file that does not parse is the user's own doing, not the schema's.
      const message = syntax.length > 0 ? located.message : withCause(located.message, input);
      problems.push({ ...located, message });
    }
  }
  return problems;
}

/** Generated `.ts` files on disk under `src/` that the new generation no longer has. */
function staleGenerated(outputDir: string, sources: ReadonlyMap<string, string>): string[] {
  const stale: string[] = [];
  const visit = (dir: string): void => {
    const absolute = join(outputDir, dir);
    if (!existsSync(absolute)) return;
    for (const entry of ts.sys.readDirectory(absolute, ['.ts'], undefined, undefined)) {
      const path = relative(outputDir, entry).split(sep).join('/');
      if (sources.has(path)) continue;
      const text = ts.sys.readFile(entry);
      if (text !== undefined && isGeneratedText(text)) stale.push(entry);
    }
  };
  visit(SOURCE_DIR);
  return stale;
}

/**
 * The message with the schema change that most likely caused it: a rename whose old name the
 * message quotes, else a change that names something the message quotes, else every change.
 */
function withCause(message: string, input: UserCodeRequest): string {
  const quoted = [...message.matchAll(/'([^']+)'/g)].map((match) => match[1]!);
  const names = (words: readonly string[]): boolean => quoted.some((q) => words.includes(q));
  for (const change of input.renames) {
    if (change.kind === 'field' && change.field !== undefined && names([change.field.old]))
      return `${message} (field ${change.old.name}.${change.field.old} was renamed to ${change.field.new})`;
    if (
      change.kind === 'entity' &&
      quoted.some((q) => q.startsWith(change.old.typeName) || q.includes(`/${change.old.fileName}`))
    )
      return `${message} (entity ${change.old.name} was renamed to ${change.new.name})`;
  }
  const related = input.changes.filter((change) =>
    quoted.some((q) => new RegExp(`\\.${escapeRegExp(q)}\\b`).test(change)),
  );
  if (related.length > 0) return `${message} (schema change: ${related.join('; ')})`;
  if (input.changes.length > 0)
    return `${message} (after the schema change: ${input.changes.join('; ')})`;
  return message;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Projects --------------------------------------------------------------------------------------

/**
 * The compiler options of the generated service (its tsconfig.json, as generated now), for
 * checking only.
 */
function compilerOptions(input: UserCodeRequest): ts.CompilerOptions {
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
  // depend on reading package.json scopes, which an in-memory project cannot do reliably.
  return {
    ...fallback,
    ...rest,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: true,
  };
}

/**
 * Where the service's packages are found: in its own node_modules (or a parent folder's), else,
 * for a package that installing the service would provide, in entity-gen's own installation.
 * `check` in a CI job that never ran npm install in the service thus still type-checks the user's
 * files, against the runtime this entity-gen generates for and the types it depends on.
 */
interface Packages {
  readonly outputDir: string;
  /** Package names that may come from entity-gen's installation. */
  readonly fallback: ReadonlySet<string>;
}

function packagesOf(input: UserCodeRequest): Packages {
  const manifest = input.generated.find((file) => file.path === 'package.json')?.contents;
  const names = new Set([RUNTIME_PACKAGE, ...dependencyNames(manifest, true)]);
  // The runtime's dependencies are installed with it (hoisted into the service's node_modules).
  const runtime = generatorPackages().runtimeManifest;
  if (runtime !== undefined)
    for (const name of dependencyNames(ts.sys.readFile(runtime), false)) names.add(name);
  return { outputDir: input.outputDir, fallback: names };
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

/**
 * A project on the real file system (so the service's installed packages resolve, see
 * `Packages`), where the files in `hidden` do not exist.
 */
function newProject(
  packages: Packages,
  options: ts.CompilerOptions,
  hidden: ReadonlySet<string>,
): Project {
  return new Project({
    compilerOptions: options,
    skipAddingFilesFromTsConfig: true,
    resolutionHost: (host, getOptions) => {
      const visible = visibleHost(host, hidden);
      return {
        resolveModuleNames: (names, containingFile) =>
          names.map((name) => {
            const found = ts.resolveModuleName(name, containingFile, getOptions(), visible);
            const pkg = packageName(name);
            if (found.resolvedModule !== undefined || pkg === undefined)
              return found.resolvedModule;
            if (!packages.fallback.has(pkg)) return undefined;
            for (const from of generatorPackages().anchors) {
              const module = ts.resolveModuleName(name, from, getOptions(), visible);
              if (module.resolvedModule !== undefined) return module.resolvedModule;
            }
            return undefined;
          }),
        resolveTypeReferenceDirectives: (names, containingFile) =>
          names.map((reference) => {
            const name = typeof reference === 'string' ? reference : reference.fileName;
            // A reference in a declaration file (`@types/koa` naming `node`) resolves from there;
            // the compiler option `types` from the service folder, not the working directory.
            const from = containingFile.includes('/node_modules/')
              ? dirname(containingFile)
              : packages.outputDir;
            return resolveTypes(name, from, packages, visible, getOptions());
          }),
      };
    },
  });
}

/** A resolution host on which the files in `hidden` do not exist. */
function visibleHost(
  host: ts.ModuleResolutionHost,
  hidden: ReadonlySet<string>,
): ts.ModuleResolutionHost {
  return {
    ...host,
    fileExists: (path) => !hidden.has(path) && host.fileExists(path),
    readFile: (path) => (hidden.has(path) ? undefined : host.readFile(path)),
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

function pathOf(outputDir: string, file: SourceFile): string {
  return relative(outputDir, file.getFilePath()).split(sep).join('/');
}

function diagnosticOf(outputDir: string, diagnostic: ts.Diagnostic): Diagnostic {
  const file = diagnostic.file;
  const start = file === undefined || diagnostic.start === undefined ? undefined : diagnostic.start;
  const position =
    file === undefined || start === undefined
      ? { line: 0, character: 0 }
      : file.getLineAndCharacterOfPosition(start);
  return {
    file: file === undefined ? '' : relative(outputDir, file.fileName).split(sep).join('/'),
    line: position.line + 1,
    column: position.character + 1,
    code: `TS${diagnostic.code}`,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
  };
}
