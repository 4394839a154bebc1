/**
 * Migrations and references (SPEC §11): a reference that gains `onDelete` (on a table that
 * already holds records) gets a check in the migration — the driver lists the stored values that
 * name no record and fails the migration — and, with `--clear-dangling-references`, the SQL that
 * clears them first (an optional field emptied, ARRAY elements removed; a required field cannot
 * be cleared, so its dangling values still fail the check).
 */
import {
  referenceCheckLine,
  type ReferenceDescriptor,
  type TableDescriptor,
} from '@entity-gen/runtime/ddl';
import type { SchemaModel } from '../model/types.js';
import type { EntityDiff, MigrationStep } from './diff.js';

type Dialect = 'sqlite' | 'postgres';

/** A reference that gains `onDelete` on a table that already exists. */
export interface ReferenceCheck {
  readonly source: TableDescriptor;
  readonly reference: ReferenceDescriptor;
  readonly target: TableDescriptor;
  readonly required: boolean;
}

/** The references of `diffs` that gain `onDelete` on tables kept from the previous schema. */
export function referenceChecks(
  diffs: readonly EntityDiff[],
  model: SchemaModel,
): ReferenceCheck[] {
  const checks: ReferenceCheck[] = [];
  for (const diff of diffs) {
    if (diff.kind !== 'alter') continue;
    const before = new Map(
      (diff.old.table.references ?? []).map((reference) => [reference.field, reference]),
    );
    const renamed = new Map(diff.kept.map((kept) => [kept.new.name, kept.old.name]));
    for (const reference of diff.new.table.references ?? []) {
      const oldName = renamed.get(reference.field);
      // A field added with onDelete starts empty (or with its default, which is checked too).
      const added = diff.added.find((field) => field.name === reference.field);
      if (oldName === undefined && (added === undefined || added.default === undefined)) continue;
      const previous = oldName === undefined ? undefined : before.get(oldName);
      if (
        previous !== undefined &&
        previous.entity.toUpperCase() === reference.entity.toUpperCase()
      )
        continue;
      const target = model.entities.find(
        (entity) => entity.name.toUpperCase() === reference.entity.toUpperCase(),
      );
      if (target === undefined) continue;
      const field = diff.new.fields.find((candidate) => candidate.name === reference.field);
      checks.push({
        source: diff.new.table,
        reference,
        target: target.table,
        required: field?.required === true || field?.isKey === true,
      });
    }
  }
  return checks;
}

/** The plan's steps for the checks. */
export function referenceSteps(checks: readonly ReferenceCheck[], clear: boolean): MigrationStep[] {
  return checks.map((check) => {
    const name = `${check.source.entity}.${check.reference.field}`;
    const clears = clear && !check.required;
    return {
      description: clears
        ? `Clear the values of ${name} that name no ${check.reference.entity} record, then check it`
        : `Check that every value of ${name} names a ${check.reference.entity} record (onDelete: ${check.reference.onDelete})`,
      destructive: clears,
    };
  });
}

/** The SQL of the checks for one dialect: the clearing statements (when asked), the check lines. */
export function referenceSql(
  dialect: Dialect,
  checks: readonly ReferenceCheck[],
  clear: boolean,
): string {
  return checks
    .map((check) => {
      const statements = clear && !check.required ? clearStatements(dialect, check) : [];
      return [
        ...statements.map((statement) => `${statement};\n`),
        `${referenceCheckLine(check.source.entity, check.reference.field)}\n`,
      ].join('\n');
    })
    .join('\n');
}

const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function clearStatements(dialect: Dialect, check: ReferenceCheck): string[] {
  const { source, reference, target } = check;
  const text = (column: string): string =>
    dialect === 'sqlite' ? `CAST(${column} AS TEXT)` : `(${column})::TEXT`;
  const sep = `'${(target.keySeparator ?? '~').replaceAll("'", "''")}'`;
  const targetId = target.key.map((k) => text(`t.${q(k)}`)).join(` || ${sep} || `);
  const table = q(source.table);
  const column = `${table}.${q(reference.field)}`;
  const exists = (value: string): string =>
    `EXISTS (SELECT 1 FROM ${q(target.table)} AS t WHERE ${targetId} = ${value})`;
  if (!reference.array) {
    return [
      `UPDATE ${table} SET ${q(reference.field)} = NULL WHERE ${column} IS NOT NULL AND NOT ${exists(text(column))}`,
    ];
  }
  if (dialect === 'sqlite') {
    const element = text('e.value');
    return [
      `UPDATE ${table} SET ${q(reference.field)} = (SELECT json_group_array(e.value) FROM json_each(${column}) AS e WHERE ${exists(element)}) ` +
        `WHERE EXISTS (SELECT 1 FROM json_each(${column}) AS e WHERE NOT ${exists(element)})`,
    ];
  }
  const element = `(e.value #>> '{}')`;
  return [
    `UPDATE ${table} SET ${q(reference.field)} = COALESCE((SELECT jsonb_agg(e.value ORDER BY e.n) FROM jsonb_array_elements(${column}) WITH ORDINALITY AS e(value, n) WHERE ${exists(element)}), '[]'::JSONB) ` +
      `WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(${column}) AS e(value) WHERE NOT ${exists(element)})`,
  ];
}
