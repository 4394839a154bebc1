/**
 * Integrity of references on SQLite (SPEC §11), run inside the write's own transaction. SQLite
 * has one writer at a time (every write holds the database's write lock from `BEGIN IMMEDIATE`
 * to its commit, across processes too), so a check made in the transaction still holds at its
 * commit: no foreign keys are needed, and none could serve the ARRAY references and composite
 * ids anyway. The statements are prepared on first use and kept.
 */
import type Database from 'better-sqlite3';
import type { KeyValue, KeyValues, StoredFields, TableDescriptor } from '../driver.js';
import { ChangeDrafter, type ChangeDraft } from '../events/change.js';
import {
  emptied,
  findMissing,
  keyOfReference,
  referenceValueOf,
  referenceValueOfKey,
  ReferencedRecordError,
  retargeted,
  type IncomingReference,
  type ReferenceGraph,
  type ReferenceMissingError,
} from '../references.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { DELETED_AT_COLUMN, deletedCondition } from '../soft-delete.js';
import type { TableLayout } from './schema.js';
import { sqliteLive } from './dialect.js';
import type { Row, SharedStatements, Statement } from './statements.js';

/** What the references need of one table's prepared statements. */
export interface ReferencedTable {
  readonly layout: TableLayout;
  readonly get: Statement;
  /**
   * `DELETE … WHERE <key> RETURNING <select list>`, raw; on a `softDelete` table the soft delete
   * of a live row (`now, by, now` before the key).
   */
  readonly delete: Statement;
  /** `UPDATE … SET <every column>, updated, version + 1 WHERE <key> AND version = ?`. */
  readonly update: Statement;
}

/** The checks and cascades of every table with references, on one connection. */
export class SqliteReferences {
  private readonly statements = new Map<string, Statement>();
  private readonly drafters = new Map<string, ChangeDrafter>();

  constructor(
    private readonly db: Database.Database,
    readonly graph: ReferenceGraph,
    private readonly table: (descriptor: TableDescriptor) => ReferencedTable,
    private readonly shared: SharedStatements,
  ) {}

  /** Whether writes to `descriptor` hold references to check. */
  checks(descriptor: TableDescriptor): boolean {
    return this.graph.outgoing(descriptor).length > 0;
  }

  /** Whether deletes and renames of `descriptor`'s records act on references to them. */
  referenced(descriptor: TableDescriptor): boolean {
    return this.graph.incoming(descriptor).length > 0;
  }

  /** The error for the first written value that names no record (after the rows are written). */
  missing(
    descriptor: TableDescriptor,
    records: readonly StoredFields[],
  ): ReferenceMissingError | undefined {
    const known = new Map<string, boolean>();
    return findMissing(records, this.graph.outgoing(descriptor), (link, value) => {
      const memo = `${link.target.table}\u0000${typeof value}\u0000${String(value)}`;
      let found = known.get(memo);
      if (found === undefined) {
        const key = keyOfReference(link.target, value);
        found = key !== undefined && this.exists(link.target, key);
        known.set(memo, found);
      }
      return found;
    });
  }

  /**
   * Applies the `onDelete` rules of the references to a deleted record: throws
   * `ReferencedRecordError` for a RESTRICT reference that is used, clears EMPTY ones, deletes
   * through DELETE ones (recursively: a deleted record is gone before its own references are
   * followed, so a cycle ends). Returns the change drafts of every record it changed.
   */
  afterDelete(
    descriptor: TableDescriptor,
    record: StoredFields,
    now: number,
    by: string | null,
    drafts: ChangeDraft[] = [],
  ): ChangeDraft[] {
    const incoming = this.graph.incoming(descriptor);
    if (incoming.length === 0) return drafts;
    const value = referenceValueOf(descriptor, record);
    // RESTRICT first: nothing is changed before the delete is known to be allowed here.
    for (const link of incoming) {
      if (link.reference.onDelete !== 'RESTRICT') continue;
      const count = Number(this.statement(link, 'count').pluck().get([value]));
      if (count > 0) throw new ReferencedRecordError(descriptor, String(value), link, count);
    }
    this.rewrite(
      incoming.filter((link) => link.reference.onDelete === 'EMPTY'),
      value,
      (record, link) => emptied(record, link.reference, value),
      now,
      drafts,
    );
    for (const link of incoming) {
      if (link.reference.onDelete !== 'DELETE') continue;
      for (const row of this.referencing(link, value)) {
        const state = this.table(link.source);
        const before = state.layout.decode(row);
        // A record of a softDelete entity is deleted softly (SPEC §13).
        const soft = link.source.softDelete === true;
        const params: unknown[] = soft ? [now, by, now] : [];
        state.layout.keyParams(keyOf(state.layout, row), params);
        const deleted = state.delete.get(params) as Row | undefined;
        if (deleted === undefined) continue; // deleted earlier in this cascade
        this.shared.touchDelete.run(link.source.entity, now);
        drafts.push(this.drafter(link.source).draft('deleted', before, soft));
        this.afterDelete(link.source, before, now, by, drafts);
      }
    }
    return drafts;
  }

  /** Points the references to the record once under `oldKey` at its new key (a rename). */
  afterRename(
    descriptor: TableDescriptor,
    oldKey: KeyValues,
    record: StoredFields,
    now: number,
    drafts: ChangeDraft[] = [],
  ): ChangeDraft[] {
    const from = referenceValueOfKey(descriptor, oldKey);
    const to = referenceValueOf(descriptor, record);
    if (String(from) === String(to)) return drafts;
    this.rewrite(
      this.graph.incoming(descriptor),
      from,
      (before, link) => retargeted(before, link.reference, from, to),
      now,
      drafts,
    );
    return drafts;
  }

  // ---------------------------------------------------------------------------------------------

  private exists(target: TableDescriptor, key: KeyValues): boolean {
    const state = this.table(target);
    const params: unknown[] = [];
    state.layout.keyParams(key, params);
    return state.get.get(params) !== undefined;
  }

  private referencing(link: IncomingReference, value: KeyValue): Row[] {
    return this.statement(link, 'rows').all([value]) as Row[];
  }

  /**
   * Changes every record that references `value` through one of `links` by `change`, once per
   * record however many of its fields hold the value, with its change event.
   */
  private rewrite(
    links: readonly IncomingReference[],
    value: KeyValue,
    change: (record: StoredFields, link: IncomingReference) => StoredFields,
    now: number,
    drafts: ChangeDraft[],
  ): void {
    const bySource = new Map<string, IncomingReference[]>();
    for (const link of links) {
      const list = bySource.get(link.source.table);
      if (list === undefined) bySource.set(link.source.table, [link]);
      else list.push(link);
    }
    for (const sourceLinks of bySource.values()) {
      const source = sourceLinks[0]!.source;
      const state = this.table(source);
      const { layout } = state;
      const rows = new Map<string, Row>();
      for (const link of sourceLinks) {
        for (const row of this.referencing(link, value)) {
          rows.set(JSON.stringify(keyOf(layout, row)), row);
        }
      }
      if (rows.size === 0) continue;
      const drafter = this.drafter(source);
      const n = layout.columns.length;
      for (const row of rows.values()) {
        const before = layout.decode(row);
        let after: StoredFields = before;
        for (const link of sourceLinks) after = change(after, link);
        const oldKey = keyOf(layout, row);
        const params: unknown[] = [];
        layout.writeParams(after, params);
        params.push(now);
        layout.keyParams(oldKey, params);
        params.push(row[n]);
        state.update.run(params);
        if (drafter.renames(oldKey, after)) {
          // The reference is part of the referencing record's key: the record was renamed.
          drafts.push(...drafter.rename(before, after));
          this.afterRename(source, oldKey, after, now, drafts);
        } else {
          drafts.push(drafter.draft('updated', after));
        }
      }
      this.shared.touchUpdate.run(source.entity, now);
    }
  }

  private drafter(descriptor: TableDescriptor): ChangeDrafter {
    let drafter = this.drafters.get(descriptor.table);
    if (drafter === undefined) {
      drafter = new ChangeDrafter(descriptor);
      this.drafters.set(descriptor.table, drafter);
    }
    return drafter;
  }

  private statement(link: IncomingReference, what: 'count' | 'rows'): Statement {
    const name = `${what}\u0000${link.source.table}\u0000${link.reference.field}`;
    let statement = this.statements.get(name);
    if (statement !== undefined) return statement;
    const { layout } = this.table(link.source);
    const column = `${layout.tableSql}.${quoteIdentifier(link.reference.field)}`;
    const where = link.reference.array
      ? `EXISTS (SELECT 1 FROM json_each(${column}) AS "_eg_e" WHERE "_eg_e".value = ?)`
      : `${column} = ?`;
    switch (what) {
      case 'count': {
        // A soft-deleted record does not hold on to what it references (SPEC §13).
        const live = deletedCondition(
          link.source,
          `${layout.tableSql}.${quoteIdentifier(DELETED_AT_COLUMN)}`,
          undefined,
          sqliteLive,
        );
        statement = this.db.prepare(
          `SELECT count(*) FROM ${layout.tableSql} WHERE ${where}${live === undefined ? '' : ` AND ${live}`}`,
        );
        break;
      }
      case 'rows':
        statement = this.db
          .prepare(`SELECT ${layout.selectList()} FROM ${layout.tableSql} WHERE ${where}`)
          .raw(true);
        break;
    }
    this.statements.set(name, statement);
    return statement;
  }
}

/** The key values of a raw row (select list order: the fields first). */
function keyOf(layout: TableLayout, row: Row): KeyValues {
  const record = layout.decode(row);
  return layout.keyIndexes.map((index) => {
    const column = layout.columns[index]!;
    return (column.fixed ?? record[column.name]) as KeyValue;
  });
}
