/**
 * The renames of the user-code pass (see ./rewrite.ts): one language service over the user files
 * that can mention a renamed name (./prefilter.ts) and what they import, the generated code as it
 * is on disk (the previous generation) and seen through its declarations (./compiler.ts).
 *
 * Each field rename renames the property of the entity's record, input and patch interfaces
 * (type-aware: every access, destructuring and object key of that property follows, a same-named
 * property of another type does not; a destructured local keeps its name). Each entity rename
 * renames the generated type names and the hooks constant the same way, and moves the entity's
 * types module and hooks file, which rewrites the imports that name them. Every place is found on
 * the unchanged program, then the edits are applied to the texts at once; nothing is saved.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import type { SchemaRename } from '../migrate/index.js';
import { compilerPath, type FolderView, shareParsedFiles, ts, viewHost } from './compiler.js';
import { SOURCE_DIR } from './files.js';
import { mayMention, renameMarks } from './prefilter.js';
import type { UserCodeEdit } from './types.js';

export interface Renamed {
  readonly edits: UserCodeEdit[];
  readonly rewrites: string[];
  readonly skipped: Diagnostic[];
}

export const NOTHING_RENAMED: Renamed = { edits: [], rewrites: [], skipped: [] };

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export function applyRenames(
  outputDir: string,
  userFiles: ReadonlyMap<string, string>,
  untouched: ReadonlySet<string>,
  renames: readonly SchemaRename[],
  view: Omit<FolderView, 'texts' | 'hidden'>,
  options: ts.CompilerOptions,
): Renamed {
  const marks = renameMarks(renames);
  const mentioning = [...userFiles.keys()].filter((path) =>
    mayMention(userFiles.get(path)!, marks),
  );
  // An unedited starter of a renamed entity is replaced by the new entity's starter (cli/plan):
  // it is not rewritten, but the imports of it follow it all the same.
  const candidates = mentioning.filter((path) => !untouched.has(path));
  if (candidates.length === 0) return NOTHING_RENAMED;
  const absolute = (path: string): string => compilerPath(outputDir, path);
  const texts = new Map([...userFiles].map(([path, text]) => [absolute(path), text]));
  const host = viewHost(
    { ...view, texts, hidden: new Set(), runtimeOnly: true },
    { ...options, types: [] },
  );
  const typesFiles = [...new Set(renames.map((change) => typesPath(change.old.fileName)))].filter(
    (path) => existsSync(absolute(path)),
  );
  const roots = [...mentioning, ...typesFiles].map(absolute);
  /** The files that import a file, by its name. */
  const importedBy = new Map<string, Set<string>>();
  const service = ts.createLanguageService(
    {
      ...host,
      getCompilationSettings: () => host.options,
      getScriptFileNames: () => roots,
      getScriptVersion: () => '1',
      getScriptSnapshot: (fileName) => {
        const text = host.sourceText(fileName);
        return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
      },
      getCurrentDirectory: () => outputDir,
      useCaseSensitiveFileNames: () => ts.sys.useCaseSensitiveFileNames,
      getDefaultLibFileName: (settings) =>
        `${host.libFolder}/${ts.getDefaultLibFileName(settings)}`,
      resolveModuleNames: (names, containingFile) => {
        const resolved = host.resolveModuleNames(names, containingFile);
        for (const module of resolved) {
          if (module === undefined) continue;
          const importers = importedBy.get(module.resolvedFileName) ?? new Set<string>();
          importers.add(containingFile);
          importedBy.set(module.resolvedFileName, importers);
        }
        return resolved;
      },
      resolveTypeReferenceDirectives: (names, containingFile) =>
        host.resolveTypeReferenceDirectives(names, containingFile),
    },
    ts.createDocumentRegistry(),
  );
  const program = service.getProgram()!;
  shareParsedFiles(program);

  // The candidates that parse; a file that does not is left alone, with a warning.
  const parsed = new Map<string, ts.SourceFile>();
  const skipped: Diagnostic[] = [];
  for (const path of candidates) {
    const file = program.getSourceFile(absolute(path));
    if (file === undefined) continue;
    const syntax = program.getSyntacticDiagnostics(file);
    if (syntax.length === 0) {
      parsed.set(path, file);
      continue;
    }
    const problem = diagnosticOf(outputDir, syntax[0]!);
    skipped.push({
      ...problem,
      message: `${problem.message} The file does not parse, so it was not rewritten for the renames`,
    });
  }

  const edits = new Map<string, Edit[]>([...parsed.keys()].map((path) => [path, []]));
  const placed = new Set<string>();
  const moved = new Map<string, string>();
  const shown = (path: string): string => moved.get(path) ?? path;
  const rewrites: string[] = [];
  const edit = (path: string, change: Edit): boolean => {
    const key = `${path}:${change.start}`;
    if (placed.has(key)) return false;
    placed.add(key);
    edits.get(path)!.push(change);
    return true;
  };
  // A name declared in a file can only be used by the files that import it, directly or not.
  const reaching = new Map<string, ts.SourceFile[]>();
  const searched = (file: ts.SourceFile): ts.SourceFile[] => {
    let files = reaching.get(file.fileName);
    if (files === undefined) {
      const names = new Set([file.fileName]);
      const pending = [file.fileName];
      while (pending.length > 0)
        for (const importer of importedBy.get(pending.pop()!) ?? [])
          if (!names.has(importer)) {
            names.add(importer);
            pending.push(importer);
          }
      files = [file, ...[...parsed.values()].filter((user) => names.has(user.fileName))];
      reaching.set(file.fileName, files);
    }
    return files;
  };
  const rename = (file: ts.SourceFile, name: ts.Node, to: string): void => {
    const from = name.getText(file);
    const locations = renameLocations(service, program, file, name.getStart(file), searched(file));
    for (const location of locations) {
      const path = relativePath(outputDir, location.fileName);
      const target = parsed.get(path);
      if (target === undefined) continue;
      const { start, length } = location.textSpan;
      const text = `${location.prefixText ?? ''}${to}${location.suffixText ?? ''}`;
      if (!edit(path, { start, end: start + length, text })) continue;
      const line = target.getLineAndCharacterOfPosition(start).line + 1;
      rewrites.push(`${shown(path)}:${line}: ${from} → ${to}`);
    }
  };
  const typesFile = (change: SchemaRename): ts.SourceFile | undefined =>
    program.getSourceFile(absolute(typesPath(change.old.fileName)));

  // Fields first, then entities, as the schema change lists them.
  for (const change of renames) {
    if (change.kind !== 'field' || change.field === undefined) continue;
    const types = typesFile(change);
    if (types === undefined) continue;
    // The record, input and patch types (an older service's patch type follows its input type).
    for (const suffix of ['', 'Input', 'Patch']) {
      const declaration = topLevel(types, `${change.old.typeName}${suffix}`).find(
        ts.isInterfaceDeclaration,
      );
      const property = declaration?.members.find(
        (member): member is ts.PropertySignature =>
          ts.isPropertySignature(member) && propertyName(member.name) === change.field!.old,
      );
      if (property !== undefined) rename(types, property.name, change.field.new);
    }
  }
  const moves: { from: string; to: string }[] = [];
  const moveLines: string[] = [];
  for (const change of renames) {
    if (change.kind !== 'entity') continue;
    const types = typesFile(change);
    if (types !== undefined) {
      // Record, input, patch and nested object types all start with the entity's type name.
      const declarations = [
        ...types.statements.filter(ts.isInterfaceDeclaration),
        ...types.statements.filter(ts.isTypeAliasDeclaration),
      ];
      for (const declaration of declarations) {
        const name = declaration.name.text;
        const rest = name.slice(change.old.typeName.length);
        if (!name.startsWith(change.old.typeName) || !/^([A-Z]|$)/.test(rest)) continue;
        rename(types, declaration.name, `${change.new.typeName}${rest}`);
      }
      moves.push({
        from: absolute(typesPath(change.old.fileName)),
        to: absolute(typesPath(change.new.fileName)),
      });
    }
    const oldHooks = `${SOURCE_DIR}/hooks/${change.old.fileName}.ts`;
    const newHooks = `${SOURCE_DIR}/hooks/${change.new.fileName}.ts`;
    const starter = untouched.has(oldHooks);
    const hooks = starter ? program.getSourceFile(absolute(oldHooks)) : parsed.get(oldHooks);
    if (hooks === undefined) continue;
    const constant = topLevel(hooks, `${change.old.camelName}Hooks`).find(ts.isVariableDeclaration);
    if (constant !== undefined) rename(hooks, constant.name, `${change.new.camelName}Hooks`);
    if (starter) {
      moves.push({ from: absolute(oldHooks), to: absolute(newHooks) });
      continue;
    }
    if (existsSync(absolute(newHooks))) {
      skipped.push({
        file: oldHooks,
        line: 1,
        column: 1,
        code: 'CODEMOD_TARGET_EXISTS',
        message:
          `entity ${change.old.name} is now ${change.new.name}, but ${newHooks} already exists, ` +
          `so ${oldHooks} was not moved there; merge the two files by hand`,
      });
      continue;
    }
    moves.push({ from: absolute(oldHooks), to: absolute(newHooks) });
    moved.set(oldHooks, newHooks);
    moveLines.push(
      `${oldHooks} → ${newHooks} (moved: entity ${change.old.name} is now ${change.new.name})`,
    );
  }

  // The imports and re-exports that name a moved module follow it.
  const movedTo = new Map(moves.map((move) => [move.from, move.to]));
  for (const [path, file] of parsed) {
    for (const specifier of moduleSpecifiers(file)) {
      const [resolved] = host.resolveModuleNames([specifier.text], file.fileName);
      const target = resolved === undefined ? undefined : movedTo.get(resolved.resolvedFileName);
      if (target === undefined) continue;
      const text = specifierOf(absolute(shown(path)), target, specifier.text);
      if (text === specifier.text) continue;
      const start = specifier.node.getStart(file) + 1;
      if (!edit(path, { start, end: specifier.node.getEnd() - 1, text })) continue;
      const line = file.getLineAndCharacterOfPosition(start).line + 1;
      rewrites.push(`${path}:${line}: '${specifier.text}' → '${text}'`);
    }
  }
  rewrites.sort(compareRewrites);
  rewrites.push(...moveLines);

  const changed: UserCodeEdit[] = [];
  for (const [from, file] of parsed) {
    const contents = applyEdits(file.text, edits.get(from)!);
    const path = shown(from);
    if (path !== from || contents !== userFiles.get(from)) changed.push({ from, path, contents });
  }
  return { edits: changed, rewrites, skipped };
}

/** The parts of the compiler's reference search that the language service builds on. */
interface ReferenceSearch {
  readonly FindAllReferences: {
    findReferenceOrRenameEntries(
      program: ts.Program,
      cancellationToken: ts.CancellationToken,
      sourceFiles: readonly ts.SourceFile[],
      node: ts.Node,
      position: number,
      options: object,
      convert: (entry: unknown, node: ts.Node, checker: ts.TypeChecker) => ts.RenameLocation,
    ): ts.RenameLocation[] | undefined;
    toRenameLocation(
      entry: unknown,
      node: ts.Node,
      checker: ts.TypeChecker,
      prefixAndSuffix: boolean,
      quotePreference: unknown,
    ): ts.RenameLocation;
    readonly FindReferencesUse: { readonly Rename: number };
  };
  getTouchingPropertyName(file: ts.SourceFile, position: number): ts.Node;
  getAdjustedRenameLocation(node: ts.Node): ts.Node;
  getQuotePreference(file: ts.SourceFile, preferences: object): unknown;
}

const NEVER_CANCELLED: ts.CancellationToken = {
  isCancellationRequested: () => false,
  throwIfCancellationRequested: () => undefined,
};

/**
 * Where renaming the name at `position` of `file` changes the text, prefixes and suffixes
 * included, among `files` only: what the language service's `findRenameLocations` answers, but
 * without searching every file of the program for each rename (a hundred renames of `name` would
 * each read every hooks file). The compiler's own search with a list of files is not part of its
 * public API: a compiler without it gets the language service's answer, which is the same for
 * these files.
 */
function renameLocations(
  service: ts.LanguageService,
  program: ts.Program,
  file: ts.SourceFile,
  position: number,
  files: readonly ts.SourceFile[],
): readonly ts.RenameLocation[] {
  const search = ts as unknown as Partial<ReferenceSearch>;
  const references = search.FindAllReferences;
  if (
    typeof references?.findReferenceOrRenameEntries !== 'function' ||
    typeof references.toRenameLocation !== 'function' ||
    typeof references.FindReferencesUse?.Rename !== 'number' ||
    typeof search.getTouchingPropertyName !== 'function' ||
    typeof search.getAdjustedRenameLocation !== 'function' ||
    typeof search.getQuotePreference !== 'function'
  ) {
    return (
      service.findRenameLocations(file.fileName, position, false, false, {
        providePrefixAndSuffixTextForRename: true,
      }) ?? []
    );
  }
  const node = search.getAdjustedRenameLocation(search.getTouchingPropertyName(file, position));
  const quotes = search.getQuotePreference(file, {});
  return (
    references.findReferenceOrRenameEntries(
      program,
      NEVER_CANCELLED,
      files,
      node,
      position,
      {
        findInStrings: false,
        findInComments: false,
        providePrefixAndSuffixTextForRename: true,
        use: references.FindReferencesUse.Rename,
      },
      (entry, original, checker) =>
        references.toRenameLocation(entry, original, checker, true, quotes),
    ) ?? []
  );
}

/** The text with the edits applied (they do not overlap: each place is edited once). */
function applyEdits(text: string, edits: readonly Edit[]): string {
  let result = text;
  for (const change of [...edits].sort((a, b) => b.start - a.start))
    result = `${result.slice(0, change.start)}${change.text}${result.slice(change.end)}`;
  return result;
}

/** The declarations named `name` among a file's top-level statements. */
function topLevel(file: ts.SourceFile, name: string): ts.Node[] {
  const found: ts.Node[] = [];
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name) && declaration.name.text === name)
          found.push(declaration);
    } else if (
      (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) &&
      statement.name.text === name
    ) {
      found.push(statement);
    }
  }
  return found;
}

function propertyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)
    ? name.text
    : undefined;
}

/** The module specifiers of a file's imports and re-exports. */
function moduleSpecifiers(file: ts.SourceFile): { text: string; node: ts.StringLiteral }[] {
  const found: { text: string; node: ts.StringLiteral }[] = [];
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier !== undefined && ts.isStringLiteral(specifier))
      found.push({ text: specifier.text, node: specifier });
  }
  return found;
}

/**
 * The specifier by which the file at `from` imports `target`: relative, with the extension the
 * old specifier had (`.js` as Node's ESM resolution needs it, `.ts`, or none).
 */
function specifierOf(from: string, target: string, old: string): string {
  let path = relative(dirname(from), target).split(sep).join('/');
  path = path.replace(/\.ts$/, '');
  if (!path.startsWith('.')) path = `./${path}`;
  const extension = /\.(js|ts)$/.exec(old)?.[0] ?? '';
  return `${path}${extension}`;
}

/** `file:line: …` lines by file, then line. */
function compareRewrites(a: string, b: string): number {
  const [fileA = '', lineA = '0'] = a.split(':');
  const [fileB = '', lineB = '0'] = b.split(':');
  return fileA < fileB ? -1 : fileA > fileB ? 1 : Number(lineA) - Number(lineB);
}

function typesPath(fileName: string): string {
  return `${SOURCE_DIR}/entities/${fileName}/types.ts`;
}

function relativePath(outputDir: string, fileName: string): string {
  return relative(outputDir, fileName).split(sep).join('/');
}

export function diagnosticOf(outputDir: string, diagnostic: ts.Diagnostic): Diagnostic {
  const file = diagnostic.file;
  const start = file === undefined || diagnostic.start === undefined ? undefined : diagnostic.start;
  const position =
    file === undefined || start === undefined
      ? { line: 0, character: 0 }
      : file.getLineAndCharacterOfPosition(start);
  return {
    file: file === undefined ? '' : relativePath(outputDir, file.fileName),
    line: position.line + 1,
    column: position.character + 1,
    code: `TS${diagnostic.code}`,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
  };
}
