/**
 * What the user-code pass (./index.ts, ./rewrite.ts) is asked and what it answers: the types both
 * modules share, so that neither imports the other's.
 */
import type { Diagnostic } from '../diagnostics.js';
import type { GeneratedFile } from '../generate/index.js';
import type { SchemaRename } from '../migrate/index.js';

export interface UserCodeRequest {
  /** The output folder, absolute. */
  readonly outputDir: string;
  /** The new generation: every file, with paths relative to the output folder. */
  readonly generated: readonly GeneratedFile[];
  /** The renames of this schema change (none for `check`). */
  readonly renames: readonly SchemaRename[];
  /** What the schema change does, one line each, to name the cause of a type error. */
  readonly changes: readonly string[];
  /** Rewrite user files for the renames (`--no-codemod` turns it off). */
  readonly codemod: boolean;
  /** Type-check the user files (`--no-typecheck` turns it off; default on). */
  readonly typecheck?: boolean;
  /**
   * The starter hooks files of the previous generation's entities that are gone (an entity
   * renamed or removed), as written: such a file still unedited is deleted with its entity and
   * replaced by the new entity's starter (cli/plan), so it is neither rewritten nor checked.
   */
  readonly formerStarters?: ReadonlyMap<string, string>;
  /** Files of the output folder already read, by path relative to it: not read again. */
  readonly read?: ReadonlyMap<string, string>;
}

/** A user file the rewrite changes; `from` differs from `path` when the file moves. */
export interface UserCodeEdit {
  readonly from: string;
  readonly path: string;
  readonly contents: string;
}

export interface UserCodeResult {
  /** New contents (and new places) of user files. */
  readonly edits: readonly UserCodeEdit[];
  /** One line per rewritten place: `src/hooks/product.ts:12: price → cost`. */
  readonly rewrites: readonly string[];
  /** User files the rewrite left alone because they do not parse. */
  readonly skipped: readonly Diagnostic[];
  /** Type errors in user files against the new generated code, each naming its likely cause. */
  readonly problems: readonly Diagnostic[];
  /** Why the type check did not run, when it did not. */
  readonly notChecked?: string;
  /**
   * The type check's cache file (cli/codemod/typecheck.ts), when it changes: written with the
   * generation, not part of the output (git ignores it).
   */
  readonly cache?: { readonly path: string; readonly contents: string };
}

/** Nothing to rewrite, nothing wrong. */
export const NO_USER_CODE_CHANGES: UserCodeResult = {
  edits: [],
  rewrites: [],
  skipped: [],
  problems: [],
};
