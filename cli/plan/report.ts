import { formatDiagnostic } from '../diagnostics.js';
import type { Conflict, FileAction, Plan } from './index.js';

/** Counts of what a plan does, for one-line summaries. */
export interface PlanCounts {
  readonly create: number;
  readonly update: number;
  readonly delete: number;
  readonly unchanged: number;
}

/** How many files a plan creates, updates, deletes and leaves alone (the manifest not counted). */
export function countPlan(plan: Plan): PlanCounts {
  const count = (...actions: FileAction[]): number =>
    plan.files.filter((file) => file.owner !== 'manifest' && actions.includes(file.action)).length;
  return {
    create: count('create'),
    update: count('update'),
    delete: count('delete'),
    unchanged: count('unchanged', 'keep'),
  };
}

/** `2 created, 1 updated, 14 unchanged, 0 deleted`, or `2 to create, …` for a plan not yet run. */
export function summarizeCounts(counts: PlanCounts, planned: boolean): string {
  const verb = (done: string, todo: string): string => (planned ? todo : done);
  return (
    `${counts.create} ${verb('created', 'to create')}, ${counts.update} ${verb('updated', 'to update')}, ` +
    `${counts.unchanged} unchanged, ${counts.delete} ${verb('deleted', 'to delete')}`
  );
}

/**
 * The plan as `check` and `generate --dry-run` print it: one line per file that changes, the
 * conflicts, the migration steps (destructive ones marked) and the notes. Unchanged files and the
 * user's existing files are only counted.
 */
export function describePlan(plan: Plan): string[] {
  const lines: string[] = [];
  const conflicts = new Map(plan.conflicts.map((conflict) => [conflict.path, conflict]));
  for (const file of plan.files) {
    const conflict = conflicts.get(file.path);
    if (conflict !== undefined) lines.push(`  ${describeConflict(conflict, plan.blocked)}`);
    else if (file.reason !== undefined)
      lines.push(`  ${file.action.padEnd(8)} ${file.path} (yours; ${file.reason})`);
    else if (file.action === 'create' && file.owner === 'user')
      lines.push(`  create   ${file.path} (yours from now on)`);
    else if (file.action === 'create' || file.action === 'update')
      lines.push(`  ${file.action.padEnd(8)} ${file.path}`);
    else if (file.action === 'delete') lines.push(`  delete   ${file.path} (no longer generated)`);
  }
  lines.push(...describeMigrations(plan));
  lines.push(...describeUserCode(plan));
  for (const note of plan.notes) lines.push(`note: ${note}`);
  return lines;
}

/**
 * What happens to the user's own files: each rewritten place (`file:line: old → new`), files the
 * rewrite had to leave alone, and the type errors that remain against the new generated code.
 */
export function describeUserCode(plan: Plan): string[] {
  const userCode = plan.userCode;
  if (userCode === undefined) return [];
  const lines: string[] = [];
  if (userCode.rewrites.length > 0) {
    lines.push(
      `Your code follows the renames (${userCode.rewrites.length} ${userCode.rewrites.length === 1 ? 'change' : 'changes'}):`,
    );
    for (const rewrite of userCode.rewrites) lines.push(`  ${rewrite}`);
  }
  for (const skipped of userCode.skipped) lines.push(`warning: ${formatDiagnostic(skipped)}`);
  if (userCode.problems.length > 0) {
    lines.push(
      `Your code does not compile against the generated code (${userCode.problems.length} ${userCode.problems.length === 1 ? 'error' : 'errors'}):`,
    );
    for (const problem of userCode.problems) lines.push(formatDiagnostic(problem));
  }
  if (userCode.notChecked !== undefined)
    lines.push(`note: your code was not type-checked: ${userCode.notChecked}.`);
  return lines;
}

/** The migration steps, destructive ones first and marked so they are not missed. */
export function describeMigrations(plan: Plan): string[] {
  if (plan.migrationSteps.length === 0) return [];
  const steps = [...plan.migrationSteps].sort(
    (a, b) => Number(b.destructive) - Number(a.destructive),
  );
  return [
    `Pending migrations (${steps.length} ${steps.length === 1 ? 'step' : 'steps'}):`,
    ...steps.map((step) =>
      step.destructive
        ? `  ! DESTRUCTIVE (loses data): ${step.description}`
        : `  ${step.description}`,
    ),
  ];
}

/** One line per conflict, saying what a run does about it. */
export function describeConflict(conflict: Conflict, blocked: boolean): string {
  switch (conflict.kind) {
    case 'edited':
      return blocked
        ? `edited   ${conflict.path} (changed by hand; generate overwrites it only with --force)`
        : `update   ${conflict.path} (changed by hand; overwritten because of --force)`;
    case 'edited-stale':
      return blocked
        ? `edited   ${conflict.path} (no longer generated but changed by hand; deleted only with --force)`
        : `delete   ${conflict.path} (no longer generated; changed by hand, deleted because of --force)`;
    case 'unowned':
      return blocked
        ? `in way   ${conflict.path} (not written by entity-gen; overwritten only with --force)`
        : `update   ${conflict.path} (not written by entity-gen; overwritten because of --force)`;
  }
}
