/**
 * Changes and deletes by filter (SPEC §12): `PATCH /data/{entity}?<filters>` with `{"data":
 * {fields}}` and `DELETE /data/{entity}?<filters>` act on every matching record in one
 * transaction, each record through the same write as a single PATCH or DELETE (hooks, owner
 * rule, events, integrity of references).
 *
 * Decisions where the spec leaves room:
 * - The filters are those of a list (listing/filters.ts), through references included; `orderBy`,
 *   `start`, `limit`, `cursor`, `expand` and `expandLimit` mean nothing here and are a 400. At
 *   least one filter is required; the owner rule's restriction does not count as one.
 * - `maxAffected` is an integer from 1 to 10 000 (default 1 000). More matching records: a 400
 *   naming both numbers, and nothing changes.
 * - A change by filter may not change key fields (400): every matching record would get the same
 *   key. Rename records one by one (PUT or PATCH by id).
 * - Records are changed in key order. A change that leaves a record exactly as it was still
 *   writes it (a new version and an event), as a single PATCH does.
 * - `If-Match` does not apply: each record is taken as the transaction reads it.
 */
import type { Context } from 'koa';
import { ownerFilter, ownerScopeOf } from './auth/owner.js';
import type { DataContext } from './data-context.js';
import type { EntityDefinition } from './definition.js';
import type { FilterGroup, StoredRecord } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import { BadRequestError, HttpError, quoteInput } from './errors.js';
import type { EntityHooks } from './hooks.js';
import { referenceTargets } from './listing.js';
import { parseFilters, RESERVED } from './listing/filters.js';
import {
  mergeFields,
  planUpdate,
  readDataPayload,
  readOne,
  readPatchFields,
  removeStored,
  storeRecord,
  subjectOf,
  toFields,
} from './operations.js';
import { atomically } from './transaction.js';

/** `maxAffected` when the request gives none. */
export const DEFAULT_MAX_AFFECTED = 1000;
/** The largest `maxAffected` a request may give. */
export const MAX_AFFECTED_LIMIT = 10_000;

/** How many records of a change or delete by filter are written together (see `patchRecords`). */
const CHANGE_WINDOW = 1_000;

/** How often a record that keeps changing under a change by filter is read again. */
const MAX_ATTEMPTS = 5;

/** PATCH /data/{entity}?<filters>: changes the given fields of every matching record. */
export async function patchRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  const selection = parseSelection(definition, ctx.querystring, data);
  const fields = readPatchFields(definition, await readDataPayload(ctx, data));
  const keys = definition.table.key.filter((name) => Object.hasOwn(fields, name));
  if (keys.length > 0) {
    throw new BadRequestError(
      `A change by filter cannot change key field ${keys.join(', ')} of Entity ${definition.name}: change such records one by one`,
    );
  }
  const now = data.now();
  // Without update hooks, the records are written a window at a time by the driver's
  // `updateMany` when it has one (one statement per window on PostgreSQL, instead of one
  // statement and savepoint per record); a window it does not write is written one by one.
  const updateMany = data.driver.updateMany?.bind(data.driver);
  const together =
    updateMany !== undefined && hooks.beforeUpdate === undefined && hooks.afterUpdate === undefined;
  const changed = await atomically(data.driver, async () => {
    const records: object[] = [];
    const changeOne = async (found: StoredRecord): Promise<void> => {
      let current: StoredRecord | undefined = found;
      for (let attempt = 0; current !== undefined; attempt++) {
        if (attempt === MAX_ATTEMPTS) throw keptChanging(definition, found);
        const record = readOne(definition, mergeFields(current.record, fields));
        const written = await storeRecord(ctx, data, definition, current, record, hooks, { now });
        if (written !== undefined) {
          records.push(written.record);
          break;
        }
        // Changed or deleted since it was read: taken as it is now (gone: left out).
        current = await data.driver.get(definition.table, definition.keyOf(found.record as R));
      }
    };
    const all = await matching(ctx, data, definition, selection);
    for (let start = 0; start < all.length; start += CHANGE_WINDOW) {
      const window = all.slice(start, start + CHANGE_WINDOW);
      if (!together) {
        for (const found of window) await changeOne(found);
        continue;
      }
      // As storeRecord does, up to the write.
      const writes = window.map((current) => ({
        current,
        write: planUpdate(
          ctx,
          data,
          definition,
          current,
          readOne(definition, mergeFields(current.record, fields)),
          { now },
        ),
      }));
      const versions = await updateMany(
        definition.table,
        writes.map(({ current, write }) => ({
          key: definition.keyOf(current.record as R),
          record: toFields(write.record),
          expectedVersion: current.version,
          previous: current.record,
        })),
        now,
        { by: subjectOf(ctx) },
      );
      if (versions === undefined) {
        for (const found of window) await changeOne(found);
        continue;
      }
      for (const { write } of writes) records.push(write.record);
    }
    return records;
  });
  answer(ctx, changed, now);
}

/** DELETE /data/{entity}?<filters>: deletes every matching record and answers them as they were. */
export async function deleteRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  const selection = parseSelection(definition, ctx.querystring, data);
  const now = data.now();
  // Without delete hooks, the records are deleted a window at a time by the driver's `deleteMany`
  // when it has one (one statement per window on PostgreSQL); a window it declines — a record
  // changed meanwhile, or a table whose deletes soft-delete, keep a history or cascade — is
  // deleted one by one.
  const deleteMany = data.driver.deleteMany?.bind(data.driver);
  const together =
    deleteMany !== undefined && hooks.beforeDelete === undefined && hooks.afterDelete === undefined;
  const deleted = await atomically(data.driver, async () => {
    const records: object[] = [];
    const deleteOne = async (found: StoredRecord): Promise<void> => {
      let current: StoredRecord | undefined = found;
      for (let attempt = 0; current !== undefined; attempt++) {
        if (attempt === MAX_ATTEMPTS) throw keptChanging(definition, found);
        const gone = await removeStored(ctx, data, definition, current, hooks, now);
        if (gone !== undefined) {
          records.push(gone.record);
          break;
        }
        // Changed since it was read, or deleted meanwhile (by a cascade of an earlier delete).
        current = await data.driver.get(definition.table, definition.keyOf(found.record as R));
      }
    };
    const all = await matching(ctx, data, definition, selection);
    for (let start = 0; start < all.length; start += CHANGE_WINDOW) {
      const window = all.slice(start, start + CHANGE_WINDOW);
      const gone = together
        ? await deleteMany(
            definition.table,
            window.map((found) => ({
              key: definition.keyOf(found.record as R),
              expectedVersion: found.version,
            })),
            now,
          )
        : undefined;
      if (gone === undefined) {
        for (const found of window) await deleteOne(found);
        continue;
      }
      for (const stored of gone) records.push(stored.record);
    }
    return records;
  });
  answer(ctx, deleted, now);
}

/** The filters and the bound of a change by filter. */
interface Selection {
  readonly filters: FilterGroup[];
  readonly maxAffected: number;
}

/** Reads the query string of a change by filter: the filters and `maxAffected`. */
function parseSelection(
  definition: EntityDefinition<object>,
  querystring: string,
  data: DataContext,
): Selection {
  const params = new URLSearchParams(querystring);
  for (const name of params.keys()) {
    if (RESERVED.has(name)) {
      throw new BadRequestError(
        `Parameter ${quoteInput(name)} does not apply to a change by filter; give filters and maxAffected`,
      );
    }
  }
  const given = params.getAll('maxAffected');
  params.delete('maxAffected');
  if (given.length > 1) throw new BadRequestError('Parameter maxAffected may be given only once');
  let maxAffected = DEFAULT_MAX_AFFECTED;
  if (given.length === 1) {
    const text = given[0]!;
    maxAffected = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
    if (!(maxAffected >= 1 && maxAffected <= MAX_AFFECTED_LIMIT)) {
      throw new BadRequestError(
        `Parameter maxAffected must be an integer from 1 to ${MAX_AFFECTED_LIMIT}, not ${quoteInput(text)}`,
      );
    }
  }
  const filters = parseFilters(definition, params, referenceTargets(definition, data));
  if (filters.length === 0)
    throw new BadRequestError('A filter is required to change several records');
  return { filters, maxAffected };
}

/**
 * The records a change by filter acts on, in key order, read in its transaction: the matching
 * ones the caller may write (owner rule). More than `maxAffected`: a 400, nothing changes.
 */
async function matching(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<object>,
  selection: Selection,
): Promise<StoredRecord[]> {
  const owner = ownerFilter(definition, ownerScopeOf(ctx));
  if (owner === 'nothing') return [];
  const filters = owner === undefined ? selection.filters : [...selection.filters, owner];
  const { maxAffected } = selection;
  const rows = await data.driver.list(definition.table, {
    filters,
    orderBy: [],
    limit: maxAffected + 1,
  });
  if (rows.length > maxAffected) {
    const count = await data.driver.count(definition.table, { filters });
    throw new BadRequestError(
      `${count} records of Entity ${definition.name} match the filters, more than maxAffected (${maxAffected}): nothing was changed`,
    );
  }
  return rows;
}

function keptChanging(definition: EntityDefinition<object>, found: StoredRecord): HttpError {
  const id = definition.idOf(found.record);
  return new HttpError(
    409,
    `EntityRecord with id ${quoteInput(id)} of ${definition.name} kept changing during the change by filter; retry the request`,
  );
}

/** `data`: the records changed (or deleted, as they were); `meta.count` their number. */
function answer(ctx: Context, records: readonly object[], now: number): void {
  ctx.body = successBody(records, {
    count: records.length,
    ...(records.length === 0 ? {} : recordMeta(now)),
  });
}
