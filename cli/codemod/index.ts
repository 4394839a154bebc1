/**
 * The user's own code and a regeneration (SPEC §10): when the schema renames an entity or a field
 * (`renamedFrom`), the user-owned TypeScript files of the service follow the rename, and every
 * user file that is not the untouched starter of this generation is type-checked against the new
 * generated code.
 *
 * This module only decides whether there is anything to do, so that a generation whose renames no
 * user file mentions and whose user files are the untouched starters never loads the compiler;
 * the work itself is in `./rewrite.ts`.
 */
import { readUserFiles } from './files.js';
import { mayMention, renameMarks } from './prefilter.js';
import { NO_USER_CODE_CHANGES, type UserCodeRequest, type UserCodeResult } from './types.js';

export { isGeneratedText } from '../header.js';
export { readUserFiles, SOURCE_DIR, typeScriptFiles } from './files.js';
export {
  NO_USER_CODE_CHANGES,
  type UserCodeEdit,
  type UserCodeRequest,
  type UserCodeResult,
} from './types.js';

/**
 * Rewrites the user's files for the renames and type-checks them, in memory: the result is
 * written (or not) with the rest of the generation. Loads the compiler only when a user file can
 * follow a rename (it spells an old name) or one is not the starter the generator wrote (and the
 * type check is on).
 */
export async function planUserCode(request: UserCodeRequest): Promise<UserCodeResult> {
  const userFiles = await readUserFiles(request.outputDir, request.read);
  if (userFiles.size === 0) return NO_USER_CODE_CHANGES;
  const starters = new Map(
    request.generated
      .filter((file) => file.owner === 'user')
      .map((file) => [file.path, file.contents]),
  );
  // An unedited starter of a gone entity is deleted with it (cli/plan): nothing to rewrite.
  const untouched = new Set(
    [...userFiles]
      .filter(([path, text]) => request.formerStarters?.get(path) === text)
      .map(([path]) => path),
  );
  // Only a file that spells an old name can follow a rename (see ./prefilter.ts).
  const marks = renameMarks(request.renames);
  const rename =
    request.codemod &&
    request.renames.length > 0 &&
    [...userFiles].some(([path, text]) => !untouched.has(path) && mayMention(text, marks));
  const typecheck = request.typecheck ?? true;
  const edited =
    typecheck &&
    [...userFiles].some(([path, text]) => starters.get(path) !== text && !untouched.has(path));
  if (!rename && !edited) return NO_USER_CODE_CHANGES;
  const { rewriteUserCode } = await import('./rewrite.js');
  return rewriteUserCode({ ...request, userFiles, rename, typecheck, starters, untouched });
}
