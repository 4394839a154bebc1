/**
 * Migrations and unique rules (SPEC §16): a migration that creates a unique index writes the line
 * `-- entity-gen:check-unique PRODUCT category,name` just before its `CREATE UNIQUE INDEX`. The
 * drivers run the migration's SQL in parts split at those lines; at each line they look for
 * stored records that share values of those fields and, when there are some, fail the migration
 * listing them (the index would not build), which changes nothing.
 */
import type { TableDescriptor } from './driver.js';
import { MigrationError } from './migrations.js';
import { decimalShadowColumn } from './sqlite/dialect.js';

/** What one check line asks: the entity and the fields that must hold distinct combinations. */
export interface UniqueCheck {
  readonly entity: string;
  readonly fields: readonly string[];
}

/** One part of a migration's SQL: statements to run, or a check to make before the rest. */
export type MigrationPart =
  | { readonly kind: 'sql'; readonly sql: string }
  | { readonly kind: 'check'; readonly check: UniqueCheck };

const PREFIX = '-- entity-gen:check-unique ';
const CHECK_LINE =
  /^-- entity-gen:check-unique ([A-Za-z][A-Za-z0-9_]*) ([A-Za-z_][A-Za-z0-9_]*(?:,[A-Za-z_][A-Za-z0-9_]*)*)[ \t]*$/m;

/** At most this many groups of records sharing values are listed. */
export const DUPLICATES_LISTED = 20;
/** At most this many record ids are named per group. */
const IDS_PER_GROUP = 5;

/** The line of a migration that asks for the check of a unique rule. */
export function uniqueCheckLine(check: UniqueCheck): string {
  return `${PREFIX}${check.entity} ${check.fields.join(',')}`;
}

/** A migration's SQL split at its check lines, in order (one `sql` part when it has none). */
export function migrationParts(sql: string): MigrationPart[] {
  const parts: MigrationPart[] = [];
  let rest = sql;
  for (;;) {
    const match = CHECK_LINE.exec(rest);
    if (match === null) break;
    const before = rest.slice(0, match.index);
    if (before.trim() !== '') parts.push({ kind: 'sql', sql: before });
    parts.push({ kind: 'check', check: { entity: match[1]!, fields: match[2]!.split(',') } });
    rest = rest.slice(match.index + match[0].length);
  }
  if (rest.trim() !== '') parts.push({ kind: 'sql', sql: rest });
  return parts;
}

/**
 * The query listing the combinations of `check.fields` that several stored records share (none
 * of the values absent): the values as text, how many records, and their ids (newline-separated,
 * in id order), at most `DUPLICATES_LISTED` + 1 rows. Unqualified table names.
 */
export function duplicatesSql(
  dialect: 'sqlite' | 'postgres',
  tables: readonly TableDescriptor[],
  check: UniqueCheck,
): string | undefined {
  const table = tables.find((t) => t.entity.toUpperCase() === check.entity.toUpperCase());
  if (table === undefined) return undefined;
  const columns = check.fields.map((field) => table.columns.find((c) => c.name === field));
  if (columns.some((column) => column === undefined)) return undefined;
  const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const text = (c: string): string =>
    dialect === 'sqlite' ? `CAST(${c} AS TEXT)` : `(${c})::TEXT`;
  const separator = `'${(table.keySeparator ?? '~').replaceAll("'", "''")}'`;
  const id = table.key.map((k) => text(q(k))).join(` || ${separator} || `) || `''`;
  // SQLite compares DECIMAL values by their shadow key (1.5 = 1.50), as its unique index does.
  const grouped = columns.map((column) =>
    dialect === 'sqlite' && column!.kind === 'decimal'
      ? q(decimalShadowColumn(column!.name))
      : q(column!.name),
  );
  const shown = columns.map((column) => `MIN(${text(q(column!.name))})`);
  const ids =
    dialect === 'sqlite'
      ? `(SELECT group_concat(id, char(10)) FROM (SELECT ${id} AS id FROM ${q(table.table)} AS d WHERE ${grouped
          .map((g) => `d.${g} = g.${g}`)
          .join(' AND ')} ORDER BY 1 LIMIT ${IDS_PER_GROUP}))`
      : `(SELECT string_agg(id, E'\\n' ORDER BY id COLLATE "C") FROM (SELECT ${id} AS id FROM ${q(table.table)} AS d WHERE ${grouped
          .map((g) => `d.${g} = g.${g}`)
          .join(' AND ')} ORDER BY 1 LIMIT ${IDS_PER_GROUP}) AS i)`;
  const notNull = grouped.map((g) => `${g} IS NOT NULL`).join(' AND ');
  return (
    `SELECT ${shown.join(', ')}, COUNT(*), ${ids} FROM (SELECT * FROM ${q(table.table)} WHERE ${notNull}) AS g ` +
    `GROUP BY ${grouped.map((g) => `g.${g}`).join(', ')} HAVING COUNT(*) > 1 ` +
    `ORDER BY ${shown.map((_, i) => String(i + 1)).join(', ')} LIMIT ${DUPLICATES_LISTED + 1}`
  );
}

/** The error of a migration whose check found records sharing values (`rows` of `duplicatesSql`). */
export function duplicateValuesError(
  id: string,
  check: UniqueCheck,
  rows: readonly (readonly unknown[])[],
): MigrationError {
  const width = check.fields.length;
  const listed = rows.slice(0, DUPLICATES_LISTED).map((row) => {
    const values = check.fields
      .map((field, i) => `${field} = ${JSON.stringify(String(row[i]))}`)
      .join(', ');
    const count = Number(row[width]);
    const ids = String(row[width + 1] ?? '')
      .split('\n')
      .map((record) => JSON.stringify(record));
    const more = count > ids.length ? ` and ${count - ids.length} more` : '';
    return `${values} is held by ${check.entity} ${ids.join(', ')}${more}`;
  });
  const more = rows.length > DUPLICATES_LISTED ? '; and more' : '';
  const rule =
    check.fields.length === 1 ? `field ${check.fields[0]}` : `fields (${check.fields.join(', ')})`;
  return new MigrationError(
    'DUPLICATE_VALUES',
    `Migration ${id} makes ${rule} of ${check.entity} unique, but stored records share values: ` +
      `${listed.join('; ')}${more}. Change or remove those records, or drop the unique rule and ` +
      `regenerate (docs/migrations.md)`,
    [id],
  );
}
