/**
 * Migrations and constraints (SPEC §16): a migration that adds or changes the constraints of a
 * top-level field on a table that holds records carries a line
 * `-- entity-gen:check-constraints BOOK.pages {"type":"INTEGER","min":1}`; after running the
 * migration's SQL, the driver reads the stored values of that column, checks them as a write
 * would, and fails the migration listing the records that break the rules.
 */
import type { Issue } from './issues.js';
import { checkConstraints, type FieldConstraints } from './constraints.js';
import { toDate, toDateTime, toDecimal, toDouble, toInteger, toText } from './convert.js';
import type { TableDescriptor } from './driver.js';
import { MigrationError } from './migrations.js';

/** What one check line asks: the entity, the field, its type and its constraints. */
export interface ConstraintCheck {
  readonly entity: string;
  readonly field: string;
  readonly type: string;
  readonly rules: FieldConstraints;
}

const PREFIX = '-- entity-gen:check-constraints ';
const CHECK_LINE =
  /^-- entity-gen:check-constraints ([A-Za-z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*) (\{.*\})[ \t]*$/gm;

/** The line of a migration that asks for the check of `entity.field`. */
export function constraintCheckLine(check: ConstraintCheck): string {
  return `${PREFIX}${check.entity}.${check.field} ${JSON.stringify({ type: check.type, ...check.rules })}`;
}

/** The constraint checks a migration's SQL asks for (`constraintCheckLine`). */
export function constraintChecksOf(sql: string): ConstraintCheck[] {
  return [...sql.matchAll(CHECK_LINE)].map((match) => {
    const { type, ...rules } = JSON.parse(match[3]!) as { type: string } & FieldConstraints;
    return { entity: match[1]!, field: match[2]!, type, rules };
  });
}

/** At most this many violating records are listed. */
export const VIOLATIONS_LISTED = 20;

/**
 * The query reading the record id and the stored value of every record whose `check.field` is
 * set. The value comes back as SQLite stores it, or as PostgreSQL's JSON text of it (its exact
 * text for NUMERIC). Unqualified table names (the migration's own search path).
 */
export function storedValuesSql(
  dialect: 'sqlite' | 'postgres',
  tables: readonly TableDescriptor[],
  check: ConstraintCheck,
): string | undefined {
  const table = tables.find((t) => t.entity.toUpperCase() === check.entity.toUpperCase());
  const column = table?.columns.find((c) => c.name === check.field);
  if (table === undefined || column === undefined) return undefined;
  const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const text = (c: string): string =>
    dialect === 'sqlite' ? `CAST(${c} AS TEXT)` : `(${c})::TEXT`;
  const separator = `'${(table.keySeparator ?? '~').replaceAll("'", "''")}'`;
  const id = table.key.map((k) => text(q(k))).join(` || ${separator} || `) || `''`;
  const value =
    dialect === 'sqlite' || column.kind === 'decimal'
      ? q(column.name)
      : `to_json(${q(column.name)})::TEXT`;
  return `SELECT ${id}, ${dialect === 'postgres' && column.kind === 'decimal' ? text(value) : value} FROM ${q(table.table)} WHERE ${q(column.name)} IS NOT NULL ORDER BY 1`;
}

/** The stored value as a write would have given it (the canonical form of its type). */
function canonicalStored(
  stored: unknown,
  check: ConstraintCheck,
  dialect: 'sqlite' | 'postgres',
): unknown {
  const scratch: Issue[] = [];
  let value = stored;
  if (
    typeof value === 'string' &&
    (dialect === 'postgres' ? check.type !== 'DECIMAL' : check.type === 'ARRAY')
  ) {
    value = JSON.parse(value) as unknown;
  }
  switch (check.type) {
    case 'INTEGER':
      return toInteger(value, [], check.field, scratch);
    case 'DOUBLE':
      return toDouble(value, [], check.field, scratch);
    case 'DECIMAL':
      return toDecimal(typeof value === 'number' ? String(value) : value, [], check.field, scratch);
    case 'DATE':
      return toDate(value, [], check.field, scratch);
    case 'DATE_TIME':
      return toDateTime(value, [], check.field, scratch);
    case 'STRING':
      return toText(value, [], check.field, scratch);
    default:
      return value;
  }
}

/**
 * The records (id and message) whose stored value breaks the check's rules, from the rows of
 * `storedValuesSql`; at most `VIOLATIONS_LISTED` + 1.
 */
export function constraintViolations(
  rows: readonly (readonly unknown[])[],
  check: ConstraintCheck,
  dialect: 'sqlite' | 'postgres',
): { id: string; message: string }[] {
  const found: { id: string; message: string }[] = [];
  for (const [id, stored] of rows) {
    const issues: Issue[] = [];
    const value = canonicalStored(stored, check, dialect);
    if (value === undefined) continue;
    if (!checkConstraints(value, check.type, check.rules, check.entity, [check.field], issues)) {
      found.push({ id: String(id), message: issues[0]!.message });
      if (found.length > VIOLATIONS_LISTED) break;
    }
  }
  return found;
}

/** The error of a migration whose check found records that break the new constraints. */
export function constraintViolationsError(
  id: string,
  check: ConstraintCheck,
  violations: readonly { id: string; message: string }[],
): MigrationError {
  const listed = violations
    .slice(0, VIOLATIONS_LISTED)
    .map((violation) => `${check.entity} ${JSON.stringify(violation.id)}: ${violation.message}`);
  const more = violations.length > VIOLATIONS_LISTED ? '; and more' : '';
  return new MigrationError(
    'CONSTRAINT_VIOLATIONS',
    `Migration ${id} gives ${check.entity}.${check.field} constraints that stored records break: ` +
      `${listed.join('; ')}${more}. Fix those records, or relax the constraint and regenerate ` +
      `(docs/migrations.md)`,
    [id],
  );
}
