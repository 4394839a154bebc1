/**
 * The compiler side of `planUserCode` (see ./index.ts), loaded only when there is work:
 *
 * 1. Renames (./rename.ts): the user files that can mention a renamed name follow the renames.
 *    Nothing is saved: the new texts become part of the generation.
 * 2. Type check (./typecheck.ts): the user's files as they will be, against the new generated
 *    code; their errors are reported with the schema change that most likely caused them. A file
 *    that is still the starter this generation writes is generated code in all but ownership and
 *    is not checked, like the generated code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { isGeneratedText } from '../header.js';
import { compilerOptions, compilerPath, missingTypes, packagesOf, ts } from './compiler.js';
import { SOURCE_DIR } from './files.js';
import { applyRenames, NOTHING_RENAMED } from './rename.js';
import { checkFiles, TYPECHECK_CACHE_PATH } from './typecheck.js';
import type { UserCodeRequest, UserCodeResult } from './types.js';

interface RewriteInput extends UserCodeRequest {
  /** The user files on disk, by path relative to the output folder. */
  readonly userFiles: ReadonlyMap<string, string>;
  /** Apply the renames (otherwise only type-check). */
  readonly rename: boolean;
  /** Type-check the user files (`--no-typecheck` turns it off). */
  readonly typecheck: boolean;
  /** The starter files of this generation, by path. */
  readonly starters: ReadonlyMap<string, string>;
  /** Unedited starters of gone entities: deleted with them, neither rewritten nor checked. */
  readonly untouched: ReadonlySet<string>;
}

export function rewriteUserCode(input: RewriteInput): UserCodeResult {
  const { outputDir } = input;
  const options = compilerOptions(input);
  const packages = packagesOf(input);
  const renamed = input.rename
    ? applyRenames(
        outputDir,
        input.userFiles,
        input.untouched,
        input.renames,
        { packages },
        options,
      )
    : NOTHING_RENAMED;
  if (!input.typecheck) return { ...renamed, problems: [] };
  const finalFiles = new Map(input.userFiles);
  for (const path of input.untouched) finalFiles.delete(path);
  for (const edit of renamed.edits) {
    finalFiles.delete(edit.from);
    finalFiles.set(edit.path, edit.contents);
  }
  const missing = missingTypes(options, packages);
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
  const roots = [...finalFiles].filter(([path, text]) => input.starters.get(path) !== text);
  if (roots.length === 0) return { ...renamed, problems: [] };
  const texts = new Map<string, string>();
  for (const file of input.generated) {
    if (file.path.startsWith(`${SOURCE_DIR}/`) && file.path.endsWith('.ts'))
      texts.set(compilerPath(outputDir, file.path), file.contents);
  }
  for (const [path, text] of finalFiles) texts.set(compilerPath(outputDir, path), text);
  // Files on disk that will be gone (stale generated modules, moved user files) must not be
  // found by module resolution.
  const hidden = new Set<string>(staleGenerated(outputDir, texts));
  for (const path of input.userFiles.keys())
    if (!finalFiles.has(path)) hidden.add(compilerPath(outputDir, path));
  const checked = checkFiles(
    outputDir,
    roots.map(([path]) => path),
    { texts, hidden, packages },
    options,
    readCache(outputDir),
  );
  const problems: Diagnostic[] = [];
  for (const [path] of roots) {
    const check = checked.checks.get(path);
    if (check === undefined) continue;
    for (const located of check.diagnostics) {
      // A file that does not parse is the user's own doing, not the schema's.
      const message = check.syntax ? located.message : withCause(located.message, input);
      problems.push({ ...located, message });
    }
  }
  return {
    ...renamed,
    problems,
    ...(checked.cache === undefined
      ? {}
      : { cache: { path: TYPECHECK_CACHE_PATH, contents: checked.cache } }),
  };
}

function readCache(outputDir: string): string | undefined {
  try {
    return readFileSync(join(outputDir, TYPECHECK_CACHE_PATH), 'utf8');
  } catch {
    return undefined; // no cache yet: everything is checked
  }
}

/** Generated `.ts` files on disk under `src/` that the new generation no longer has. */
function staleGenerated(outputDir: string, texts: ReadonlyMap<string, string>): string[] {
  const stale: string[] = [];
  const absolute = join(outputDir, SOURCE_DIR);
  if (!existsSync(absolute)) return stale;
  for (const entry of ts.sys.readDirectory(absolute, ['.ts'], undefined, undefined)) {
    if (texts.has(entry)) continue;
    const text = ts.sys.readFile(entry);
    if (text !== undefined && isGeneratedText(text)) stale.push(entry);
  }
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
