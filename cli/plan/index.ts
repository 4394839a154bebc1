/**
 * Planning a generation against an output folder: the one pure function behind `generate`,
 * `generate --dry-run`, `check` and `dev`. Given the generated files and what is on disk, it
 * decides per file what a run does, following the ownership rules:
 *
 * - Generator files (DO NOT EDIT header) are listed in the manifest with the hash of what was
 *   written. They are rewritten when their content changes — unless the file on disk no longer has
 *   the recorded hash (the user edited it): then the run is blocked and names the file, and only
 *   `--force` overwrites it.
 * - Stale generator files (listed in the manifest, no longer generated: an entity was removed or
 *   renamed) are deleted, again only when unedited. Files under `migrations/` are never deleted.
 * - Files the manifest does not list are never deleted. One that is in the way of a generated file
 *   is adopted when it already has exactly the generated content (an output of an older entity-gen
 *   without manifest), and blocks the run otherwise.
 * - User files (`src/hooks/<entity>.ts`, `src/server.ts`) are created when absent and never
 *   touched again.
 */
import type { Diagnostic } from '../diagnostics.js';
import { isGeneratedText } from '../header.js';
import { CACHE_PATH, type FileOwner, type GeneratedFile } from '../generate/index.js';
import {
  comparePaths,
  contentHash,
  invalidManifestDiagnostic,
  MANIFEST_PATH,
  parseManifest,
  type Manifest,
} from '../manifest/index.js';
import type { UserCodeResult } from '../codemod/types.js';
import type { SchemaRename } from '../migrate/index.js';
import { MIGRATIONS_DIR, type MigrationStep } from '../migrate/index.js';

export { MIGRATIONS_DIR, type MigrationStep } from '../migrate/index.js';

/** What the plan needs to know about the output folder; read by `readOutputSnapshot`. */
export interface OutputSnapshot {
  /** Text of `.entity-gen/manifest.json`, when there is one. */
  readonly manifest: string | undefined;
  /**
   * Contents of the files that exist, by path relative to the folder: at least every path the
   * generation produces and every path the manifest lists. A path that is absent does not exist.
   */
  readonly files: ReadonlyMap<string, string>;
  /** File names in `migrations/`. */
  readonly migrationFiles: readonly string[];
  /** Paths of the `.ts` files in `src/hooks/`. */
  readonly hooksFiles: readonly string[];
  /** Text of the generator's cache file (cli/generate/cache.ts), when there is one. */
  readonly cache?: string;
}

/** An output folder with nothing in it. */
export const EMPTY_OUTPUT: OutputSnapshot = {
  manifest: undefined,
  files: new Map(),
  migrationFiles: [],
  hooksFiles: [],
};

export interface PlanOptions {
  /** Overwrite or delete generator files the user edited, and files in the way. */
  readonly force: boolean;
}

/** What a run does with one file. `keep`: a user file that exists and is left alone. */
export type FileAction = 'create' | 'update' | 'unchanged' | 'delete' | 'keep';

export interface PlannedFile {
  readonly path: string;
  readonly action: FileAction;
  readonly owner: FileOwner | 'manifest';
  /** The new text, for `create` and `update`. */
  readonly contents?: string;
  /** Set when the action overrides a conflict because of `--force`. */
  readonly forced?: boolean;
  /** Why a user file changes: it follows a rename of the schema (see `withUserCode`). */
  readonly reason?: string;
}

/** A file a run would have to overwrite or delete although the generator may not. */
export interface Conflict {
  readonly path: string;
  /**
   * `edited`: a generator file changed by hand since it was written; `edited-stale`: the same, for
   * a file that is no longer generated; `unowned`: a file the manifest does not list, in the way of
   * a generated file.
   */
  readonly kind: 'edited' | 'edited-stale' | 'unowned';
}

export interface Plan {
  /** Every file the generation concerns, the manifest included, sorted by path. */
  readonly files: readonly PlannedFile[];
  /** Files the generator would overwrite or delete but must not; sorted by path. */
  readonly conflicts: readonly Conflict[];
  /** Conflicts exist and `force` is off: nothing may be written. */
  readonly blocked: boolean;
  /** Problems that stop the generation (unusable manifest, migrations). */
  readonly diagnostics: readonly Diagnostic[];
  /** Changes the new migration files make to stored data. */
  readonly migrationSteps: readonly MigrationStep[];
  /** Entity and field renames of the schema change, which the user's code follows. */
  readonly renames: readonly SchemaRename[];
  /** What happens to the user's own code (rewrites for renames, type errors); see cli/codemod. */
  readonly userCode?: UserCodeResult;
  /** Things worth telling that block nothing (orphaned hooks files, legacy output). */
  readonly notes: readonly string[];
  /**
   * The generator's cache file, when it changes: written with the other files, but not part of
   * the output (git ignores it, `check` does not look at it, the counts leave it out).
   */
  readonly cache?: { readonly path: string; readonly contents: string };
  /**
   * Hooks files of entities no longer in the schema (deleted when unedited, else noted): their
   * type errors are not reported, the note says what to do.
   */
  readonly orphanedHooks?: readonly string[];
}

/**
 * Decides what a generation does to an output folder. Pure: reads only its arguments, so tests
 * give it a made-up folder and `check` compares with the disk without writing.
 */
export function planOutput(
  generated: {
    readonly files: readonly GeneratedFile[];
    readonly migrationSteps: readonly MigrationStep[];
    readonly renames: readonly SchemaRename[];
    /** The text of the cache file for the next generation. */
    readonly cache?: string;
    /** The starter hooks files of removed entities, as written (see `GenerateResult`). */
    readonly formerStarters?: ReadonlyMap<string, string>;
  },
  snapshot: OutputSnapshot,
  options: PlanOptions,
): Plan {
  const previous = readPreviousManifest(snapshot.manifest);
  if (previous.diagnostic !== undefined) return failed([previous.diagnostic]);
  const recorded = previous.manifest?.files ?? {};
  const files: PlannedFile[] = [];
  const conflicts: Conflict[] = [];
  const notes: string[] = [];
  const existingMigrations = new Set(snapshot.migrationFiles);
  const conflict = (path: string, kind: Conflict['kind'], contents?: string): void => {
    conflicts.push({ path, kind });
    if (contents === undefined)
      files.push({ path, action: 'delete', owner: 'generator', forced: true });
    else files.push({ path, action: 'update', owner: 'generator', contents, forced: true });
  };

  for (const file of generated.files) {
    const { path, contents, owner } = file;
    if (owner === 'manifest') {
      files.push({
        path,
        owner,
        ...(snapshot.manifest === undefined
          ? { action: 'create', contents }
          : snapshot.manifest === contents
            ? { action: 'unchanged' }
            : { action: 'update', contents }),
      });
      continue;
    }
    const onDisk = snapshot.files.get(path);
    if (owner === 'user') {
      if (onDisk === undefined) files.push({ path, action: 'create', owner, contents });
      else {
        files.push({ path, action: 'keep', owner });
        if (isGeneratedText(onDisk)) notes.push(handedOverNote(path));
      }
      continue;
    }
    const isNewMigration = path.startsWith(`${MIGRATIONS_DIR}/`) && !(path in recorded);
    if (isNewMigration && existingMigrations.has(path.slice(MIGRATIONS_DIR.length + 1))) {
      conflict(path, 'unowned', contents); // never overwrite a migration someone else wrote
    } else if (onDisk === undefined) {
      files.push({ path, action: 'create', owner, contents });
    } else if (onDisk === contents) {
      files.push({ path, action: 'unchanged', owner });
    } else if (recorded[path] !== undefined && contentHash(onDisk) === recorded[path]) {
      files.push({ path, action: 'update', owner, contents });
    } else {
      conflict(path, recorded[path] === undefined ? 'unowned' : 'edited', contents);
    }
  }

  const wantedPaths = new Set(generated.files.map((file) => file.path));
  for (const [path, hash] of Object.entries(recorded)) {
    if (wantedPaths.has(path)) continue;
    const onDisk = snapshot.files.get(path);
    if (path.startsWith(`${MIGRATIONS_DIR}/`)) {
      // Migrations are append-only: an applied one stays (and stays listed in the manifest).
      if (onDisk === undefined) notes.push(`${path} is listed in the manifest but was deleted.`);
      continue;
    }
    if (onDisk === undefined) continue;
    if (contentHash(onDisk) === hash) files.push({ path, action: 'delete', owner: 'generator' });
    else conflict(path, 'edited-stale');
  }

  const orphanedHooks: string[] = [];
  for (const path of snapshot.hooksFiles) {
    if (wantedPaths.has(path)) continue;
    const starter = generated.formerStarters?.get(path);
    if (starter !== undefined && snapshot.files.get(path) === starter) {
      // The starter file of a removed entity, never edited: it goes with its entity.
      files.push({
        path,
        action: 'delete',
        owner: 'user',
        reason: 'unedited starter file of a removed entity',
      });
    } else {
      notes.push(orphanedHooksNote(path));
    }
    orphanedHooks.push(path);
  }
  if (
    previous.manifest === undefined &&
    generated.files.some((file) => file.owner !== 'manifest' && snapshot.files.has(file.path))
  ) {
    notes.push(
      `${MANIFEST_PATH} is missing: files identical to the generated ones are taken over, ` +
        'any other file in the way is left alone unless --force is given.',
    );
  }

  return {
    files: files.sort((a, b) => comparePaths(a.path, b.path)),
    conflicts: conflicts.sort((a, b) => comparePaths(a.path, b.path)),
    blocked: conflicts.length > 0 && !options.force,
    diagnostics: [],
    migrationSteps: generated.migrationSteps,
    renames: generated.renames,
    notes,
    ...(generated.cache === undefined ||
    generated.cache === '' ||
    generated.cache === snapshot.cache
      ? {}
      : { cache: { path: CACHE_PATH, contents: generated.cache } }),
    orphanedHooks,
  };
}

/**
 * Adds what the user-code pass decided to a plan: rewritten user files become updates, a moved
 * hooks file is deleted at its old place and written at its new one (instead of the starter file
 * the generation would create there).
 */
export function withUserCode(plan: Plan, checked: UserCodeResult): Plan {
  // An orphaned hooks file imports its removed entity's types: a note says so, not the compiler.
  const moved = new Set(
    checked.edits.filter((edit) => edit.from !== edit.path).map((edit) => edit.from),
  );
  const orphaned = new Set((plan.orphanedHooks ?? []).filter((path) => !moved.has(path)));
  const userCode =
    orphaned.size === 0
      ? checked
      : {
          ...checked,
          problems: checked.problems.filter((problem) => !orphaned.has(problem.file)),
        };
  if (userCode.edits.length === 0) return { ...plan, userCode };
  const touched = new Set(userCode.edits.flatMap((edit) => [edit.from, edit.path]));
  const before = new Map(plan.files.map((file) => [file.path, file]));
  const files = plan.files.filter((file) => !touched.has(file.path));
  for (const edit of userCode.edits) {
    const moved = edit.from !== edit.path;
    if (moved) {
      files.push({
        path: edit.from,
        action: 'delete',
        owner: 'user',
        reason: `moved to ${edit.path}`,
      });
    }
    const existing = moved ? before.get(edit.path)?.action === 'keep' : true;
    files.push({
      path: edit.path,
      action: existing ? 'update' : 'create',
      owner: 'user',
      contents: edit.contents,
      reason: moved ? `moved from ${edit.from}, follows the renames` : 'follows the renames',
    });
  }
  return {
    ...plan,
    files: files.sort((a, b) => comparePaths(a.path, b.path)),
    notes: plan.notes.filter((note) => ![...moved].some((path) => note.startsWith(`${path} `))),
    userCode,
  };
}

/** The files a plan writes and deletes; nothing when it is blocked or failed. */
export function planChanges(plan: Plan): {
  readonly writes: readonly { readonly path: string; readonly contents: string }[];
  readonly deletes: readonly string[];
} {
  if (plan.blocked || plan.diagnostics.length > 0) return { writes: [], deletes: [] };
  const writes: { path: string; contents: string }[] = [];
  const deletes: string[] = [];
  for (const file of plan.files) {
    if ((file.action === 'create' || file.action === 'update') && file.contents !== undefined)
      writes.push({ path: file.path, contents: file.contents });
    if (file.action === 'delete') deletes.push(file.path);
  }
  if (plan.cache !== undefined) writes.push(plan.cache);
  if (plan.userCode?.cache !== undefined) writes.push(plan.userCode.cache);
  return { writes, deletes };
}

/** Whether the folder already holds exactly what a generation would write. */
export function isUpToDate(plan: Plan): boolean {
  return (
    plan.diagnostics.length === 0 &&
    plan.conflicts.length === 0 &&
    plan.files.every((file) => file.action === 'unchanged' || file.action === 'keep')
  );
}

function failed(diagnostics: readonly Diagnostic[]): Plan {
  return {
    files: [],
    conflicts: [],
    blocked: true,
    diagnostics,
    migrationSteps: [],
    renames: [],
    notes: [],
  };
}

function readPreviousManifest(text: string | undefined): {
  manifest?: Manifest;
  diagnostic?: Diagnostic;
} {
  if (text === undefined) return {};
  const parsed = parseManifest(text);
  if (parsed.manifest !== undefined) return { manifest: parsed.manifest };
  return {
    diagnostic: invalidManifestDiagnostic(parsed.problem),
  };
}

function handedOverNote(path: string): string {
  return (
    `${path} still carries the DO NOT EDIT header of an older entity-gen; the file is yours now ` +
    'and was left as it is (delete it and generate again for the new starter file).'
  );
}

function orphanedHooksNote(path: string): string {
  return (
    `${path} belongs to no entity of the schema (removed or renamed?); it is yours and was ` +
    'edited, so it was left in place. While it imports the types of the entity that is gone, ' +
    'the service does not build: move its code to the new hooks file or delete it.'
  );
}
