/**
 * The SQLite table layout: column types per kind, bookkeeping columns and tables, DECIMAL shadow
 * columns, the DDL of tables and indexes, and how records become bound parameters and back
 * (`TableLayout`).
 */
import type { ColumnDescriptor, ColumnKind, StoredFields, TableDescriptor } from '../driver.js';
import { recordTextSql, TextKind, type RecordShape, type TextColumn } from './record-text.js';
import { ciIndexName, compositeIndexes, fieldIndexName, uniqueIndexes } from '../indexes.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { sameJsonValue } from '../json-equal.js';
import { requireDecimalSortKey } from './decimal-key.js';
import { decimalShadowColumn, FOLD_FUNCTION } from './dialect.js';
import { DELETED_AT_COLUMN, DELETED_BY_COLUMN } from '../soft-delete.js';

/** Bookkeeping columns present in every entity table. */
export const CREATED_COLUMN = '_eg_created_ms';
export const UPDATED_COLUMN = '_eg_updated_ms';
export const VERSION_COLUMN = '_eg_version';
/** Table holding the last create/update/delete time of each entity. */
export const ACTIVITY_TABLE = '_eg_activity';
/** Table holding the service's generated secrets (the key that signs list cursors). */
export const SECRETS_TABLE = '_eg_secrets';
/** The last value handed out by each `generated: sequence` key: `(name, value)`, name `<table>.<column>`. */
export const SEQUENCES_TABLE = '_eg_sequences';

/** The name of a table's sequence in `SEQUENCES_TABLE`. */
export function sequenceName(table: TableDescriptor): string {
  return `${table.table}.${table.sequence ?? ''}`;
}
/** The outbox: one row per committed change (SPEC §9). */
export const EVENTS_TABLE = '_eg_events';

/**
 * SQL type of each column kind. DECIMAL keeps its exact text; its numeric order lives in a
 * hidden `_eg_dec_<field>` TEXT column (see `decimal-key.ts`). DATE and DATE_TIME are canonical
 * ISO text, whose byte order is chronological. JSON is JSON text.
 */
export const SQLITE_COLUMN_TYPES: Readonly<Record<ColumnKind, string>> = {
  text: 'TEXT',
  integer: 'INTEGER',
  double: 'REAL',
  decimal: 'TEXT',
  boolean: 'INTEGER',
  date: 'TEXT',
  datetime: 'TEXT',
  json: 'TEXT',
};

type Encoder = (value: unknown) => unknown;
type Decoder = (value: unknown) => unknown;

/** The columns a list of `fields=` reads, and how its rows become texts and full rows. */
export interface Projection {
  /** The select list. */
  readonly select: string;
  /** The shape of its rows, writing the selected fields only. */
  readonly shape: RecordShape;
  /** A row of `select` as the row of all fields (`TableLayout.textSelectList`'s), unread NULL. */
  readonly widen: (row: readonly unknown[]) => unknown[];
}

/** Everything derived once per table: DDL, statement texts and value codecs. */
export class TableLayout {
  readonly tableSql: string;
  readonly columns: readonly ColumnDescriptor[];
  /** Field columns then shadow columns, as written by INSERT and UPDATE. */
  readonly writeColumns: readonly string[];
  /** Position of each key column in `columns`. */
  readonly keyIndexes: readonly number[];
  readonly keyEncoders: readonly Encoder[];
  private readonly encoders: readonly Encoder[];
  private readonly decoders: readonly Decoder[];
  /** For each shadow column, the index of its DECIMAL field. */
  private readonly shadowSources: readonly number[];
  /** Where `differingColumns` gathers its answer. */
  private readonly scratch: number[] = [];
  /** For each shadow column, `table.field` of its DECIMAL field (named by a failing value). */
  private readonly shadowLabels: readonly string[];
  /** Field names that cannot be assigned with `record[name] = …`. */
  private readonly unsafeNames: readonly boolean[];
  /** Columns that are not part of a record (`ColumnDescriptor.fixed`). */
  private readonly hidden: readonly boolean[];
  /** How each record column is written as JSON text (`recordText`). */
  readonly shape: RecordShape;
  /** `textSql()`, made once. */
  private recordText: string | undefined;
  /**
   * Whether a record's text may hold `},{"` other than at the end of a string value (a JSON
   * column, or a field name starting with a comma or a brace): see `lastRecordStart`.
   */
  readonly nestedText: boolean;

  constructor(readonly descriptor: TableDescriptor) {
    this.tableSql = quoteIdentifier(descriptor.table);
    this.columns = descriptor.columns;
    const seen = new Set<string>();
    const claim = (name: string, what: string): void => {
      const folded = name.toLowerCase(); // SQLite column names are case-insensitive
      if (seen.has(folded)) {
        throw new Error(
          `Table ${descriptor.table}: ${what} ${JSON.stringify(name)} clashes with another column ` +
            `(SQLite column names are case-insensitive; ${CREATED_COLUMN}, ${UPDATED_COLUMN}, ` +
            `${VERSION_COLUMN} and _eg_dec_* are reserved)`,
        );
      }
      seen.add(folded);
    };
    for (const name of [CREATED_COLUMN, UPDATED_COLUMN, VERSION_COLUMN, ...this.markColumns()])
      claim(name, 'column');
    for (const column of this.columns) claim(column.name, 'field');
    const shadowSources: number[] = [];
    this.columns.forEach((column, index) => {
      if (column.kind === 'decimal') {
        claim(decimalShadowColumn(column.name), 'shadow column');
        shadowSources.push(index);
      }
    });
    this.shadowSources = shadowSources;
    this.shadowLabels = shadowSources.map(
      (index) => `${descriptor.table}.${this.columns[index]!.name}`,
    );
    this.writeColumns = [
      ...this.columns.map((c) => c.name),
      ...shadowSources.map((i) => decimalShadowColumn(this.columns[i]!.name)),
    ];
    if (descriptor.key.length === 0) {
      throw new Error(`Table ${descriptor.table} has no key columns`);
    }
    this.keyIndexes = descriptor.key.map((name) => {
      const index = this.columns.findIndex((c) => c.name === name);
      if (index < 0)
        throw new Error(`Table ${descriptor.table}: key column ${name} is not a field`);
      return index;
    });
    this.encoders = this.columns.map((c) => encoderFor(descriptor.table, c));
    this.decoders = this.columns.map((c) => decoderFor(c.kind));
    this.keyEncoders = this.keyIndexes.map((i) => keyEncoderFor(this.columns[i]!.kind));
    this.unsafeNames = this.columns.map((c) => c.name === '__proto__');
    this.hidden = this.columns.map((c) => c.fixed !== undefined);
    this.shape = {
      keys: this.columns.map((c) => `${JSON.stringify(c.name)}:`),
      kinds: this.columns.map((c) =>
        c.fixed !== undefined
          ? TextKind.Hidden
          : c.kind === 'boolean'
            ? TextKind.Boolean
            : c.kind === 'json'
              ? TextKind.Json
              : TextKind.Plain,
      ),
    };
    this.nestedText = this.columns.some(
      (c, index) =>
        !this.hidden[index] &&
        (c.kind === 'json' || c.name.startsWith(',') || c.name.startsWith('}')),
    );
  }

  /** `CREATE TABLE IF NOT EXISTS` for the table. */
  createTableSql(): string {
    const { descriptor } = this;
    const keys = new Set(descriptor.key);
    const definitions = this.columns.map((c) => {
      const notNull = c.required || keys.has(c.name) ? ' NOT NULL' : '';
      return `${quoteIdentifier(c.name)} ${SQLITE_COLUMN_TYPES[c.kind]}${notNull}`;
    });
    for (const index of this.shadowSources) {
      const c = this.columns[index]!;
      const notNull = c.required || keys.has(c.name) ? ' NOT NULL' : '';
      definitions.push(`${quoteIdentifier(decimalShadowColumn(c.name))} TEXT${notNull}`);
    }
    definitions.push(
      `${quoteIdentifier(CREATED_COLUMN)} INTEGER NOT NULL`,
      `${quoteIdentifier(UPDATED_COLUMN)} INTEGER NOT NULL`,
      `${quoteIdentifier(VERSION_COLUMN)} INTEGER NOT NULL`,
      ...(descriptor.softDelete === true
        ? [
            `${quoteIdentifier(DELETED_AT_COLUMN)} INTEGER`,
            `${quoteIdentifier(DELETED_BY_COLUMN)} TEXT`,
          ]
        : []),
      `PRIMARY KEY (${descriptor.key.map(quoteIdentifier).join(', ')})`,
    );
    return `CREATE TABLE IF NOT EXISTS ${this.tableSql} (\n  ${definitions.join(',\n  ')}\n) WITHOUT ROWID`;
  }

  /**
   * The index of every indexed column but JSON ones (no query this driver builds can use them)
   * and the leading key column (the primary key covers it); a DECIMAL field's index covers its
   * shadow column.
   */
  indexes(): { field: string; name: string; column: string; ci?: boolean }[] {
    const { descriptor } = this;
    return [
      ...this.columns
        .filter((c) => c.indexed && c.kind !== 'json' && descriptor.key[0] !== c.name)
        .map((c) => ({
          field: c.name,
          name: indexName(descriptor.table, c.name),
          column: c.kind === 'decimal' ? decimalShadowColumn(c.name) : c.name,
        })),
      // `index: ci`: on the folded text, the expression the case-insensitive operators compare.
      ...this.columns
        .filter((c) => c.ciIndexed === true && c.kind === 'text')
        .map((c) => ({
          field: c.name,
          name: ciIndexName(descriptor.table, c.name),
          column: c.name,
          ci: true,
        })),
    ];
  }

  /**
   * The declared composite indexes with their `CREATE INDEX IF NOT EXISTS`: DECIMAL columns
   * through their shadow column, descending columns `DESC` (SQLite orders NULLs first ascending
   * and last descending, as the listing does).
   */
  compositeIndexes(): { name: string; fields: readonly string[]; sql: string; unique: boolean }[] {
    const shadowed = (column: ColumnDescriptor): string =>
      quoteIdentifier(column.kind === 'decimal' ? decimalShadowColumn(column.name) : column.name);
    return [
      ...compositeIndexes(this.descriptor).map((index) => {
        const columns = index.columns.map(
          ({ column, descending }) => `${shadowed(column)}${descending ? ' DESC' : ''}`,
        );
        return {
          name: index.name,
          fields: index.fields,
          sql: `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(index.name)} ON ${this.tableSql} (${columns.join(', ')})`,
          unique: false,
        };
      }),
      // Unique rules (SPEC §16): a DECIMAL column through its shadow key, so 1.5 and 1.50 collide.
      ...uniqueIndexes(this.descriptor).map((index) => ({
        name: index.name,
        fields: index.columns.map((column) => column.name),
        sql: `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdentifier(index.name)} ON ${this.tableSql} (${index.columns.map(shadowed).join(', ')})`,
        unique: true,
      })),
    ];
  }

  /** `CREATE INDEX IF NOT EXISTS` for every index of `indexes()`, then the composite indexes. */
  createIndexSql(): string[] {
    return [
      ...this.indexes().map(
        (index) =>
          `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(index.name)} ` +
          `ON ${this.tableSql} (${
            index.ci === true
              ? `${FOLD_FUNCTION}(${quoteIdentifier(index.column)})`
              : quoteIdentifier(index.column)
          })`,
      ),
      ...this.compositeIndexes().map((index) => index.sql),
    ];
  }

  /** Every column the table must have, for checking a table created by an older schema. */
  expectedColumns(): string[] {
    return [
      ...this.writeColumns,
      CREATED_COLUMN,
      UPDATED_COLUMN,
      VERSION_COLUMN,
      ...this.markColumns(),
    ];
  }

  /** The columns that mark a soft-deleted row (SPEC §13), for a `softDelete` table. */
  markColumns(): string[] {
    return this.descriptor.softDelete === true ? [DELETED_AT_COLUMN, DELETED_BY_COLUMN] : [];
  }

  /**
   * Select list of the pages written as text (`listTexts`): the fields in declared order only. The
   * version and times are not part of a listed record's text, and not reading them spares SQLite
   * and better-sqlite3 three values per row (a fifth of a five-field page's statement).
   */
  textSelectList(): string {
    return this.columns.map((c) => `${this.tableSql}.${quoteIdentifier(c.name)}`).join(', ');
  }

  /**
   * The SQL expression of a record's JSON text, as `recordText` writes it from the row of
   * `textSelectList` (`recordTextSql`): for pages SQLite writes whole (`SqliteDriver.listTexts`).
   */
  textSql(): string {
    if (this.recordText === undefined) {
      const keys = new Set(this.descriptor.key);
      const columns: TextColumn[] = [];
      this.columns.forEach((column, index) => {
        if (this.hidden[index]) return;
        columns.push({
          ref: `${this.tableSql}.${quoteIdentifier(column.name)}`,
          key: this.shape.keys[index]!,
          kind: this.shape.kinds[index]!,
          storage:
            column.kind === 'integer' ? 'integer' : column.kind === 'double' ? 'double' : 'text',
          notNull: keys.has(column.name),
        });
      });
      this.recordText = recordTextSql(columns);
    }
    return this.recordText;
  }

  /** Select list: fields in declared order, then version, created, updated. */
  selectList(): string {
    return [...this.columns.map((c) => c.name), VERSION_COLUMN, CREATED_COLUMN, UPDATED_COLUMN]
      .map((c) => `${this.tableSql}.${quoteIdentifier(c)}`)
      .join(', ');
  }

  /**
   * What a list of `fields=` reads: the columns of `needed` (the selected fields, the order's and
   * the key's) in declared order; the shape writing the fields of `shown` from such a row; and how
   * to widen a row to the row of all fields `decode` reads (the others NULL). Selecting nothing
   * else spares SQLite and better-sqlite3 a value per unread column and row (selecting them as
   * `NULL` cost a fifth of a page's statement with 20 columns).
   */
  projection(needed: ReadonlySet<string>, shown: ReadonlySet<string>): Projection {
    const picked: number[] = [];
    this.columns.forEach((column, index) => {
      if (needed.has(column.name)) picked.push(index);
    });
    const width = this.columns.length;
    return {
      select: picked
        .map((index) => `${this.tableSql}.${quoteIdentifier(this.columns[index]!.name)}`)
        .join(', '),
      shape: {
        keys: picked.map((index) => this.shape.keys[index]!),
        kinds: picked.map((index) =>
          shown.has(this.columns[index]!.name) ? this.shape.kinds[index]! : TextKind.Hidden,
        ),
      },
      widen: (row) => {
        const full: unknown[] = new Array<unknown>(width).fill(null);
        for (let i = 0; i < picked.length; i++) full[picked[i]!] = row[i];
        return full;
      },
    };
  }

  /** `"k1" = ? AND "k2" = ?` */
  keyCondition(): string {
    return this.descriptor.key.map((k) => `${quoteIdentifier(k)} = ?`).join(' AND ');
  }

  /**
   * Writes the parameters of the write columns of a record (fields then shadow keys) into
   * `into` from position `at`; returns the position after them.
   */
  writeParams(record: StoredFields, into: unknown[], at = 0): number {
    const { columns, encoders, shadowSources, shadowLabels } = this;
    let p = at;
    for (let i = 0; i < columns.length; i++) {
      into[p++] = encoders[i]!(record[columns[i]!.name]);
    }
    for (let s = 0; s < shadowSources.length; s++) {
      const value = record[columns[shadowSources[s]!]!.name];
      into[p++] =
        value === undefined || value === null
          ? null
          : requireDecimalSortKey(value, shadowLabels[s]!);
    }
    return p;
  }

  /**
   * The write columns (positions of `writeParams`) whose value for `previous` differs from
   * `current`, the parameters of the record written over it. A shadow key counts as differing
   * when its DECIMAL column does (then written again even if `1.5` became `1.50`: the row is the
   * same), so no shadow key of `previous` is computed.
   */
  differingColumns(previous: StoredFields, current: readonly unknown[]): number[] {
    const { columns, encoders, shadowSources } = this;
    const n = columns.length;
    // Gathered in a scratch list and copied at its size (a row differs in a column or two; a
    // list grown by push would keep room for sixteen, for each of 10 000 rows of an upsert).
    const differ = this.scratch;
    differ.length = 0;
    for (let i = 0; i < n; i++)
      if (encoders[i]!(previous[columns[i]!.name]) !== current[i]) differ.push(i);
    for (let s = 0; s < shadowSources.length; s++)
      if (differ.includes(shadowSources[s]!)) differ.push(n + s);
    return differ.slice();
  }

  /**
   * The write columns in which `row` (a stored row, select list order) and `current` (the
   * parameters of a record written over it) differ, ascending, leaving out the field columns
   * `skip` marks; `undefined` when they hold the same values. JSON compares by value, whatever the
   * order of its objects' properties (as the record-by-record upsert compares records); a shadow
   * key counts as differing when its DECIMAL column does.
   */
  changedColumns(
    row: readonly unknown[],
    current: readonly unknown[],
    skip: readonly boolean[],
  ): number[] | undefined {
    const { columns, shadowSources } = this;
    const n = columns.length;
    const differ = this.scratch;
    differ.length = 0;
    for (let i = 0; i < n; i++) {
      const stored = row[i];
      const value = current[i];
      if (stored === value || skip[i]) continue;
      if (
        columns[i]!.kind === 'json' &&
        typeof stored === 'string' &&
        typeof value === 'string' &&
        sameJsonValue(JSON.parse(stored), JSON.parse(value))
      )
        continue;
      differ.push(i);
    }
    if (differ.length === 0) return undefined;
    for (let s = 0; s < shadowSources.length; s++)
      if (differ.includes(shadowSources[s]!)) differ.push(n + s);
    return differ.slice();
  }

  /**
   * `record` with the values of `row` (a stored row, select list order) in the field columns
   * `columns`: a field NULL there is left out, as `decode` does.
   */
  withStored(
    record: StoredFields,
    row: readonly unknown[],
    columns: readonly number[],
  ): StoredFields {
    if (columns.length === 0) return record;
    const next: Record<string, unknown> = { ...record };
    for (const i of columns) {
      const name = this.columns[i]!.name;
      const value = row[i];
      if (value === null || value === undefined) delete next[name];
      else
        Object.defineProperty(next, name, {
          value: this.decoders[i]!(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return next;
  }

  /** Encoded key values, checked for arity, written into `into` from `at` (by default, its end). */
  keyParams(key: readonly unknown[], into: unknown[], at = into.length): void {
    const { keyEncoders } = this;
    if (key.length !== keyEncoders.length) {
      throw new Error(
        `Table ${this.descriptor.table}: expected ${keyEncoders.length} key values, got ${key.length}`,
      );
    }
    for (let i = 0; i < keyEncoders.length; i++) into[at + i] = keyEncoders[i]!(key[i]);
  }

  /** A record from a raw row (fields in declared order; NULL columns omitted). */
  decode(row: readonly unknown[]): Record<string, unknown> {
    const { columns, decoders, unsafeNames, hidden } = this;
    const record: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const value = row[i];
      if (value === null || value === undefined || hidden[i]) continue;
      if (unsafeNames[i]) {
        Object.defineProperty(record, columns[i]!.name, {
          value: decoders[i]!(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        record[columns[i]!.name] = decoders[i]!(value);
      }
    }
    return record;
  }
}

/** Name of the index of an indexed field. */
export function indexName(table: string, column: string): string {
  return fieldIndexName(table, column);
}

function keyEncoderFor(kind: ColumnKind): Encoder {
  if (kind === 'boolean') return (v) => (v === true ? 1 : v === false ? 0 : v);
  return (v) => v;
}

function encoderFor(table: string, column: ColumnDescriptor): Encoder {
  const what = `${table}.${column.name}`;
  const { fixed } = column;
  if (fixed !== undefined) return () => fixed;
  switch (column.kind) {
    case 'boolean':
      return (v) => {
        if (v === undefined || v === null) return null;
        if (typeof v !== 'boolean')
          throw new TypeError(`${what}: expected a boolean, got ${typeof v}`);
        return v ? 1 : 0;
      };
    case 'json':
      return (v) => (v === undefined || v === null ? null : JSON.stringify(v));
    case 'decimal':
      return (v) => (v === undefined || v === null ? null : typeof v === 'number' ? String(v) : v);
    default:
      return (v) => (v === undefined ? null : v);
  }
}

function decoderFor(kind: ColumnKind): Decoder {
  switch (kind) {
    case 'boolean':
      return (v) => v !== 0 && v !== 0n;
    case 'json':
      return (v) => JSON.parse(v as string) as unknown;
    default:
      return (v) => v;
  }
}
