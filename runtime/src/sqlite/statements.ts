/**
 * The prepared statements of the SQLite driver: the shared ones (activity, ping) and, per table,
 * read by key, insert, update, delete and the write transactions that also touch `_eg_activity`
 * and append change events to the outbox.
 */
import type Database from 'better-sqlite3';
import type { KeyValues, StoredChange, StoredFields, TableDescriptor } from '../driver.js';
import { DuplicateKeyError } from '../errors.js';
import { ChangeDrafter, type ChangeDraft } from '../events/change.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { DELETED_AT_COLUMN, DELETED_BY_COLUMN } from '../soft-delete.js';
import { decimalShadowColumn } from './dialect.js';
import { isPrimaryKeyViolation, uniqueViolation } from './errors.js';
import type { Written } from './group-commit.js';
import type { SqliteHistory } from './history.js';
import type { SqliteOutbox } from './outbox.js';
import {
  ACTIVITY_TABLE,
  CREATED_COLUMN,
  SEQUENCES_TABLE,
  type TableLayout,
  UPDATED_COLUMN,
  VERSION_COLUMN,
} from './schema.js';

export type Statement = Database.Statement<unknown[], unknown>;
export type Row = unknown[];

/** Statements every table shares. */
export interface SharedStatements {
  readonly ping: Statement;
  readonly activity: Statement;
  readonly touchCreate: Statement;
  readonly touchUpdate: Statement;
  readonly touchDelete: Statement;
}

/** Prepared statements of one table. */
export interface TableState {
  readonly layout: TableLayout;
  readonly get: Statement;
  /**
   * Reads the live rows of the keys of a JSON array at once (a table of one key column, text or
   * integer, only), with the position of the key column in a row and the type its values have in
   * JavaScript.
   */
  readonly getMany:
    | {
        readonly statement: Statement;
        readonly keyColumn: number;
        readonly keyType: 'string' | 'number';
      }
    | undefined;
  readonly insert: Statement;
  readonly update: Statement;
  /** Deletes (a soft delete on a `softDelete` table: `now, by, now` before the key). */
  readonly delete: Statement;
  readonly deleteVersion: Statement;
  /** Removes the row, deleted or not; the same as `delete` unless the table is `softDelete`. */
  readonly purge: Statement;
  readonly purgeVersion: Statement;
  /** A soft-deleted row with its mark (`softDelete` tables only). */
  readonly getDeleted: Statement | undefined;
  /** Clears the mark of a soft-deleted row (`now` before the key; `softDelete` tables only). */
  readonly restore: Statement | undefined;
  readonly insertMany: Database.Transaction<
    (records: readonly StoredFields[], now: number, by: string | null) => StoredChange[]
  >;
  readonly updateOne: Database.Transaction<
    (params: unknown[], now: number, change: PendingUpdate) => Written<number>
  >;
  /**
   * Updates every record (`params`: each one's statement parameters; `changed`: the write
   * columns that differ from the row as read, if known) with one activity touch and one append
   * of all their changes; throws `NOT_ALL_UPDATED` (writing nothing) when one of them
   * has another version.
   */
  readonly updateMany: Database.Transaction<
    (
      params: readonly unknown[][],
      now: number,
      changes: readonly PendingUpdate[],
      changed: readonly (readonly number[] | undefined)[],
    ) => Written<number[]>
  >;
  /**
   * The upsert of a list in replace mode (`replaceMany`), with one activity touch per kind of
   * write and one append of all their changes, in the records' order; throws `NOT_REPLACED`
   * (writing nothing) when a record breaks a unique rule.
   */
  readonly replaceMany: Database.Transaction<
    (records: readonly StoredFields[], now: number, plan: ReplacePlan) => Written<ReplacedRows>
  >;
  readonly deleteOne: Database.Transaction<
    (
      statement: Statement,
      params: unknown[],
      now: number,
      how: DeleteHow,
    ) => Written<Row | undefined>
  >;
  readonly restoreOne: Database.Transaction<
    (params: unknown[], now: number, by: string | null) => Written<Row | undefined>
  >;
  /** Takes `count` values of the table's sequence and returns the last one (`generated: sequence`). */
  readonly takeSequence: Statement | undefined;
}

/** How `replaceMany` writes over a stored row. */
export interface ReplacePlan {
  /** Field columns (positions in `columns`) an update leaves as stored: neither written nor compared. */
  readonly keep: readonly number[];
  /** Field columns written but not compared. */
  readonly stamped: readonly number[];
  /** The subject of the caller. */
  readonly by: string | null;
}

/** `ReplacedRows.fates`: the key was free and the record was inserted. */
export const REPLACED_CREATED = 0;
/** `ReplacedRows.fates`: the stored row differed and was written over. */
export const REPLACED_UPDATED = 1;
/** `ReplacedRows.fates`: the stored row held the same values; nothing was written. */
export const REPLACED_UNCHANGED = 2;

/** What `replaceMany` did, record by record (positions as the records'). */
export interface ReplacedRows {
  /** `REPLACED_CREATED`, `REPLACED_UPDATED` or `REPLACED_UNCHANGED`. */
  readonly fates: Uint8Array;
  /** The version each record has now. */
  readonly versions: Float64Array;
  /** When each record was created. */
  readonly createdAt: Float64Array;
  /** The stored rows (select list order) of the records left unchanged, by position. */
  readonly unchanged: Map<number, Row>;
  /** The records as stored of those updated whose kept fields differ from the given ones. */
  readonly stored: Map<number, StoredFields>;
}

/** What a delete does (SPEC §13): remove the row, mark it deleted, or purge it. */
export interface DeleteHow {
  readonly op: 'deleted' | 'purged';
  readonly soft: boolean;
  /** The caller's subject, for the soft deletes of the cascade. */
  readonly by: string | null;
}

/**
 * What the write transactions need of the integrity of references (SPEC §11; references.ts
 * implements it): the checks of written values and the cascades of deletes and renames.
 */
export interface WriteReferences {
  checks(descriptor: TableDescriptor): boolean;
  referenced(descriptor: TableDescriptor): boolean;
  missing(descriptor: TableDescriptor, records: readonly StoredFields[]): Error | undefined;
  afterDelete(
    descriptor: TableDescriptor,
    record: StoredFields,
    now: number,
    by: string | null,
  ): ChangeDraft[];
  afterRename(
    descriptor: TableDescriptor,
    oldKey: KeyValues,
    record: StoredFields,
    now: number,
  ): ChangeDraft[];
}

/** What `update` stores, for its change events. */
export interface PendingUpdate {
  readonly key: KeyValues;
  readonly record: StoredFields;
  /** The key as bound parameters, to read the record a rename deletes. */
  readonly keyParams: readonly unknown[];
  /** The subject of the caller (history). */
  readonly by: string | null;
}

/** The most statements of a table updating some columns only (`updateMany`). */
const PARTIAL_UPDATES = 32;

/** Thrown inside `updateMany` when a record has another version than expected (rolls it back). */
export const NOT_ALL_UPDATED = new Error('SQLite driver: a record of the update changed meanwhile');

/** Thrown inside `replaceMany` when a record breaks a unique rule (rolls it back). */
export const NOT_REPLACED = new Error('SQLite driver: a record of the upsert breaks a unique rule');

/** Creates the statements every table shares (activity, ping) on the connection. */
export function prepareShared(db: Database.Database): SharedStatements {
  const activity = quoteIdentifier(ACTIVITY_TABLE);
  const touch = (column: string): Statement =>
    db.prepare(
      `INSERT INTO ${activity} (entity, ${column}) VALUES (?, ?) ` +
        `ON CONFLICT (entity) DO UPDATE SET ${column} = ` +
        `max(coalesce(${column}, excluded.${column}), excluded.${column})`,
    );
  return {
    ping: db.prepare('SELECT 1'),
    activity: db
      .prepare(`SELECT entity, last_create_ms, last_update_ms, last_delete_ms FROM ${activity}`)
      .raw(true),
    touchCreate: touch('last_create_ms'),
    touchUpdate: touch('last_update_ms'),
    touchDelete: touch('last_delete_ms'),
  };
}

/**
 * Prepares the statements and write transactions of one table. `events()` tells whether writes
 * append change events to `outbox` (read at each write, like `OpenOptions.events`).
 */
export function prepareTable(
  db: Database.Database,
  layout: TableLayout,
  shared: SharedStatements,
  outbox: SqliteOutbox,
  history: SqliteHistory,
  events: () => boolean,
  references: () => WriteReferences | undefined = () => undefined,
): TableState {
  const { tableSql, descriptor } = layout;
  const entity = descriptor.entity;
  const drafter = new ChangeDrafter(descriptor);
  /**
   * Appends the changes of a write by `by`, inside its transaction: to the outbox (none when
   * events are off) and, for the entities that keep it, to the history.
   */
  const append = (now: number, by: string | null, drafts: () => ChangeDraft[]): StoredChange[] => {
    const keep = history.entities.size > 0;
    if (!keep && !events()) return [];
    const list = keep ? history.append(drafts(), now, by) : drafts();
    return events() ? outbox.append(list, now) : [];
  };
  /** Whether writes need their drafts (a rename reads the record it deletes for them). */
  const drafting = (): boolean => events() || history.entities.size > 0;
  const select = layout.selectList();
  const where = layout.keyCondition();
  const writeColumns = layout.writeColumns.map(quoteIdentifier);
  const version = quoteIdentifier(VERSION_COLUMN);
  const updated = quoteIdentifier(UPDATED_COLUMN);
  const created = quoteIdentifier(CREATED_COLUMN);
  const returning = select.replaceAll(`${tableSql}.`, '');

  const soft = descriptor.softDelete === true;
  const deletedAt = quoteIdentifier(DELETED_AT_COLUMN);
  const deletedBy = quoteIdentifier(DELETED_BY_COLUMN);
  const live = soft ? ` AND ${deletedAt} IS NULL` : '';
  const get = db.prepare(`SELECT ${select} FROM ${tableSql} WHERE ${where}${live}`).raw(true);
  const keyColumn = layout.columns.findIndex((column) => column.name === descriptor.key[0]);
  const keyKind = layout.columns[keyColumn]?.kind;
  const getMany =
    descriptor.key.length === 1 && (keyKind === 'text' || keyKind === 'integer')
      ? {
          statement: db
            .prepare(
              // The array's elements drive the join (CROSS JOIN keeps them the outer loop): one
              // search of the key per element, in one statement however many keys there are
              // (about 15 % faster than `IN` lists of 100 parameters).
              `SELECT ${select} FROM json_each(?) AS ${quoteIdentifier('_eg_keys')} CROSS JOIN ${tableSql} ` +
                `ON ${tableSql}.${quoteIdentifier(descriptor.key[0]!)} = ${quoteIdentifier('_eg_keys')}.value${live}`,
            )
            .raw(true),
          keyColumn,
          keyType: keyKind === 'text' ? ('string' as const) : ('number' as const),
        }
      : undefined;
  const insert = db.prepare(
    `INSERT INTO ${tableSql} (${[...writeColumns, created, updated, version].join(', ')}) ` +
      `VALUES (${writeColumns.map(() => '?').join(', ')}, ?, ?, 1)`,
  );
  const update = db.prepare(
    `UPDATE ${tableSql} SET ${writeColumns.map((c) => `${c} = ?`).join(', ')}, ` +
      `${updated} = ?, ${version} = ${version} + 1 WHERE ${where} AND ${version} = ?`,
  );
  // An update that keeps the key leaves its columns out: SQLite then rewrites the row in place
  // instead of moving it (deleting and inserting it again in the table's b-tree).
  const keyNames = new Set(descriptor.key.flatMap((name) => [name, decimalShadowColumn(name)]));
  const kept = layout.writeColumns.flatMap((name, index) => (keyNames.has(name) ? [] : [index]));
  const keyPositions = descriptor.key.map((name) => layout.writeColumns.indexOf(name));
  const updateInPlace =
    kept.length === 0
      ? undefined
      : db.prepare(
          `UPDATE ${tableSql} SET ${kept.map((i) => `${writeColumns[i]} = ?`).join(', ')}, ` +
            `${updated} = ?, ${version} = ${version} + 1 WHERE ${where} AND ${version} = ?`,
        );
  const width = layout.writeColumns.length;
  const keyColumns = new Set(
    layout.writeColumns.flatMap((name, index) => (keyNames.has(name) ? [index] : [])),
  );
  /** Updates of some columns only, by the list of their write columns (a bounded cache). */
  const isKeyColumn = (index: number): boolean => keyColumns.has(index);
  // Keyed by the columns' bit mask when every one is below 30 (an update of 10 000 rows asks
  // for each row), else by their list as text.
  const partial = new Map<number | string, Statement>();
  const updateOf = (columns: readonly number[]): Statement | undefined => {
    let id: number | string = 0;
    for (let c = 0; c < columns.length; c++) {
      const index = columns[c]!;
      if (index >= 30) {
        id = columns.join(',');
        break;
      }
      id |= 1 << index;
    }
    let statement = partial.get(id);
    if (statement === undefined) {
      if (partial.size >= PARTIAL_UPDATES) return undefined;
      const set = columns.map((i) => `${writeColumns[i]} = ?, `).join('');
      statement = db.prepare(
        `UPDATE ${tableSql} SET ${set}${updated} = ?, ${version} = ${version} + 1 WHERE ${where} AND ${version} = ?`,
      );
      partial.set(id, statement);
    }
    return statement;
  };
  /**
   * Runs the update of `params` (those of `update`): in place when the key stays as it is, and
   * then of the `changed` columns only when they are known.
   */
  const runUpdate = (
    params: readonly unknown[],
    changed: readonly number[] | undefined,
  ): number => {
    if (updateInPlace === undefined) return update.run(params as unknown[]).changes;
    for (let k = 0; k < keyPositions.length; k++)
      if (params[keyPositions[k]!] !== params[width + 1 + k])
        return update.run(params as unknown[]).changes;
    let columns = changed;
    if (columns?.some(isKeyColumn)) columns = columns.filter((index) => !isKeyColumn(index));
    const statement = columns === undefined ? undefined : updateOf(columns);
    const set = statement === undefined ? kept : columns!;
    const inPlace = new Array<unknown>(set.length + params.length - width);
    let p = 0;
    for (let c = 0; c < set.length; c++) inPlace[p++] = params[set[c]!];
    for (let q = width; q < params.length; q++) inPlace[p++] = params[q];
    return (statement ?? updateInPlace).run(inPlace).changes;
  };
  // A purge returns whether the row was soft-deleted after the select list.
  const purgeReturning = soft ? `${returning}, ${deletedAt}` : returning;
  const purge = db
    .prepare(`DELETE FROM ${tableSql} WHERE ${where} RETURNING ${purgeReturning}`)
    .raw(true);
  const purgeVersion = db
    .prepare(
      `DELETE FROM ${tableSql} WHERE ${where} AND ${version} = ? RETURNING ${purgeReturning}`,
    )
    .raw(true);
  const mark = `UPDATE ${tableSql} SET ${deletedAt} = ?, ${deletedBy} = ?, ${updated} = ?, ${version} = ${version} + 1 WHERE ${where}${live}`;
  const del = soft ? db.prepare(`${mark} RETURNING ${returning}`).raw(true) : purge;
  const deleteVersion = soft
    ? db.prepare(`${mark} AND ${version} = ? RETURNING ${returning}`).raw(true)
    : purgeVersion;
  const getDeleted = soft
    ? db
        .prepare(
          `SELECT ${select}, ${tableSql}.${deletedAt}, ${tableSql}.${deletedBy} FROM ${tableSql} WHERE ${where} AND ${deletedAt} IS NOT NULL`,
        )
        .raw(true)
    : undefined;
  const restore = soft
    ? db
        .prepare(
          `UPDATE ${tableSql} SET ${deletedAt} = NULL, ${deletedBy} = NULL, ${updated} = ?, ${version} = ${version} + 1 WHERE ${where} AND ${deletedAt} IS NOT NULL RETURNING ${returning}`,
        )
        .raw(true)
    : undefined;

  const insertMany = db.transaction(
    (records: readonly StoredFields[], now: number, by: string | null) => {
      const width = layout.writeColumns.length;
      const params: unknown[] = new Array<unknown>(width + 2).fill(now);
      for (let i = 0; i < records.length; i++) {
        layout.writeParams(records[i]!, params);
        try {
          insert.run(params);
        } catch (error) {
          if (isPrimaryKeyViolation(error)) {
            throw new DuplicateKeyError(descriptor.table, i, { cause: error });
          }
          throw uniqueViolation(error, descriptor, i) ?? error;
        }
      }
      // After the rows are in: a record may name itself or another record of the same list.
      const refs = references();
      if (refs?.checks(descriptor) === true) {
        const missing = refs.missing(descriptor, records);
        if (missing !== undefined) throw missing;
      }
      shared.touchCreate.run(entity, now);
      return append(now, by, () => records.map((record) => drafter.draft('created', record)));
    },
  );
  const updateOne = db.transaction(
    (params: unknown[], now: number, change: PendingUpdate): Written<number> => {
      const refs = references();
      const renames = drafter.renames(change.key, change.record);
      // A rename is the deletion of the record under its old key: read it before it moves.
      const renamed =
        drafting() && renames ? (get.get(change.keyParams) as Row | undefined) : undefined;
      const { changes } = update.run(params);
      if (changes === 0) return { result: 0, changes: [] };
      if (refs?.checks(descriptor) === true) {
        const missing = refs.missing(descriptor, [change.record]);
        if (missing !== undefined) throw missing;
      }
      const cascaded =
        renames && refs?.referenced(descriptor) === true
          ? refs.afterRename(descriptor, change.key, change.record, now)
          : [];
      shared.touchUpdate.run(entity, now);
      const appended = append(now, change.by, () => [
        ...(renamed === undefined
          ? [drafter.draft('updated', change.record)]
          : drafter.rename(layout.decode(renamed), change.record)),
        ...cascaded,
      ]);
      return { result: changes, changes: appended };
    },
  );
  const updateMany = db.transaction(
    (
      params: readonly unknown[][],
      now: number,
      changes: readonly PendingUpdate[],
      changed: readonly (readonly number[] | undefined)[],
    ): Written<number[]> => {
      const refs = references();
      const drafts: ChangeDraft[] = [];
      const versions: number[] = [];
      const record = drafting();
      for (let i = 0; i < changes.length; i++) {
        const change = changes[i]!;
        const one = params[i]!;
        const renames = drafter.renames(change.key, change.record);
        // A rename is the deletion of the record under its old key: read it before it moves.
        const renamed =
          record && renames ? (get.get(change.keyParams) as Row | undefined) : undefined;
        if (runUpdate(one, changed[i]) === 0) throw NOT_ALL_UPDATED;
        versions.push((one[one.length - 1] as number) + 1);
        const cascaded =
          renames && refs?.referenced(descriptor) === true
            ? refs.afterRename(descriptor, change.key, change.record, now)
            : [];
        if (!record) continue;
        if (renamed === undefined) drafts.push(drafter.draft('updated', change.record));
        else drafts.push(...drafter.rename(layout.decode(renamed), change.record));
        for (const draft of cascaded) drafts.push(draft);
      }
      if (refs?.checks(descriptor) === true) {
        const missing = refs.missing(
          descriptor,
          changes.map((change) => change.record),
        );
        if (missing !== undefined) throw missing;
      }
      shared.touchUpdate.run(entity, now);
      // One request's updates: one subject for all of them.
      const by = changes[0]?.by ?? null;
      return { result: versions, changes: append(now, by, () => drafts) };
    },
  );
  // Per record: its live row read by key (a statement with RETURNING costs SQLite an ephemeral
  // table per run, ten times a read by key), then an insert, the columns that differ, or nothing.
  // The parameters are written into arrays made once per call, and what is kept of each record
  // is a few numbers: an upsert of 10 000 records otherwise spends its time collecting garbage.
  const replaceMany = db.transaction(
    (records: readonly StoredFields[], now: number, plan: ReplacePlan): Written<ReplacedRows> => {
      const n = layout.columns.length;
      const keys = keyPositions.length;
      const skip = new Array<boolean>(n).fill(false);
      for (const c of [...layout.keyIndexes, ...plan.keep, ...plan.stamped]) skip[c] = true;
      const count = records.length;
      const done: ReplacedRows = {
        fates: new Uint8Array(count),
        versions: new Float64Array(count),
        createdAt: new Float64Array(count),
        unchanged: new Map(),
        stored: new Map(),
      };
      const keyValues = new Array<unknown>(keys);
      const keyArgs = new Array<unknown>(keys);
      const inserted = new Array<unknown>(width + 2);
      // The parameters of `update`: the write columns, the time, the key, the version.
      const updated = new Array<unknown>(width + keys + 2);
      let creates = 0;
      let updates = 0;
      for (let i = 0; i < count; i++) {
        const fields = records[i]!;
        for (let k = 0; k < keys; k++) keyValues[k] = fields[descriptor.key[k]!];
        layout.keyParams(keyValues, keyArgs, 0);
        const row = get.get(keyArgs) as Row | undefined;
        if (row === undefined) {
          layout.writeParams(fields, inserted);
          inserted[width] = now;
          inserted[width + 1] = now;
          try {
            insert.run(inserted);
          } catch (error) {
            if (isPrimaryKeyViolation(error) || uniqueViolation(error, descriptor, i) !== undefined)
              throw NOT_REPLACED;
            throw error;
          }
          done.fates[i] = REPLACED_CREATED;
          done.versions[i] = 1;
          done.createdAt[i] = now;
          creates++;
          continue;
        }
        layout.writeParams(fields, updated);
        for (const c of plan.keep) updated[c] = row[c];
        const changed = layout.changedColumns(row, updated, skip);
        const version = row[n] as number;
        done.createdAt[i] = row[n + 1] as number;
        if (changed === undefined) {
          done.fates[i] = REPLACED_UNCHANGED;
          done.versions[i] = version;
          done.unchanged.set(i, row);
          continue;
        }
        if (plan.stamped.length > 0) {
          for (const c of plan.stamped) if (!changed.includes(c)) changed.push(c);
          changed.sort((a, b) => a - b);
        }
        updated[width] = now;
        for (let k = 0; k < keys; k++) updated[width + 1 + k] = keyArgs[k];
        updated[width + 1 + keys] = version;
        try {
          runUpdate(updated, changed);
        } catch (error) {
          if (uniqueViolation(error, descriptor, i) !== undefined) throw NOT_REPLACED;
          throw error;
        }
        done.fates[i] = REPLACED_UPDATED;
        done.versions[i] = version + 1;
        updates++;
        const stored = layout.withStored(fields, row, plan.keep);
        if (stored !== fields) done.stored.set(i, stored);
      }
      // After the rows are in: a record may name itself or another record of the same list.
      const refs = references();
      if (refs?.checks(descriptor) === true && creates + updates > 0) {
        const missing = refs.missing(
          descriptor,
          records.filter((_, i) => done.fates[i] !== REPLACED_UNCHANGED),
        );
        if (missing !== undefined) throw missing;
      }
      if (creates > 0) shared.touchCreate.run(entity, now);
      if (updates > 0) shared.touchUpdate.run(entity, now);
      // Drafted once the rows are written, as `insertMany` does.
      const drafts = (): ChangeDraft[] => {
        const list: ChangeDraft[] = [];
        for (let i = 0; i < count; i++) {
          const fate = done.fates[i];
          if (fate === REPLACED_CREATED) list.push(drafter.draft('created', records[i]!));
          else if (fate === REPLACED_UPDATED)
            list.push(drafter.draft('updated', done.stored.get(i) ?? records[i]!));
        }
        return list;
      };
      return { result: done, changes: append(now, plan.by, drafts) };
    },
  );
  const deleteOne = db.transaction(
    (
      statement: Statement,
      params: unknown[],
      now: number,
      how: DeleteHow,
    ): Written<Row | undefined> => {
      const row = statement.get(params) as Row | undefined;
      if (row === undefined) return { result: undefined, changes: [] };
      const refs = references();
      const record = layout.decode(row);
      // A purge of a soft-deleted row: its references were acted on at the soft delete.
      const wasDeleted = how.op === 'purged' && soft && row[layout.columns.length + 3] !== null;
      const cascaded =
        refs?.referenced(descriptor) === true && !wasDeleted
          ? refs.afterDelete(descriptor, record, now, how.by)
          : [];
      shared.touchDelete.run(entity, now);
      const appended = append(now, how.by, () => [
        drafter.draft(how.op, record, how.soft),
        ...cascaded,
      ]);
      return { result: row, changes: appended };
    },
  );
  const restoreOne = db.transaction(
    (params: unknown[], now: number, by: string | null): Written<Row | undefined> => {
      const row = restore?.get(params) as Row | undefined;
      if (row === undefined) return { result: undefined, changes: [] };
      const record = layout.decode(row);
      // What it names may have gone while it was deleted.
      const refs = references();
      if (refs?.checks(descriptor) === true) {
        const missing = refs.missing(descriptor, [record]);
        if (missing !== undefined) throw missing;
      }
      shared.touchUpdate.run(entity, now);
      return {
        result: row,
        changes: append(now, by, () => [drafter.draft('restored', record)]),
      };
    },
  );
  const takeSequence =
    descriptor.sequence === undefined
      ? undefined
      : db
          .prepare(
            `UPDATE ${quoteIdentifier(SEQUENCES_TABLE)} SET value = value + ? WHERE name = ? RETURNING value`,
          )
          .pluck();
  return {
    layout,
    get,
    getMany,
    insert,
    takeSequence,
    update,
    delete: del,
    deleteVersion,
    purge,
    purgeVersion,
    getDeleted,
    restore,
    insertMany,
    updateOne,
    updateMany,
    replaceMany,
    deleteOne,
    restoreOne,
  };
}
