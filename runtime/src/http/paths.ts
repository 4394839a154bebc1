/**
 * How a request on `/data` names what it acts on: path → entity segment → record id → key. Written
 * once here and used by the entity routers, the service's dispatcher, the operations, the custom
 * routes' store and the fast path of GET by key, so that all of them read a path the same way.
 */
import type { Context } from 'koa';
import type { EntityDefinition } from '../definition.js';
import type { KeyValues } from '../driver.js';
import { BadRequestError, quoteInput } from '../errors.js';

/** The prefix of every data route. */
export const DATA_PREFIX = '/data/';

/** The entity segment of a `/data/{entity}[/…]` path as written (not decoded); `''` when none. */
export function entitySegment(path: string): string {
  const end = path.indexOf('/', DATA_PREFIX.length);
  return path.slice(DATA_PREFIX.length, end === -1 ? undefined : end);
}

/**
 * The record id part of `/data/{entity}/{id}` as written (still percent-encoded): the rest of the
 * path after the entity, so an id may contain `/`, without one trailing slash; `''` for the
 * collection path.
 */
export function rawRecordId(path: string): string {
  const slash = path.indexOf('/', DATA_PREFIX.length);
  if (slash === -1) return '';
  const raw = path.slice(slash + 1);
  return raw.endsWith('/') ? raw.slice(0, -1) : raw;
}

/**
 * Whether `querystring` may hold parameter `name`: a quick test before parsing it (true also for
 * `expanded=1` when asked for `expand`). A name may be percent-encoded (`%65xpand` is `expand`):
 * a query with escapes is parsed to tell.
 */
export function queryMayHold(querystring: string, name: string): boolean {
  if (querystring.includes(name)) return true;
  return querystring.includes('%') && new URLSearchParams(querystring).has(name);
}

/** Whether a `/data/{entity}/…` path names a record rather than the collection. */
export function isRecordPath(path: string): boolean {
  return rawRecordId(path) !== '';
}

/** The percent-decoded record id; `undefined` when the text is not valid percent-encoding. */
export function decodeRecordId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The key of the record `id` names, or `undefined` when it names none: another id than a
 * single-record entity's one, or key text that does not split into the key's fields. Key values
 * that do not convert throw the 400 of a bad value, as in a request body.
 */
export function keyOfId(definition: EntityDefinition<object>, id: string): KeyValues | undefined {
  if (definition.singleRecordId !== undefined && id !== definition.singleRecordId) return undefined;
  return definition.parseId(id);
}

/**
 * The record id of a request on `/data/{entity}/{id}`: the rest of the path after the entity,
 * percent-decoded (so an id may contain `/`), without a trailing slash.
 */
export function recordId(ctx: Pick<Context, 'path'>): string {
  const raw = rawRecordId(ctx.path);
  const id = decodeRecordId(raw);
  if (id === undefined)
    throw new BadRequestError(
      `Record id ${quoteInput(raw)} in the path is not valid percent-encoding`,
    );
  return id;
}
