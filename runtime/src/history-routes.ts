/**
 * The reads of record history (SPEC §13) on an entity with `history: true`:
 * `GET /data/{entity}/{id}/history` (the kept versions, newest first, paged with `limit` and
 * `cursor`) and `GET /data/{entity}/{id}?asOf=<ISO time>` (the record as it was then). Both are
 * reads by key: the GET_BYID roles and the owner rule apply, checked against the record's newest
 * version (history) or the version answered (asOf), so someone else's record reads as absent.
 */
import type { Context } from 'koa';
import { ownerScopeOf, owns } from './auth/owner.js';
import type { DataContext } from './data-context.js';
import type { EntityDefinition } from './definition.js';
import type { HistoryEntry, KeyValues } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import { BadRequestError, quoteInput, RecordNotFoundError } from './errors.js';
import { decodeRecordId, keyOfId, queryMayHold, rawRecordId, recordId } from './http/paths.js';

/** Versions a page of history holds when the request names no limit. */
export const DEFAULT_HISTORY_LIMIT = 100;
/** The largest `limit` of a page of history. */
export const MAX_HISTORY_LIMIT = 1000;

const HISTORY_SUFFIX = '/history';

/** The record id whose history a request path asks for, when it asks for one (`…/history`). */
export function historyRequestId(
  definition: EntityDefinition<object>,
  path: string,
): string | undefined {
  if (definition.table.history !== true) return undefined;
  // A literal slash separates `history`; `%2Fhistory` belongs to the record id.
  const raw = rawRecordId(path);
  if (!raw.endsWith(HISTORY_SUFFIX) || raw.length === HISTORY_SUFFIX.length) return undefined;
  const id = decodeRecordId(raw.slice(0, -HISTORY_SUFFIX.length));
  if (id === undefined)
    throw new BadRequestError(
      `Record id ${quoteInput(raw)} in the path is not valid percent-encoding`,
    );
  return id;
}

/** The `asOf` of a GET by key, as Unix ms, or `undefined` when the request has none. */
export function asOfOf(ctx: Context, definition: EntityDefinition<object>): number | undefined {
  if (!queryMayHold(ctx.querystring, 'asOf')) return undefined;
  const values = new URLSearchParams(ctx.querystring).getAll('asOf');
  if (values.length === 0) return undefined;
  if (definition.table.history !== true)
    throw new BadRequestError(
      `Parameter asOf needs the history of Entity ${definition.name}, which keeps none (history: true in the schema)`,
    );
  const text = values[0]!;
  const time = ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (values.length > 1 || Number.isNaN(time))
    throw new BadRequestError(
      `Parameter asOf must be given once, as an ISO 8601 time like 2026-01-31T12:00:00Z, not ${quoteInput(text)}`,
    );
  return time;
}

/** An ISO 8601 date-time with a zone (Z or an offset), seconds and fractions optional. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** GET /data/{entity}/{id}?asOf=: the record as it was at `time`; 404 if it did not exist then. */
export async function getRecordAsOf<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  time: number,
): Promise<void> {
  const key = keyOfId(definition, id);
  const versionAt = data.driver.versionAt;
  if (key === undefined || versionAt === undefined)
    throw new RecordNotFoundError(definition.name, id);
  const entry = await versionAt.call(data.driver, definition.table, key, time);
  if (entry === undefined || entry.op === 'deleted' || entry.op === 'purged')
    throw new RecordNotFoundError(definition.name, id);
  const record = JSON.parse(entry.record) as object;
  if (!owns(definition, ownerScopeOf(ctx), record))
    throw new RecordNotFoundError(definition.name, id);
  // No ETag: a past version is no precondition for a write.
  ctx.body = successBody(record, recordMeta(entry.timeUnix));
}

/** GET /data/{entity}/{id}/history: the kept versions of a record, newest first. */
export async function getRecordHistory<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
): Promise<void> {
  const id = historyRequestId(definition, ctx.path);
  if (id === undefined) throw new RecordNotFoundError(definition.name, recordId(ctx));
  const params = new URLSearchParams(ctx.querystring);
  const limit = readLimit(params.getAll('limit'));
  const before = readCursor(params.getAll('cursor'));
  const key = keyOfId(definition, id);
  const history = data.driver.history;
  if (key === undefined || history === undefined)
    throw new RecordNotFoundError(definition.name, id);
  const read = (count: number, below?: number): Promise<HistoryEntry[]> =>
    history.call(data.driver, definition.table, key as KeyValues, count, below);
  const entries = await read(limit + 1, before);
  const newest = before === undefined ? entries[0] : (await read(1))[0];
  if (newest === undefined) throw new RecordNotFoundError(definition.name, id);
  // Someone else's record (owner rule) reads as absent, as by key.
  if (!owns(definition, ownerScopeOf(ctx), JSON.parse(newest.record) as object))
    throw new RecordNotFoundError(definition.name, id);
  const more = entries.length > limit;
  const page = more ? entries.slice(0, limit) : entries;
  const meta: Record<string, unknown> = { limit };
  if (more) meta['next'] = String(page[page.length - 1]!.version);
  ctx.body = successBody(
    page.map((entry) => ({
      version: entry.version,
      op: entry.op,
      timeUnix: entry.timeUnix,
      timeISO: new Date(entry.timeUnix).toISOString(),
      by: entry.by,
      record: JSON.parse(entry.record) as unknown,
    })),
    meta,
  );
}

function readLimit(values: readonly string[]): number {
  if (values.length === 0) return DEFAULT_HISTORY_LIMIT;
  const limit = values.length === 1 && /^\d{1,7}$/.test(values[0]!) ? Number(values[0]) : 0;
  if (limit < 1 || limit > MAX_HISTORY_LIMIT)
    throw new BadRequestError(
      `Parameter limit of a history must be given once, as a whole number from 1 to ${MAX_HISTORY_LIMIT}`,
    );
  return limit;
}

function readCursor(values: readonly string[]): number | undefined {
  if (values.length === 0) return undefined;
  const cursor = values.length === 1 && /^[1-9]\d{0,14}$/.test(values[0]!) ? Number(values[0]) : 0;
  if (cursor < 1)
    throw new BadRequestError(
      'Parameter cursor of a history must be given once, as the meta.next of the previous page',
    );
  return cursor;
}
