/**
 * Integrity of references on PostgreSQL (SPEC §11), run inside the write's own transaction with
 * row locks rather than foreign keys: one mechanism for scalar references, ARRAY references
 * (JSONB, which no foreign key can reach) and composite ids (held as one text), with the same
 * errors and change events as SQLite.
 *
 * Why it holds under concurrent writers (READ COMMITTED):
 * - A write that stores a reference locks each referenced row `FOR KEY SHARE` after writing its
 *   own rows. A delete or rename of that row waits for the write to commit, and the statements it
 *   runs next (each with a fresh snapshot) then see the new reference: RESTRICT refuses, EMPTY
 *   and DELETE act on it, a rename rewrites it.
 * - A write that comes after the delete or rename locked the row waits for it; if that commits,
 *   the row is gone (or has another key), the lock finds nothing, and the write fails with the
 *   400 and rolls back.
 */
import type pg from 'pg';
import { DELETED_AT_COLUMN, DELETED_BY_COLUMN } from '../soft-delete.js';
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
import { PostgresOutbox } from './outbox.js';
import { castType, CREATED_COLUMN, quoteIdent, UPDATED_COLUMN, VERSION_COLUMN } from './schema.js';
import {
  TRANSACTION_ACTIVITY,
  statementName,
  transactionTouch,
  type TableState,
} from './statements.js';
import { keyParams, normalizeKey, toParam, toStored, type Row } from './values.js';

/** The change drafts a cascade made, per entity (the outbox appends one entity at a time). */
export type CascadeDrafts = Map<string, ChangeDraft[]>;

/** What a transaction's cascades appended: each entity's drafts and the seq of the first. */
export interface AppendedDrafts {
  readonly drafts: readonly ChangeDraft[];
  readonly first: Row | undefined;
}

/** The checks and cascades of every table with references, for one driver. */
export class PostgresReferences {
  private readonly texts = new Map<string, string>();
  private readonly drafters = new Map<string, ChangeDrafter>();

  constructor(
    readonly graph: ReferenceGraph,
    private readonly table: (descriptor: TableDescriptor) => TableState,
    private readonly activityTable: string,
    private readonly outbox: PostgresOutbox,
  ) {}

  /** Whether writes to `descriptor` hold references to check. */
  checks(descriptor: TableDescriptor): boolean {
    return this.graph.outgoing(descriptor).length > 0;
  }

  /** Whether deletes and renames of `descriptor`'s records act on references to them. */
  referenced(descriptor: TableDescriptor): boolean {
    return this.graph.incoming(descriptor).length > 0;
  }

  /**
   * Locks every record the written records name (`FOR KEY SHARE`) and returns the error for the
   * first value that names no record. Run it twice in the write's transaction, with the same
   * `found`: before the records are written (so the write takes its locks in the order a delete
   * does: the referenced rows, then the outbox), and after (for the values that name a record of
   * the write itself).
   */
  async missing(
    client: pg.PoolClient,
    descriptor: TableDescriptor,
    records: readonly StoredFields[],
    found: Map<string, Set<string>> = new Map(),
  ): Promise<ReferenceMissingError | undefined> {
    for (const link of this.graph.outgoing(descriptor)) {
      const target = link.target;
      const keys = new Map<string, KeyValues>();
      for (const record of records) {
        const value = record[link.reference.field];
        if (value === undefined || value === null) continue;
        const values = link.reference.array && Array.isArray(value) ? value : [value];
        for (const item of values) {
          const key = keyOfReference(target, item);
          if (key !== undefined) keys.set(this.keyText(target, key), key);
        }
      }
      let existing = found.get(target.table);
      if (existing === undefined) {
        existing = new Set();
        found.set(target.table, existing);
      }
      const wanted = [...keys].filter(([text]) => !existing!.has(text)).map(([, key]) => key);
      for (const key of await this.lockExisting(client, target, wanted)) {
        existing.add(this.keyText(target, key));
      }
    }
    return findMissing(records, this.graph.outgoing(descriptor), (link, value) => {
      const key = keyOfReference(link.target, value);
      return key !== undefined && found.get(link.target.table)!.has(this.keyText(link.target, key));
    });
  }

  /**
   * Applies the `onDelete` rules of the references to a deleted record (see the SQLite
   * counterpart): RESTRICT throws `ReferencedRecordError`, EMPTY clears, DELETE deletes
   * recursively. Adds the drafts of every record it changed to `drafts`.
   */
  async afterDelete(
    client: pg.PoolClient,
    descriptor: TableDescriptor,
    record: StoredFields,
    now: number,
    by: string | null,
    drafts: CascadeDrafts,
  ): Promise<void> {
    const incoming = this.graph.incoming(descriptor);
    if (incoming.length === 0) return;
    const value = referenceValueOf(descriptor, record);
    for (const link of incoming) {
      if (link.reference.onDelete !== 'RESTRICT') continue;
      const result = await this.query(client, this.sql(link, 'count'), [this.param(link, value)]);
      const count = Number((result.rows[0] as Row | undefined)?.[0] ?? 0);
      if (count > 0) throw new ReferencedRecordError(descriptor, String(value), link, count);
    }
    await this.rewrite(
      client,
      incoming.filter((link) => link.reference.onDelete === 'EMPTY'),
      value,
      (before, link) => emptied(before, link.reference, value),
      now,
      drafts,
    );
    for (const link of incoming) {
      if (link.reference.onDelete !== 'DELETE') continue;
      const state = this.table(link.source);
      const rows = await this.query(client, this.sql(link, 'rows'), [this.param(link, value)]);
      for (const row of rows.rows as Row[]) {
        const before = toStored(state, row).record;
        const key = state.keyIndexes.map((index) => row[index]) as KeyValues;
        // A record of a softDelete entity is deleted softly (SPEC §13).
        const soft = link.source.softDelete === true;
        const deleted = await this.query(
          client,
          this.deleteSql(state),
          soft ? [...keyParams(state, key), now, by] : keyParams(state, key),
        );
        if (deleted.rows.length === 0) continue; // deleted earlier in this cascade
        await this.touch(client, state, 'last_delete_ms', now);
        add(drafts, link.source.entity, this.drafter(link.source).draft('deleted', before, soft));
        await this.afterDelete(client, link.source, before, now, by, drafts);
      }
    }
  }

  /** Points the references to the record once under `oldKey` at its new key (a rename). */
  async afterRename(
    client: pg.PoolClient,
    descriptor: TableDescriptor,
    oldKey: KeyValues,
    record: StoredFields,
    now: number,
    drafts: CascadeDrafts,
  ): Promise<void> {
    const from = referenceValueOfKey(descriptor, oldKey);
    const to = referenceValueOf(descriptor, record);
    if (String(from) === String(to)) return;
    await this.rewrite(
      client,
      this.graph.incoming(descriptor),
      from,
      (before, link) => retargeted(before, link.reference, from, to),
      now,
      drafts,
    );
  }

  /** Appends the drafts of the cascades to the outbox, one entity at a time. */
  async append(
    client: pg.PoolClient,
    drafts: CascadeDrafts,
    now: number,
  ): Promise<AppendedDrafts[]> {
    const appended: AppendedDrafts[] = [];
    for (const [entity, list] of drafts) {
      if (list.length === 0) continue;
      const result = await client.query({
        name: statementName(this.outbox.appendSql),
        text: this.outbox.appendSql,
        values: [...PostgresOutbox.params(list), entity, now],
        rowMode: 'array',
      });
      appended.push({ drafts: list, first: result.rows[0] as Row | undefined });
    }
    return appended;
  }

  // ---------------------------------------------------------------------------------------------

  /** Changes every record referencing `value` through `links` once, with its change draft. */
  private async rewrite(
    client: pg.PoolClient,
    links: readonly IncomingReference[],
    value: KeyValue,
    change: (record: StoredFields, link: IncomingReference) => StoredFields,
    now: number,
    drafts: CascadeDrafts,
  ): Promise<void> {
    const bySource = new Map<string, IncomingReference[]>();
    for (const link of links) {
      const list = bySource.get(link.source.table);
      if (list === undefined) bySource.set(link.source.table, [link]);
      else list.push(link);
    }
    for (const sourceLinks of bySource.values()) {
      const source = sourceLinks[0]!.source;
      const state = this.table(source);
      const rows = new Map<string, Row>();
      for (const link of sourceLinks) {
        const result = await this.query(client, this.sql(link, 'rows'), [this.param(link, value)]);
        for (const row of result.rows as Row[]) {
          rows.set(JSON.stringify(state.keyIndexes.map((index) => row[index])), row);
        }
      }
      if (rows.size === 0) continue;
      const drafter = this.drafter(source);
      for (const row of rows.values()) {
        const before = toStored(state, row).record;
        let after: StoredFields = before;
        for (const link of sourceLinks) after = change(after, link);
        const oldKey = state.keyIndexes.map((index) => row[index]) as KeyValues;
        const values = state.columns.map((column) =>
          toParam(source.table, column, after[column.name]),
        );
        values.push(now, ...keyParams(state, oldKey));
        await this.query(client, this.updateSql(state), values);
        if (drafter.renames(oldKey, after)) {
          // The reference is part of the referencing record's key: the record was renamed.
          for (const draft of drafter.rename(before, after)) add(drafts, source.entity, draft);
          await this.afterRename(client, source, oldKey, after, now, drafts);
        } else {
          add(drafts, source.entity, drafter.draft('updated', after));
        }
      }
      await this.touch(client, state, 'last_update_ms', now);
    }
  }

  /** The keys among `keys` that exist in `target`, each row locked `FOR KEY SHARE`. */
  private async lockExisting(
    client: pg.PoolClient,
    target: TableDescriptor,
    keys: readonly KeyValues[],
  ): Promise<KeyValues[]> {
    if (keys.length === 0) return [];
    const state = this.table(target);
    const keyColumns = state.keyIndexes.map((index) => state.columns[index]!);
    const name = `lock\u0000${target.table}`;
    let text = this.texts.get(name);
    if (text === undefined) {
      text = `SELECT ${keyColumns.map((c) => `"_eg_t".${quoteIdent(c.name)}`).join(', ')}
FROM ${state.tableSql} AS "_eg_t"
JOIN unnest(${keyColumns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${keyColumns
        .map((_, i) => `"_${i + 1}"`)
        .join(', ')})
  ON ${keyColumns.map((c, i) => `"_eg_t".${quoteIdent(c.name)} = "_eg_input"."_${i + 1}"::${castType(c.kind)}`).join(' AND ')}
${
  // A soft-deleted record is absent (SPEC §13); a soft delete is an UPDATE that a KEY SHARE
  // lock would not hold off, so a soft-delete target's rows are locked FOR SHARE.
  target.softDelete === true
    ? `WHERE "_eg_t".${quoteIdent(DELETED_AT_COLUMN)} IS NULL
FOR SHARE OF "_eg_t"`
    : 'FOR KEY SHARE OF "_eg_t"'
}`;
      this.texts.set(name, text);
    }
    const arrays = keyColumns.map((column, i) =>
      keys.map((key) => toParam(target.table, column, key[i])),
    );
    const result = await this.query(client, text, arrays);
    return (result.rows as Row[]).map((row) => row as KeyValues);
  }

  /** A key as text, compared the way the database compares it. */
  private keyText(target: TableDescriptor, key: readonly unknown[]): string {
    const state = this.table(target);
    return JSON.stringify(
      state.keyIndexes.map((index, i) => normalizeKey(state.columns[index]!.kind, key[i])),
    );
  }

  private param(link: IncomingReference, value: KeyValue): string {
    return link.reference.array ? JSON.stringify([value]) : String(value);
  }

  private sql(link: IncomingReference, what: 'count' | 'rows'): string {
    const name = `${what}\u0000${link.source.table}\u0000${link.reference.field}`;
    let text = this.texts.get(name);
    if (text !== undefined) return text;
    const state = this.table(link.source);
    const column = state.columns.find((c) => c.name === link.reference.field)!;
    const where = link.reference.array
      ? `${quoteIdent(column.name)} @> $1::JSONB`
      : `${quoteIdent(column.name)} = $1::${castType(column.kind)}`;
    // A soft-deleted record does not hold on to what it references (SPEC §13).
    const live =
      link.source.softDelete === true ? ` AND ${quoteIdent(DELETED_AT_COLUMN)} IS NULL` : '';
    text =
      what === 'count'
        ? `SELECT count(*) FROM ${state.tableSql} WHERE ${where}${live}`
        : `SELECT ${this.selectList(state)} FROM ${state.tableSql} WHERE ${where} FOR UPDATE`;
    this.texts.set(name, text);
    return text;
  }

  private selectList(state: TableState): string {
    return [
      ...state.columns.map((c) => quoteIdent(c.name)),
      quoteIdent(VERSION_COLUMN),
      quoteIdent(CREATED_COLUMN),
      quoteIdent(UPDATED_COLUMN),
    ].join(', ');
  }

  private keyWhere(state: TableState, first: number): string {
    return state.keyIndexes
      .map((index, i) => `${quoteIdent(state.columns[index]!.name)} = $${first + i}`)
      .join(' AND ');
  }

  private deleteSql(state: TableState): string {
    const name = `delete\u0000${state.descriptor.table}`;
    let text = this.texts.get(name);
    if (text === undefined) {
      const k = state.keyIndexes.length;
      text =
        state.descriptor.softDelete === true
          ? `UPDATE ${state.tableSql} SET ${quoteIdent(DELETED_AT_COLUMN)} = $${k + 1}::BIGINT, ${quoteIdent(DELETED_BY_COLUMN)} = $${k + 2}::TEXT, ${quoteIdent(UPDATED_COLUMN)} = $${k + 1}::BIGINT, ${quoteIdent(VERSION_COLUMN)} = ${quoteIdent(VERSION_COLUMN)} + 1 WHERE ${this.keyWhere(state, 1)} AND ${quoteIdent(DELETED_AT_COLUMN)} IS NULL RETURNING 1`
          : `DELETE FROM ${state.tableSql} WHERE ${this.keyWhere(state, 1)} RETURNING 1`;
      this.texts.set(name, text);
    }
    return text;
  }

  private updateSql(state: TableState): string {
    const name = `update\u0000${state.descriptor.table}`;
    let text = this.texts.get(name);
    if (text === undefined) {
      const n = state.columns.length;
      const version = quoteIdent(VERSION_COLUMN);
      text = `UPDATE ${state.tableSql} SET ${state.columns
        .map((c, i) => `${quoteIdent(c.name)} = $${i + 1}`)
        .join(', ')}, ${quoteIdent(UPDATED_COLUMN)} = $${n + 1}, ${version} = ${version} + 1
 WHERE ${this.keyWhere(state, n + 2)}`;
      this.texts.set(name, text);
    }
    return text;
  }

  /** Touches the activity of `state`'s entity (its transaction's own row inside a transaction). */
  private async touch(
    client: pg.PoolClient,
    state: TableState,
    column: 'last_update_ms' | 'last_delete_ms',
    now: number,
  ): Promise<void> {
    const a = this.activityTable;
    const text = state.inTransaction
      ? `INSERT INTO ${a} ("entity", "${column}") VALUES ($1::TEXT || ${TRANSACTION_ACTIVITY}, $2::BIGINT)
ON CONFLICT ("entity") DO ${transactionTouch(a, column)}`
      : `INSERT INTO ${a} ("entity", "${column}") VALUES ($1::TEXT, $2::BIGINT)
ON CONFLICT ("entity") DO UPDATE SET "${column}" = GREATEST(COALESCE(${a}."${column}", EXCLUDED."${column}"), EXCLUDED."${column}")`;
    await this.query(client, text, [state.descriptor.entity, now]);
  }

  private query(client: pg.PoolClient, text: string, values: unknown[]): Promise<pg.QueryResult> {
    return client.query({ name: statementName(text), text, values, rowMode: 'array' });
  }

  private drafter(descriptor: TableDescriptor): ChangeDrafter {
    let drafter = this.drafters.get(descriptor.table);
    if (drafter === undefined) {
      drafter = new ChangeDrafter(descriptor);
      this.drafters.set(descriptor.table, drafter);
    }
    return drafter;
  }
}

function add(drafts: CascadeDrafts, entity: string, draft: ChangeDraft): void {
  const list = drafts.get(entity);
  if (list === undefined) drafts.set(entity, [draft]);
  else list.push(draft);
}
