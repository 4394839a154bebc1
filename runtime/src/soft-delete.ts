/**
 * Soft delete (SPEC §13): the storage columns that mark a deleted row and the condition every
 * read of a `softDelete` table adds, shared by both drivers and the list builder.
 */
import type { DeletedFilter, TableDescriptor } from './driver.js';

/** Unix time in milliseconds of the soft delete; NULL while the record is live. */
export const DELETED_AT_COLUMN = '_eg_deleted_ms';
/** The subject of the caller who deleted the record (NULL without access rules). */
export const DELETED_BY_COLUMN = '_eg_deleted_by';

/**
 * How a dialect writes "the row is live" of a `_eg_deleted_ms` column (`qualifiedColumn`).
 *
 * The default, PostgreSQL's, is `coalesce(column, -1) < 0` (a deletion time is never negative:
 * see `checkDeletionTime`), not `column IS NULL`: before PostgreSQL has statistics on the column
 * — a new table, or one whose softDelete was just switched on — it estimates `IS NULL` to match
 * 0.5% of the rows and sorts a sequential scan instead of reading a page along an index (a page of
 * 100 was 10× slower); an inequality is estimated at a third and keeps the index-ordered plan. The
 * same expression is the predicate of the partial index of the live rows (`LIVE_INDEX_PREDICATE`),
 * which the planner uses only for a query that repeats it.
 */
export function coalescedLive(qualifiedColumn: string): string {
  return `coalesce(${qualifiedColumn}, -1) < 0`;
}

/** The predicate of PostgreSQL's partial index of a `softDelete` table's live rows. */
export const LIVE_INDEX_PREDICATE = coalescedLive(`"${DELETED_AT_COLUMN}"`);

/**
 * The condition on `qualifiedColumn` (the table's `_eg_deleted_ms`) that selects the rows a read
 * sees: live ones by default (written by `live`, the dialect's form), every one with `include`,
 * deleted ones with `only`. `undefined` when the table keeps no deleted rows or every row is
 * wanted.
 */
export function deletedCondition(
  table: TableDescriptor,
  qualifiedColumn: string,
  deleted: DeletedFilter | undefined,
  live: (qualifiedColumn: string) => string = coalescedLive,
): string | undefined {
  if (table.softDelete !== true || deleted === 'include') return undefined;
  return deleted === 'only' ? `${qualifiedColumn} IS NOT NULL` : live(qualifiedColumn);
}

/** A soft delete's time is a Unix time in milliseconds, never negative (see `deletedCondition`). */
export function checkDeletionTime(now: number): number {
  if (!Number.isSafeInteger(now) || now < 0)
    throw new TypeError(
      `A soft delete's time must be non-negative integer milliseconds, got ${now}`,
    );
  return now;
}
