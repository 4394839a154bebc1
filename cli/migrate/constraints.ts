/**
 * Migrations and constraints (SPEC §16): a top-level field whose constraints are added or changed
 * on a table that already holds records (or a field added with a default and constraints) gets a
 * check line in the migration; the driver then lists the stored records that break the new rules
 * and fails the migration, which changes nothing. Constraints of nested values (inside OBJECT,
 * DICTIONARY or array elements) are checked on writes only.
 */
import { constraintCheckLine, type ConstraintCheck } from '@entity-gen/runtime/ddl';
import type { FieldConstraints } from '@entity-gen/runtime/convert';
import type { EntityDiff, MigrationStep } from './diff.js';

/** The checks the changes of `diffs` need, in entity and field order. */
export function constraintChecks(diffs: readonly EntityDiff[]): ConstraintCheck[] {
  const checks: ConstraintCheck[] = [];
  for (const diff of diffs) {
    if (diff.kind !== 'alter') continue;
    const fields = [
      ...diff.kept.map((kept) => ({ before: kept.old.constraints, field: kept.new })),
      ...diff.added
        .filter((field) => field.default !== undefined)
        .map((field) => ({ before: undefined, field })),
    ];
    for (const { before, field } of fields) {
      const rules = field.constraints;
      if (rules === undefined || sameRules(before, rules)) continue;
      checks.push({ entity: diff.new.name, field: field.name, type: field.type, rules });
    }
  }
  return checks;
}

function sameRules(a: FieldConstraints | undefined, b: FieldConstraints): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** The plan's steps for the checks. */
export function constraintSteps(checks: readonly ConstraintCheck[]): MigrationStep[] {
  return checks.map((check) => ({
    description: `Check that every stored value of ${check.entity}.${check.field} meets its constraints (${describe(check.rules)})`,
    destructive: false,
  }));
}

function describe(rules: FieldConstraints): string {
  return Object.entries(rules)
    .map(([key, value]) => `${key} ${JSON.stringify(value)}`)
    .join(', ');
}

/** The check lines of a migration (the same for both dialects). */
export function constraintSql(checks: readonly ConstraintCheck[]): string {
  return checks.map((check) => `${constraintCheckLine(check)}\n`).join('');
}
