/**
 * Record history (SPEC §13): every committed version of a record of a `history: true` entity is
 * kept in `_eg_history`, one row per version, written in the write's own transaction by both
 * drivers from the same change drafts the outbox gets (so the cascades of references are kept
 * too). Versions count 1, 2, … per key; a rename moves the versions of the old key to the new one
 * and adds an `updated` version there, so the history follows the record. A key used again after
 * a delete keeps counting after the versions of its earlier record.
 */
import type { ChangeOp, HistoryEntry, KeyValues, TableDescriptor } from './driver.js';
import type { ChangeDraft } from './events/change.js';
import { DEFAULT_KEY_SEPARATOR } from './schema.js';

/** The table of kept versions, shared by every entity. */
export const HISTORY_TABLE = '_eg_history';

/** One version to keep: a change of a record of a `history` entity. */
export interface HistoryDraft {
  readonly entity: string;
  /** The record id the version is kept under (the new one, for a rename). */
  readonly id: string;
  /** For a rename: the old id, whose versions move to `id` first. */
  readonly from?: string;
  readonly op: ChangeOp;
  readonly record: string;
}

/**
 * The versions to keep for `drafts` (a write's changes, its cascades included): those of the
 * entities in `entities`, a rename's `deleted` and `created` pair made one `updated` version.
 */
export function historyDrafts(
  drafts: readonly ChangeDraft[],
  entities: ReadonlySet<string>,
): HistoryDraft[] {
  const kept: HistoryDraft[] = [];
  for (let i = 0; i < drafts.length; i++) {
    const draft = drafts[i]!;
    if (!entities.has(draft.entity)) continue;
    const next = drafts[i + 1];
    if (draft.renamed === true && draft.op === 'deleted' && next?.renamed === true) {
      kept.push({
        entity: draft.entity,
        id: next.id,
        from: draft.id,
        op: 'updated',
        record: next.record,
      });
      i++;
      continue;
    }
    kept.push({ entity: draft.entity, id: draft.id, op: draft.op, record: draft.record });
  }
  return kept;
}

/**
 * `drafts` with the versions the history gave them (`versions[i]` for `historyDrafts(drafts)[i]`):
 * a rename's two drafts both get the rename's version; drafts of other entities stay as they are.
 */
export function withVersions(
  drafts: readonly ChangeDraft[],
  entities: ReadonlySet<string>,
  versions: readonly number[],
): ChangeDraft[] {
  const out: ChangeDraft[] = [];
  let next = 0;
  for (let i = 0; i < drafts.length; i++) {
    const draft = drafts[i]!;
    if (!entities.has(draft.entity)) {
      out.push(draft);
      continue;
    }
    const version = versions[next++]!;
    const pair = drafts[i + 1];
    if (draft.renamed === true && draft.op === 'deleted' && pair?.renamed === true) {
      out.push({ ...draft, version }, { ...pair, version });
      i++;
      continue;
    }
    out.push({ ...draft, version });
  }
  return out;
}

/** The entities of `tables` that keep their history. */
export function historyEntities(
  tables: Iterable<{ readonly entity: string; readonly history?: boolean }>,
): Set<string> {
  const entities = new Set<string>();
  for (const table of tables) if (table.history === true) entities.add(table.entity);
  return entities;
}

/**
 * The statements of the history, in one dialect: `p(n)` writes the n-th parameter (`?n` in
 * SQLite, `$n` in PostgreSQL), `table` is the qualified table name.
 */
export interface HistorySql {
  /** $1 entity, $2 new id, $3 old id: the old id's versions moved after the new id's. */
  readonly rekey: string;
  /** $1 entity, $2 id, $3 op, $4 by, $5 record, $6 time: the next version. */
  readonly insert: string;
  /** $1 entity, $2 id, $3 before (exclusive), $4 limit: newest first. */
  readonly page: string;
  /** $1 entity, $2 id, $3 time: the newest version at or before it. */
  readonly at: string;
  /** $1 time: versions older than it, except the newest of each record. */
  readonly trim: string;
}

/** The history's statements for a dialect. */
export function historySql(table: string, p: (n: number) => string): HistorySql {
  const columns = '"version", "op", "time_ms", "by", "record"';
  return {
    rekey:
      `UPDATE ${table} SET "record_id" = ${p(2)}, "version" = "version" + coalesce(` +
      `(SELECT "version" FROM ${table} WHERE "entity" = ${p(1)} AND "record_id" = ${p(2)} ` +
      `ORDER BY "version" DESC LIMIT 1), 0) ` +
      `WHERE "entity" = ${p(1)} AND "record_id" = ${p(3)}`,
    // The last version by one step down the key's index (a max() would read every version).
    insert:
      `INSERT INTO ${table} ("entity", "record_id", "version", "op", "by", "record", "time_ms") ` +
      `VALUES (${p(1)}, ${p(2)}, coalesce((SELECT "version" FROM ${table} ` +
      `WHERE "entity" = ${p(1)} AND "record_id" = ${p(2)} ORDER BY "version" DESC LIMIT 1), 0) + 1, ` +
      `${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}) RETURNING "version"`,
    page:
      `SELECT ${columns} FROM ${table} WHERE "entity" = ${p(1)} AND "record_id" = ${p(2)} ` +
      `AND "version" < ${p(3)} ORDER BY "version" DESC LIMIT ${p(4)}`,
    at:
      `SELECT ${columns} FROM ${table} WHERE "entity" = ${p(1)} AND "record_id" = ${p(2)} ` +
      `AND "time_ms" <= ${p(3)} ORDER BY "version" DESC LIMIT 1`,
    trim:
      `DELETE FROM ${table} WHERE "time_ms" < ${p(1)} AND "version" < ` +
      `(SELECT max("h"."version") FROM ${table} AS "h" ` +
      `WHERE "h"."entity" = ${table}."entity" AND "h"."record_id" = ${table}."record_id")`,
  };
}

/** A row of `page` or `at` as an entry. */
export function historyEntry(row: readonly unknown[]): HistoryEntry {
  return {
    version: Number(row[0]),
    op: row[1] as ChangeOp,
    timeUnix: Number(row[2]),
    by: (row[3] as string | null) ?? null,
    record: row[4] as string,
  };
}

/** The largest `before` of a page: no version is that new. */
export const NO_VERSION_LIMIT = Number.MAX_SAFE_INTEGER;

/** The record id the history keeps the record under `key` with (as the outbox writes it). */
export function historyId(table: TableDescriptor, key: KeyValues): string {
  return key.length === 1
    ? String(key[0])
    : key.map(String).join(table.keySeparator ?? DEFAULT_KEY_SEPARATOR);
}
