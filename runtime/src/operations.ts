/**
 * The record operations behind the generated routes: insert, get, replace, patch and delete by
 * key, with conversion, access checks, versions, ETags and conditional requests.
 */
import type { Context } from 'koa';
import type { DataContext } from './data-context.js';
import type { EntityDefinition } from './definition.js';
import type {
  DeleteOptions,
  FilterGroup,
  KeyValues,
  StoredFields,
  StoredRecord,
  TableDescriptor,
  UpdateResult,
} from './driver.js';
import { recordBodyOfJson, recordMeta, successBody } from './envelope.js';
import {
  BadRequestError,
  DeletedKeyError,
  HttpError,
  isDuplicateKeyError,
  isHttpError,
  isUniqueViolationError,
  KeyExistsError,
  MAX_INDEXED_BYTES,
  PreconditionFailedError,
  quoteInput,
  RecordNotFoundError,
  type UniqueViolationError,
} from './errors.js';
import { ownerScopeOf, owns, requireOwned, withOwner } from './auth/owner.js';
import type { EntityHooks } from './hooks.js';
import { checkRecordDepth, readJsonBody } from './http/body.js';
import type { RequestState } from './http/errors.js';
import { keyOfId, queryMayHold, recordId } from './http/paths.js';
import { asOfOf, getRecordAsOf } from './history-routes.js';
import { withInsertDefaults } from './insert-defaults.js';
import {
  generatedFieldsOf,
  hasGenerated,
  stampServerSet,
  withGeneratedKeys,
  withoutServerSet,
} from './generated.js';
import { compareDecimal } from './constraints.js';
import { sameJsonValue } from './json-equal.js';
import { withRecordLock } from './record-lock.js';
import { atomically } from './transaction.js';
import { ReferenceMissingError } from './references.js';
import { authorizeExpand, expandedEntityTag, expandRecords, parseExpand } from './expand.js';
import { parseFields, project } from './listing/fields.js';
import type { Issue } from './issues.js';

/** An entity's definition, with its record type erased for the dispatcher. */
type AnyDefinition = EntityDefinition<object>;

/** Read-modify-write operations retry this often when another writer gets in between. */
const MAX_WRITE_ATTEMPTS = 5;

/**
 * POST /data/{entity}: inserts `{data: record}` or, in one transaction, `{data: [records]}`.
 * `beforeInsert` runs for every record before anything is written, `afterInsert` for every record
 * once the whole insert succeeded.
 */
export async function insertRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  const mode = onConflictOf(ctx);
  const payload = await readDataPayload(ctx, data);
  if (mode !== undefined) return await upsertRecords(ctx, data, definition, hooks, mode, payload);
  const owner = ownerScopeOf(ctx);
  const subject = (ctx.state as RequestState).principal?.subject;
  const generated = hasGenerated(definition);
  if (!Array.isArray(payload)) {
    const body = generated
      ? (
          await withGeneratedKeys(definition, [payload], false, true, sequenceOf(data, definition))
        )[0]
      : payload;
    let record = readOne(
      definition,
      withOwner(definition, owner, withInsertDefaults(definition, body)),
    );
    if (hooks.beforeInsert !== undefined)
      record = readOne(definition, (await hooks.beforeInsert(record, ctx)) ?? record);
    requireOwned(definition, owner, record);
    const now = data.now();
    if (generated) stampServerSet(definition, record, undefined, now, subject);
    try {
      await data.driver.insert(definition.table, [toFields(record)], now, {
        by: subjectOf(ctx),
      });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw await keyTaken(data, definition, record);
      if (isUniqueViolationError(error))
        throw await uniqueClash(ctx, data, definition, [record], error, false);
      throw error;
    }
    await hooks.afterInsert?.(record, ctx);
    sendRecord(ctx, record, now, 1);
    return;
  }
  // Keys the server generates for every record of the list are distinct: not compared again.
  const keysDistinct = generated && keysAllGenerated(definition, payload);
  const bodies = generated
    ? await withGeneratedKeys(definition, payload, true, true, sequenceOf(data, definition))
    : payload;
  // Without a beforeInsert hook, a value repeated within the list is found by the unique index
  // itself: the insert fails, and the same 400 as a check beforehand is then made of the list.
  const uniqueLater =
    hooks.beforeInsert === undefined && (definition.table.unique ?? []).length > 0;
  let records = readMany(
    definition,
    bodies.map((item) => withOwner(definition, owner, withInsertDefaults(definition, item))),
    { keysDistinct, uniqueLater },
  );
  if (hooks.beforeInsert !== undefined) {
    const changed: unknown[] = [];
    for (const record of records) changed.push((await hooks.beforeInsert(record, ctx)) ?? record);
    records = readMany(definition, changed);
  }
  /** The 400 of the values the list repeats, which comes before any other error. */
  const repeated = (error: unknown): unknown =>
    (uniqueLater ? uniqueRepeats(definition, records) : undefined) ?? error;
  try {
    for (const record of records) requireOwned(definition, owner, record);
  } catch (error) {
    throw repeated(error);
  }
  const now = data.now();
  if (generated)
    for (const record of records) stampServerSet(definition, record, undefined, now, subject);
  if (records.length > 0) {
    try {
      await data.driver.insert(definition.table, records.map(toFields), now, {
        by: subjectOf(ctx),
      });
    } catch (failure) {
      const error = repeated(failure);
      if (error !== failure) throw error;
      if (isDuplicateKeyError(error))
        throw await duplicateInList(data, definition, records, error.index);
      if (isUniqueViolationError(error))
        throw await uniqueClash(ctx, data, definition, records, error, true);
      // A list of one is still a list: its record is named by position.
      if (error instanceof ReferenceMissingError && error.index === undefined) throw error.at(0);
      throw error;
    }
  }
  if (hooks.afterInsert !== undefined)
    for (const record of records) await hooks.afterInsert(record, ctx);
  ctx.body = successBody(records, recordMeta(now));
}

/** GET /data/{entity}/{id}: reads one record; answers 304 to a matching `If-None-Match`. */
export async function getRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
): Promise<void> {
  // An entity with history also answers `?asOf=` (SPEC §13).
  const asOf = asOfOf(ctx, definition);
  if (asOf !== undefined) return getRecordAsOf(ctx, data, definition, id, asOf);
  const plan = queryMayHold(ctx.querystring, 'expand')
    ? parseExpand(definition, new URLSearchParams(ctx.querystring), data)
    : undefined;
  if (plan !== undefined) authorizeExpand(plan, (ctx.state as RequestState).principal);
  const selection =
    ctx.querystring !== ''
      ? parseFields(definition, new URLSearchParams(ctx.querystring), plan)
      : undefined;
  const stored = await findStored(data, definition, id);
  // Someone else's record (owner rule) reads as absent, never as forbidden.
  if (stored === undefined || !owns(definition, ownerScopeOf(ctx), stored.record))
    throw new RecordNotFoundError(definition.name, id);
  if (plan !== undefined || selection !== undefined) {
    let record: unknown = { ...stored.record };
    if (plan !== undefined)
      await expandRecords(
        data,
        definition,
        [record as Record<string, unknown>],
        plan,
        (ctx.state as RequestState).principal,
      );
    if (selection !== undefined) record = project(record, selection);
    // The tag of this representation: the version and what is embedded or selected.
    const json = JSON.stringify(record);
    const etag = expandedEntityTag(stored.version, json);
    if (notModified(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      ctx.set('ETag', etag);
      return;
    }
    ctx.set('ETag', etag);
    ctx.type = 'json';
    ctx.body = recordBodyOfJson(json, stored.updatedAt);
    return;
  }
  const etag = entityTag(stored.version);
  if (notModified(ctx.get('If-None-Match'), etag)) {
    ctx.status = 304;
    ctx.set('ETag', etag);
    return;
  }
  sendRecord(ctx, stored.record, stored.updatedAt, stored.version);
}

/**
 * PUT /data/{entity}/{id}: replaces the whole record (fields left out are removed), renames it
 * when the body's key differs from `id`, and creates it when absent and the body's key is `id`.
 */
export async function replaceRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  const payload = await readDataPayload(ctx, data);
  if (Array.isArray(payload)) throw new BadRequestError('"data" must be one record object for PUT');
  const owner = ownerScopeOf(ctx);
  const input = withOwner(
    definition,
    owner,
    withSingleRecordKey(definition, withoutServerSet(definition, payload)),
  );
  // The body is validated up front as the record a create would store (defaults filled in); a
  // replace stores the body as it is, without defaults (SPEC §16).
  const filled = withInsertDefaults(definition, input);
  const created = readOne(definition, filled);
  const build = (existing: StoredFields | undefined): R =>
    existing === undefined || filled === input ? created : readOne(definition, input);
  await writeRecord(ctx, data, definition, id, build, true, hooks);
}

/**
 * PATCH /data/{entity}/{id}: changes only the given fields (`null` removes an optional field),
 * then validates the merged record as a whole.
 */
export async function patchRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  const payload = readPatchFields(definition, await readDataPayload(ctx, data));
  const createIfAbsent = definition.singleRecordId !== undefined;
  await writeRecord(
    ctx,
    data,
    definition,
    id,
    (existing) => {
      const merged = mergeFields(existing, payload);
      const owned =
        existing === undefined ? withOwner(definition, ownerScopeOf(ctx), merged) : merged;
      return readOne(definition, withSingleRecordKey(definition, owned));
    },
    createIfAbsent,
    hooks,
  );
}

/**
 * The fields of a PATCH body (`{"data": {fields}}`): an object, every name a field of the entity
 * (checked before merging: `merged.__proto__ = …` would change the prototype, not add a field).
 */
export function readPatchFields(
  definition: AnyDefinition,
  payload: unknown,
): Record<string, unknown> {
  if (!isPlainObject(payload)) {
    throw new BadRequestError('"data" must be an object holding the fields to change');
  }
  const unknown: Issue[] = Object.keys(payload)
    .filter((name) => !Object.hasOwn(definition.fields, name))
    .map((name) => ({
      path: [name],
      code: 'unknown_field',
      message: `Unknown field ${quoteInput(name)}`,
    }));
  if (unknown.length > 0)
    throw new BadRequestError(singleRecordReason(definition, payload, unknown), unknown);
  return withoutServerSet(definition, payload) as Record<string, unknown>;
}

/** PATCH semantics: `existing` with the given fields set, and those given as `null` removed. */
export function mergeFields(
  existing: StoredFields | undefined,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = existing === undefined ? {} : { ...existing };
  for (const [name, value] of Object.entries(fields)) {
    if (value === null) delete merged[name];
    else
      Object.defineProperty(merged, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return merged;
}

/** DELETE /data/{entity}/{id}: deletes the record and returns it; meta time is the deletion time. */
export function deleteRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  hooks: EntityHooks<R> = {},
): Promise<void> {
  return withRecordLock(definition.table.table, lockId(definition, id), () =>
    deleteRecordNow(ctx, data, definition, id, hooks),
  );
}

async function deleteRecordNow<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  hooks: EntityHooks<R>,
): Promise<void> {
  const key = definition.parseId(id);
  if (key === undefined) throw new RecordNotFoundError(definition.name, id);
  const ifMatch = ctx.get('If-Match');
  const owner = ownerScopeOf(ctx);
  const purge = purgeRequested(ctx, definition);
  const options: DeleteOptions = {
    ...(purge ? { mode: 'purge' } : {}),
    by: subjectOf(ctx),
  };
  // Without If-Match, a beforeDelete hook or an owner rule there is nothing to look at first:
  // delete directly. Otherwise read the record, check it, and delete exactly that version.
  const readFirst = ifMatch !== '' || hooks.beforeDelete !== undefined || owner !== undefined;
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    if (readFirst) {
      // A purge also removes a record that is soft-deleted already.
      const current =
        (await data.driver.get(definition.table, key)) ??
        (purge ? await data.driver.getDeleted?.(definition.table, key) : undefined);
      if (
        ifMatch !== '' &&
        (current === undefined || !tagListMatches(ifMatch, entityTag(current.version)))
      )
        throw new PreconditionFailedError(preconditionReason(definition, id));
      if (current === undefined || !owns(definition, owner, current.record))
        throw new RecordNotFoundError(definition.name, id);
      const now = data.now();
      const deleted = await removeStored(ctx, data, definition, current, hooks, now, options);
      if (deleted === undefined) {
        if (ifMatch !== '') throw new PreconditionFailedError(preconditionReason(definition, id));
        continue; // changed or deleted since the hook saw it: look again
      }
      ctx.body = successBody(deleted.record, recordMeta(now));
      return;
    }
    const now = data.now();
    const deleted = await data.driver.delete(definition.table, key, undefined, now, options);
    if (deleted === undefined) throw new RecordNotFoundError(definition.name, id);
    await hooks.afterDelete?.(deleted.record as R, ctx);
    ctx.body = successBody(deleted.record, recordMeta(now));
    return;
  }
  throw new HttpError(
    409,
    `EntityRecord with id ${quoteInput(id)} of ${definition.name} kept changing during the delete; retry the request`,
  );
}

/**
 * POST /data/{entity}/{id}/restore (SPEC §13): makes a soft-deleted record live again and
 * returns it; 404 when no deleted record has that id (the owner rule applies as to DELETE).
 */
export function restoreRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
): Promise<void> {
  const id = restoredId(ctx);
  return withRecordLock(definition.table.table, lockId(definition, id), async () => {
    const key = keyOfId(definition, id);
    const restore = data.driver.restore;
    if (key === undefined || restore === undefined)
      throw new RecordNotFoundError(definition.name, id);
    const owner = ownerScopeOf(ctx);
    if (owner !== undefined) {
      const deleted = await data.driver.getDeleted?.(definition.table, key);
      if (deleted === undefined || !owns(definition, owner, deleted.record))
        throw new RecordNotFoundError(definition.name, id);
    }
    const now = data.now();
    const restored = await restore.call(data.driver, definition.table, key, now, {
      by: subjectOf(ctx),
    });
    if (restored === undefined) throw new RecordNotFoundError(definition.name, id);
    sendRecord(ctx, restored.record, now, restored.version);
  });
}

/** The record id of a restore request: the path's id without its `/restore`. */
function restoredId(ctx: Context): string {
  const id = recordId(ctx);
  return id.endsWith(RESTORE_SUFFIX) ? id.slice(0, -RESTORE_SUFFIX.length) : id;
}

const RESTORE_SUFFIX = '/restore';

/** `?purge=true` on DELETE: remove for good, also a soft-deleted record (SPEC §13). */
function purgeRequested(ctx: Context, definition: AnyDefinition): boolean {
  const values = new URLSearchParams(ctx.querystring).getAll('purge');
  if (values.length === 0) return false;
  if (values.length > 1 || (values[0] !== 'true' && values[0] !== 'false'))
    throw new BadRequestError('Parameter purge must be given once, as true or false');
  if (values[0] === 'true' && definition.table.softDelete !== true) return false;
  return values[0] === 'true';
}

/** The caller's subject (`null`: anonymous, or a service without access rules). */
export function subjectOf(ctx: Context): string | null {
  return (ctx.state as RequestState).principal?.subject ?? null;
}

/** Whether the key of `record` belongs to a soft-deleted record. */
async function isDeleted(
  data: DataContext,
  definition: AnyDefinition,
  record: object,
): Promise<boolean> {
  if (definition.table.softDelete !== true || data.driver.getDeleted === undefined) return false;
  return (await data.driver.getDeleted(definition.table, definition.keyOf(record))) !== undefined;
}

/** The 400 of a write whose key another record holds: a live one, or a soft-deleted one. */
async function keyTaken(
  data: DataContext,
  definition: AnyDefinition,
  record: object,
): Promise<HttpError> {
  const id = definition.idOf(record);
  return (await isDeleted(data, definition, record))
    ? new DeletedKeyError(definition.name, id)
    : new KeyExistsError(definition.name, id);
}

/**
 * The shared part of PUT and PATCH: read the current version, build the new record from it,
 * write it back only if nobody else wrote in between (retrying if they did).
 */
function writeRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  build: (existing: StoredFields | undefined) => R,
  createIfAbsent: boolean,
  hooks: EntityHooks<R>,
): Promise<void> {
  return withRecordLock(definition.table.table, lockId(definition, id), () =>
    writeRecordNow(ctx, data, definition, id, build, createIfAbsent, hooks),
  );
}

async function writeRecordNow<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  id: string,
  build: (existing: StoredFields | undefined) => R,
  createIfAbsent: boolean,
  hooks: EntityHooks<R>,
): Promise<void> {
  const key = keyOfId(definition, id);
  if (key === undefined) throw new RecordNotFoundError(definition.name, id);
  const ifMatch = ctx.get('If-Match');
  const owner = ownerScopeOf(ctx);
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const found = await data.driver.get(definition.table, key);
    // Someone else's record (owner rule) is treated as absent: PUT may not take it over.
    if (found !== undefined && !owns(definition, owner, found.record))
      throw new RecordNotFoundError(definition.name, id);
    const existing = found;
    if (
      ifMatch !== '' &&
      (existing === undefined || !tagListMatches(ifMatch, entityTag(existing.version)))
    ) {
      throw new PreconditionFailedError(preconditionReason(definition, id));
    }
    if (existing === undefined && !createIfAbsent)
      throw new RecordNotFoundError(definition.name, id);
    // Creating through PUT or PATCH needs the NEW role as well as UPDATE.
    if (existing === undefined) (ctx.state as RequestState).authorizeCreate?.();
    const record = build(existing?.record);
    const written = await storeRecord(ctx, data, definition, existing, record, hooks, {
      createAs: id,
      keepKey: definition.singleRecordId === undefined ? undefined : id,
    });
    if (written !== undefined) {
      sendRecord(ctx, written.record, written.time, written.version);
      return;
    }
    // Another writer created, changed or deleted the record since we read it: look again.
  }
  throw new HttpError(
    409,
    `EntityRecord with id ${quoteInput(id)} of ${definition.name} kept changing during the update; retry the request`,
  );
}

/** What the write of one record did (`storeRecord`). */
export interface RecordWrite<R> {
  readonly fate: 'created' | 'updated' | 'unchanged';
  /** The record as stored. */
  readonly record: R;
  readonly version: number;
  /** Unix time in milliseconds of the write; for an unchanged record, of its last write. */
  readonly time: number;
}

/** How `storeRecord` writes. */
export interface StoreOptions {
  /** A record created must have this id (PUT and PATCH create only the record they name). */
  readonly createAs?: string;
  /** The id of a single-record entity's one record: an update may not change it. */
  readonly keepKey?: string;
  /** An update that would store the record exactly as it is writes nothing (`unchanged`). */
  readonly skipUnchanged?: boolean;
  /** The time of the write (default: the clock at the write). */
  readonly now?: number;
}

/**
 * Writes one record whose stored state was just read (`existing`; `undefined`: absent): runs the
 * before-hook of its fate (beforeInsert or beforeUpdate), checks the owner rule, inserts it or
 * updates exactly the version read, then runs the after-hook. Resolves to `undefined` when another
 * writer created, changed or deleted the record since it was read: the caller reads it again and
 * retries. Every write of one record — PUT, PATCH, upsert, change by filter — goes through here.
 */
export async function storeRecord<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  existing: StoredRecord | undefined,
  built: R,
  hooks: EntityHooks<R>,
  options: StoreOptions = {},
): Promise<RecordWrite<R> | undefined> {
  let record = built;
  if (existing === undefined) {
    record = await beforeCreate(ctx, definition, record, hooks);
    if (options.createAs !== undefined && definition.idOf(record) !== options.createAs)
      throw new RecordNotFoundError(definition.name, options.createAs);
    const now = options.now ?? data.now();
    stampServerSet(definition, record, undefined, now, subjectOf(ctx) ?? undefined);
    try {
      await data.driver.insert(definition.table, [toFields(record)], now, { by: subjectOf(ctx) });
    } catch (error) {
      if (isUniqueViolationError(error))
        throw await uniqueClash(ctx, data, definition, [record], error, false);
      if (!isDuplicateKeyError(error)) throw error;
      // A soft-deleted record keeps its key: it is restored, not overwritten (SPEC §13).
      if (await isDeleted(data, definition, record))
        throw new DeletedKeyError(definition.name, definition.idOf(record));
      return undefined; // created meanwhile: update it instead
    }
    await hooks.afterInsert?.(record, ctx);
    return { fate: 'created', record, version: 1, time: now };
  }
  const previous = existing.record as R;
  if (hooks.beforeUpdate !== undefined)
    record = readOne(definition, (await hooks.beforeUpdate(record, previous, ctx)) ?? record);
  const planned = planUpdate(ctx, data, definition, existing, record, options);
  if (planned.fate === 'unchanged') return planned;
  const now = planned.time;
  const id = definition.idOf(previous);
  let result: UpdateResult;
  try {
    result = await data.driver.update(
      definition.table,
      definition.keyOf(previous),
      toFields(record),
      existing.version,
      now,
      { by: subjectOf(ctx) },
    );
  } catch (error) {
    if (!isUniqueViolationError(error)) throw error;
    const newId = definition.idOf(record);
    if (newId !== id && (await data.driver.get(definition.table, definition.keyOf(record))))
      throw new KeyExistsError(definition.name, newId);
    throw await uniqueClash(ctx, data, definition, [record], error, false, id);
  }
  if (result.status === 'duplicate') throw await keyTaken(data, definition, record);
  if (result.status === 'conflict') return undefined;
  await hooks.afterUpdate?.(record, previous, ctx);
  return { fate: 'updated', record, version: result.version, time: now };
}

/**
 * The update of `existing` to `record` up to its write (`storeRecord`, after the beforeUpdate
 * hook): checks the owner rule and the key, and either finds the record unchanged (with
 * `skipUnchanged`) or stamps its server-set fields and answers the write to make (`updated`, at
 * the next version, at `time`).
 */
export function planUpdate<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  existing: StoredRecord,
  record: R,
  options: StoreOptions,
): RecordWrite<R> {
  const previous = existing.record as R;
  requireOwned(definition, ownerScopeOf(ctx), record);
  if (options.keepKey !== undefined && definition.idOf(record) !== options.keepKey) {
    throw new BadRequestError(
      `The key of single-record Entity ${definition.name} is always ${options.keepKey}; it cannot be changed`,
    );
  }
  if (
    generatedFieldsOf(definition).key?.generator === 'sequence' &&
    definition.idOf(record) !== definition.idOf(previous)
  ) {
    throw new BadRequestError(
      `The key of Entity ${definition.name} is generated by the database (sequence); it cannot be changed`,
    );
  }
  // Unchanged: the same fields, whatever the server sets (its fields are not the caller's).
  if (
    options.skipUnchanged === true &&
    sameJsonValue(withoutServerSet(definition, record), withoutServerSet(definition, previous))
  )
    return {
      fate: 'unchanged',
      record: previous,
      version: existing.version,
      time: existing.updatedAt,
    };
  const now = options.now ?? data.now();
  stampServerSet(definition, record, previous, now, subjectOf(ctx) ?? undefined);
  return { fate: 'updated', record, version: existing.version + 1, time: now };
}

/** What happens to a record about to be created: its `beforeInsert` hook, then the owner rule. */
async function beforeCreate<R extends object>(
  ctx: Context,
  definition: EntityDefinition<R>,
  built: R,
  hooks: EntityHooks<R>,
): Promise<R> {
  if (hooks.beforeInsert === undefined) return checkCreate(ctx, definition, built);
  refuseSequenceCreate(definition, built);
  const record = readOne(definition, (await hooks.beforeInsert(built, ctx)) ?? built);
  requireOwned(definition, ownerScopeOf(ctx), record);
  return record;
}

/** `beforeCreate` without a `beforeInsert` hook, at once. */
function checkCreate<R extends object>(
  ctx: Context,
  definition: EntityDefinition<R>,
  record: R,
): R {
  refuseSequenceCreate(definition, record);
  requireOwned(definition, ownerScopeOf(ctx), record);
  return record;
}

/** Only POST creates a record whose key the database generates (SPEC §16). */
function refuseSequenceCreate(definition: AnyDefinition, record: object): void {
  if (generatedFieldsOf(definition).key?.generator === 'sequence') {
    throw new BadRequestError(
      `EntityRecord with id ${quoteInput(definition.idOf(record))} not found for ${definition.name}; its records get their key from the database (sequence), so create them with POST`,
    );
  }
}

/**
 * Deletes one record exactly as it was just read (`current`, its version), with the hooks:
 * `beforeDelete`, the delete (and the integrity rules of references), `afterDelete`. Resolves to
 * `undefined` when another writer changed or deleted it since it was read.
 */
export async function removeStored<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  current: StoredRecord,
  hooks: EntityHooks<R>,
  now: number,
  options: DeleteOptions = { by: subjectOf(ctx) },
): Promise<StoredRecord | undefined> {
  const record = current.record as R;
  await hooks.beforeDelete?.(record, ctx);
  const key = definition.keyOf(record);
  const deleted = await data.driver.delete(definition.table, key, current.version, now, options);
  if (deleted === undefined) return undefined;
  await hooks.afterDelete?.(deleted.record as R, ctx);
  return deleted;
}

/**
 * How many records of an upsert are read, and at most written, together: as many as one pack of
 * the SQLite outbox holds, so that a run of creates or updates still packs its changes fully.
 */
const UPSERT_WINDOW = 1_000;

/** How an upsert treats a record whose key exists (`?onConflict=`, SPEC §12). */
export type ConflictMode = 'replace' | 'merge' | 'ignore';

const CONFLICT_MODES: readonly ConflictMode[] = ['replace', 'merge', 'ignore'];

/** The `onConflict` parameter of a POST, or `undefined` for a plain insert. */
export function onConflictOf(ctx: Pick<Context, 'querystring'>): ConflictMode | undefined {
  if (!queryMayHold(ctx.querystring, 'onConflict')) return undefined;
  const values = new URLSearchParams(ctx.querystring).getAll('onConflict');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new BadRequestError('Parameter onConflict may be given only once');
  const mode = values[0]!.toLowerCase();
  if (!(CONFLICT_MODES as readonly string[]).includes(mode)) {
    throw new BadRequestError(
      `Parameter onConflict must be replace, merge or ignore, not ${quoteInput(values[0]!)}`,
    );
  }
  return mode as ConflictMode;
}

/**
 * POST /data/{entity}?onConflict=replace|merge|ignore: inserts each record whose key is free and
 * replaces (PUT semantics), merges (PATCH semantics) or keeps the record whose key exists — all
 * in one transaction. `data` holds the stored records in request order, `meta` counts `created`,
 * `updated` and `unchanged` (a replace or merge that changes nothing writes nothing and counts as
 * unchanged). Someone else's record (owner rule) answers 404 as for PATCH.
 */
async function upsertRecords<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R>,
  mode: ConflictMode,
  payload: unknown,
): Promise<void> {
  const owner = ownerScopeOf(ctx);
  const list = Array.isArray(payload);
  // The server sets its fields (createdAt, updatedBy…) whatever the body says, as on PUT.
  const inputs: unknown[] = (list ? payload : [payload]).map((input: unknown) =>
    withoutServerSet(definition, input),
  );
  const keys = inputs.map((input, index) => upsertKey(definition, input, list ? index : undefined));
  // As inserts would store them: every record is checked before anything is written (in merge
  // mode a record may hold only some fields; it is checked once its fate is known).
  const filled = inputs.map((input) =>
    withInsertDefaults(definition, withOwner(definition, owner, input)),
  );
  const created: R[] | undefined =
    mode === 'merge'
      ? undefined
      : list
        ? readMany(definition, filled)
        : [readOne(definition, filled[0])];
  const now = data.now();
  const build = (index: number, existing: StoredRecord | undefined): R | undefined => {
    if (existing === undefined) return created?.[index] ?? readOne(definition, filled[index]);
    if (mode === 'ignore') return undefined;
    const input = inputs[index] as Record<string, unknown>;
    if (mode === 'merge') return readOne(definition, mergeFields(existing.record, input));
    const body = withOwner(definition, owner, input);
    return filled[index] === body ? created![index]! : readOne(definition, body);
  };
  const named = (error: unknown, index: number): unknown =>
    list ? inListRecord(error, index) : error;
  const written = await atomically(data.driver, async () => {
    // In one write of the driver where it can; else (or when it declines) record by record.
    const replaced =
      list && mode === 'replace'
        ? await replacedAtOnce(ctx, data, definition, hooks, inputs, filled, created!, now)
        : undefined;
    if (replaced !== undefined) return replaced;
    const results: RecordWrite<R>[] = new Array<RecordWrite<R>>(inputs.length);
    const upsert = async (index: number, found?: StoredRecord): Promise<void> => {
      try {
        results[index] = await upsertOne(
          ctx,
          data,
          definition,
          hooks,
          keys[index]!,
          (existing) => build(index, existing),
          now,
          found,
        );
      } catch (error) {
        throw named(error, index);
      }
    };
    // Records to create, in a run between two updates: inserted together, as a list insert is.
    let run: { readonly index: number; readonly record: R }[] = [];
    const flush = async (): Promise<void> => {
      const batch = run;
      run = [];
      if (batch.length === 0) return;
      try {
        await data.driver.insert(
          definition.table,
          batch.map((item) => toFields(item.record)),
          now,
          { by: subjectOf(ctx) },
        );
      } catch (error) {
        if (error instanceof ReferenceMissingError && list)
          throw error.at(batch[error.index ?? 0]?.index ?? 0);
        if (!isDuplicateKeyError(error) && !isUniqueViolationError(error)) throw error;
        // Another writer created one of them meanwhile, or one breaks a unique rule: each is
        // upserted again, on its own (the failing one then answers with its own error).
        for (const item of batch) await upsert(item.index);
        return;
      }
      const afterInsert = hooks.afterInsert;
      for (const { index, record } of batch) {
        // Awaited only when there is a hook (a promise per record costs a 10 000-record upsert).
        if (afterInsert !== undefined) {
          try {
            await afterInsert(record, ctx);
          } catch (error) {
            throw named(error, index);
          }
        }
        results[index] = { fate: 'created', record, version: 1, time: now };
      }
    };
    // Records to update, in a run between two creates: updated together when no update hook
    // needs them one by one and the driver can (all or none: else one by one, as without it).
    const updateMany = data.driver.updateMany?.bind(data.driver);
    const together =
      updateMany !== undefined &&
      hooks.beforeUpdate === undefined &&
      hooks.afterUpdate === undefined;
    let updates: {
      readonly index: number;
      readonly existing: StoredRecord;
      readonly write: RecordWrite<R>;
    }[] = [];
    const flushUpdates = async (): Promise<void> => {
      const batch = updates;
      updates = [];
      if (batch.length === 0) return;
      const versions = await updateMany!(
        definition.table,
        batch.map(({ existing, write }) => ({
          key: definition.keyOf(existing.record as R),
          record: toFields(write.record),
          expectedVersion: existing.version,
          previous: existing.record,
        })),
        now,
        { by: subjectOf(ctx) },
      );
      if (versions === undefined) {
        for (const { index, existing } of batch) await upsert(index, existing);
        return;
      }
      for (let n = 0; n < batch.length; n++) {
        const { index, write } = batch[n]!;
        results[index] = {
          fate: write.fate,
          record: write.record,
          version: versions[n]!,
          time: write.time,
        };
      }
    };
    // The records are read a window at a time, and written at most a window at a time: what a
    // window reads and writes is garbage before the next one, not carried through the request
    // (an upsert of 10 000 records otherwise spends a third of its time collecting it). A key
    // met again is read again, once what came before is written.
    let found: readonly (StoredRecord | undefined)[] | undefined;
    // A key of one field is its value (of the field's one type); a longer one, its JSON text.
    // Only a merge can meet a key again: in the other modes the list was read as an insert
    // (`readMany`), which refuses a key given twice.
    const seen = created === undefined ? new Set<unknown>() : undefined;
    for (let index = 0; index < inputs.length; index++) {
      if (index % UPSERT_WINDOW === 0 && data.driver.getMany !== undefined) {
        const window = keys.slice(index, index + UPSERT_WINDOW).map((target) => target.key);
        found = await data.driver.getMany(definition.table, window);
      }
      const target = keys[index]!;
      let again = false;
      if (seen !== undefined) {
        const keyText = target.key.length === 1 ? target.key[0] : JSON.stringify(target.key);
        again = seen.has(keyText);
        seen.add(keyText);
      }
      if (again) {
        if (run.length > 0) await flush();
        if (updates.length > 0) await flushUpdates();
      }
      const existing =
        found !== undefined && !again
          ? found[index % UPSERT_WINDOW]
          : await data.driver.get(definition.table, target.key);
      if (existing === undefined) {
        if (updates.length > 0) await flushUpdates();
        try {
          const built = build(index, undefined)!;
          const record =
            hooks.beforeInsert === undefined
              ? checkCreate(ctx, definition, built)
              : await beforeCreate(ctx, definition, built, hooks);
          stampServerSet(definition, record, undefined, now, subjectOf(ctx) ?? undefined);
          run.push({ index, record });
        } catch (error) {
          throw named(error, index);
        }
        if (run.length >= UPSERT_WINDOW) await flush();
        continue;
      }
      if (run.length > 0) await flush();
      if (!together) {
        await upsert(index, existing);
        continue;
      }
      try {
        // As upsertOne and storeRecord do, up to the write.
        if (!owns(definition, owner, existing.record))
          throw new RecordNotFoundError(definition.name, target.id);
        const record = build(index, existing);
        const write =
          record === undefined
            ? undefined
            : planUpdate(ctx, data, definition, existing, record, { skipUnchanged: true, now });
        if (write === undefined || write.fate === 'unchanged') {
          results[index] = write ?? {
            fate: 'unchanged',
            record: existing.record as R,
            version: existing.version,
            time: existing.updatedAt,
          };
          continue;
        }
        updates.push({ index, existing, write });
      } catch (error) {
        throw named(error, index);
      }
      if (updates.length >= UPSERT_WINDOW) await flushUpdates();
    }
    await flush();
    await flushUpdates();
    return results;
  });
  const counts = { created: 0, updated: 0, unchanged: 0 };
  let time = 0;
  for (const write of written) {
    counts[write.fate]++;
    time = Math.max(time, write.time);
  }
  if (!list) {
    const [one] = written;
    ctx.set('ETag', entityTag(one!.version));
    ctx.body = successBody(one!.record, { ...counts, ...recordMeta(one!.time) });
    return;
  }
  ctx.body = successBody(
    written.map((write) => write.record),
    { ...counts, ...recordMeta(written.length === 0 ? now : time) },
  );
}

/**
 * The upsert of a list in replace mode as one write of the driver (`replaceMany`), when nothing
 * needs the stored records first: no hook, no owner rule, no key the database generates, no
 * insert default given to a record (a replaced record gets none). The server-set fields are
 * stamped as for a create; an update keeps the stored `createdAt` and `createdBy`, and a record
 * differing only in `updatedAt`/`updatedBy` is unchanged. Resolves to `undefined` when this does
 * not apply or the driver declined, having written nothing: the records are then upserted one by
 * one, in the same transaction (the stamps given here are set again there).
 */
async function replacedAtOnce<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R>,
  inputs: readonly unknown[],
  filled: readonly unknown[],
  created: readonly R[],
  now: number,
): Promise<RecordWrite<R>[] | undefined> {
  const { driver } = data;
  const generated = generatedFieldsOf(definition);
  if (
    driver.replaceMany === undefined ||
    ownerScopeOf(ctx) !== undefined ||
    hooks.beforeInsert !== undefined ||
    hooks.afterInsert !== undefined ||
    hooks.beforeUpdate !== undefined ||
    hooks.afterUpdate !== undefined ||
    generated.key?.generator === 'sequence'
  )
    return undefined;
  // The list was read as an insert (`readMany`), which refuses a key given twice.
  for (let i = 0; i < inputs.length; i++) if (filled[i] !== inputs[i]) return undefined;
  const subject = subjectOf(ctx);
  for (const record of created)
    stampServerSet(definition, record, undefined, now, subject ?? undefined);
  const keep: string[] = [];
  const stamped: string[] = [];
  for (const [field, generator] of generated.serverSet)
    (generator === 'createdAt' || generator === 'createdBy' ? keep : stamped).push(field);
  const replaced = await driver.replaceMany(definition.table, created.map(toFields), now, {
    by: subject,
    keep,
    stamped,
  });
  return replaced?.map(({ fate, record, version, updatedAt }) => ({
    fate,
    record: record as R,
    version,
    time: updatedAt,
  }));
}

/** The key and id of an upsert's record, from its key fields as given. */
function upsertKey(
  definition: AnyDefinition,
  input: unknown,
  index: number | undefined,
): { readonly key: KeyValues; readonly id: string } {
  if (!isPlainObject(input))
    throw new BadRequestError(
      `${upsertRecordName(index)} must be a JSON object of Entity ${definition.name}`,
    );
  const names = definition.table.key;
  let id = '';
  for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    const value = input[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      const path = index === undefined ? [name] : [index, name];
      throw new BadRequestError(
        `${upsertRecordName(index)} has no key field ${name}: an upsert finds records by their key`,
        [{ path, code: 'required', message: `Field ${name} is required` }],
      );
    }
    id = k === 0 ? String(value) : `${id}${definition.keySeparator}${String(value)}`;
  }
  const key = definition.parseId(id);
  if (key === undefined) {
    throw new BadRequestError(
      `${upsertRecordName(index)} has the key ${quoteInput(id)}, which no record of Entity ${definition.name} can have`,
    );
  }
  return { key, id };
}

/** How an upsert's error names its record (made only for an error). */
function upsertRecordName(index: number | undefined): string {
  return index === undefined ? 'The record' : `Record ${index} of the list`;
}

/** The upsert of one record: read it, decide its fate, write it (again if someone got in between). */
async function upsertOne<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  hooks: EntityHooks<R>,
  target: { readonly key: KeyValues; readonly id: string },
  build: (existing: StoredRecord | undefined) => R | undefined,
  now: number,
  /** The record as just read, if it was (the first attempt uses it). */
  found?: StoredRecord,
): Promise<RecordWrite<R>> {
  const owner = ownerScopeOf(ctx);
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing =
      attempt === 0 && found !== undefined
        ? found
        : await data.driver.get(definition.table, target.key);
    // Someone else's record (owner rule) reads as absent, and may not be taken over: 404 as PATCH.
    if (existing !== undefined && !owns(definition, owner, existing.record))
      throw new RecordNotFoundError(definition.name, target.id);
    const record = build(existing);
    if (record === undefined) {
      const kept = existing!;
      return {
        fate: 'unchanged',
        record: kept.record as R,
        version: kept.version,
        time: kept.updatedAt,
      };
    }
    const written = await storeRecord(ctx, data, definition, existing, record, hooks, {
      skipUnchanged: true,
      now,
    });
    if (written !== undefined) return written;
  }
  throw new HttpError(
    409,
    `EntityRecord with id ${quoteInput(target.id)} of ${definition.name} kept changing during the upsert; retry the request`,
  );
}

/** An error of the `index`th record of a list, with its reason and issues naming that record. */
export function inListRecord(error: unknown, index: number): unknown {
  if (!isHttpError(error) || error.status >= 500) return error;
  const issues = error.issues?.map((issue) =>
    typeof issue.path[0] === 'number' ? issue : { ...issue, path: [index, ...issue.path] },
  );
  return new HttpError(error.status, `Record ${index} of the list: ${error.reason}`, {
    ...(issues === undefined ? {} : { issues }),
    headers: { ...error.headers },
  });
}

/** Where a `generated: sequence` key takes its values: the driver's sequence of the table. */
function sequenceOf(
  data: DataContext,
  definition: AnyDefinition,
): (count: number) => Promise<number[]> {
  return (count) => {
    const driver = data.driver;
    if (driver.nextSequence === undefined) {
      throw new Error(
        `The storage driver ${driver.dialect} has no sequences; Entity ${definition.name} needs one for its generated key`,
      );
    }
    return driver.nextSequence(definition.table, count);
  };
}

/** The record a URL id names, whatever its spelling (`007` and `7` name one INTEGER key). */
function lockId(definition: AnyDefinition, id: string): string {
  const key = definition.parseId(id);
  return key === undefined ? id : JSON.stringify(key);
}

/** Reads `{data: ...}` from the request body. */
export async function readDataPayload(ctx: Context, data: DataContext): Promise<unknown> {
  const body = await readJsonBody(ctx, data.bodyLimit);
  if (!isPlainObject(body)) {
    throw new BadRequestError('Request body must be a JSON object of the form {"data": ...}');
  }
  const payload = body.data;
  if (payload === undefined) throw new BadRequestError('Request body has no "data" property');
  for (const name of Object.keys(body)) {
    if (name !== 'data') {
      throw new BadRequestError(
        `Unknown property "${quoteInput(name)}" in request body; only "data" is allowed`,
      );
    }
  }
  if (!Array.isArray(payload) && !isPlainObject(payload)) {
    throw new BadRequestError('"data" must be a record object or a list of record objects');
  }
  // The text check of readJsonBody is exact for a list; one record has a level less around it,
  // and a batch's operation (checked with the batch's text) has more.
  if (!Array.isArray(payload)) checkRecordDepth(payload);
  else if ((ctx.state as RequestState).operationBody !== undefined)
    for (const item of payload) if (isPlainObject(item)) checkRecordDepth(item);
  return payload;
}

/** Converts one record or throws the 400 that names its first problem. */
export function readOne<R extends object>(definition: EntityDefinition<R>, input: unknown): R {
  const issues: Issue[] = [];
  const record = definition.read(input, issues);
  if (record !== undefined && issues.length === 0) {
    checkIndexedLengths(definition, record, issues);
    if (issues.length === 0) return record;
    throw new BadRequestError(issues[0]!.message, issues);
  }
  throw new BadRequestError(singleRecordReason(definition, input, issues), issues);
}

const indexedColumns = new WeakMap<TableDescriptor, ReadonlySet<string>>();

/** The key columns, the `index: true` and `index: ci` columns and the columns of composite indexes. */
function indexedColumnsOf(table: TableDescriptor): ReadonlySet<string> {
  let names = indexedColumns.get(table);
  if (names === undefined) {
    names = new Set([
      ...table.key,
      ...table.columns
        .filter((column) => column.indexed || column.ciIndexed === true)
        .map((column) => column.name),
      ...(table.indexes ?? []).flatMap((index) => index.map((item) => item.column)),
      ...(table.unique ?? []).flat(),
    ]);
    indexedColumns.set(table, names);
  }
  return names;
}

/**
 * Pushes an issue for every key or indexed text value longer than MAX_INDEXED_BYTES, and for a
 * composite key whose record id is: PostgreSQL's primary key holds every key column in one index
 * entry, so several parts that each fit could together exceed its limit.
 */
function checkIndexedLengths(definition: AnyDefinition, record: object, issues: Issue[]): void {
  const values = record as Record<string, unknown>;
  const key = definition.table.key;
  const indexed = indexedColumnsOf(definition.table);
  for (const column of definition.table.columns) {
    if (column.kind !== 'text' || column.fixed !== undefined) continue;
    if (!indexed.has(column.name)) continue;
    const value = values[column.name];
    if (typeof value !== 'string' || value.length * 3 <= MAX_INDEXED_BYTES) continue;
    const bytes = Buffer.byteLength(value);
    if (bytes <= MAX_INDEXED_BYTES) continue;
    issues.push({
      path: [column.name],
      code: 'conversion_failed',
      message: `Field ${column.name} of Entity ${definition.name} is ${bytes} bytes long; a key or indexed field holds at most ${MAX_INDEXED_BYTES} bytes`,
    });
  }
  if (key.length < 2 || issues.length > 0) return;
  const id = definition.idOf(record);
  if (id.length * 3 <= MAX_INDEXED_BYTES) return;
  const bytes = Buffer.byteLength(id);
  if (bytes <= MAX_INDEXED_BYTES) return;
  issues.push({
    path: [],
    code: 'invalid_key',
    message: `The key of Entity ${definition.name} (${key.join(', ')}) is ${bytes} bytes long as a record id; a record id holds at most ${MAX_INDEXED_BYTES} bytes`,
  });
}

/** What `readMany` may leave out of its checks, the caller making sure of it otherwise. */
interface ReadManyOptions {
  /** The keys are distinct by construction (the server generated every one of them). */
  readonly keysDistinct?: boolean;
  /**
   * The unique rules are left to the insert: when it fails, `uniqueRepeats` gives the 400 this
   * check would have given. A list with other problems still gets every issue at once.
   */
  readonly uniqueLater?: boolean;
}

/** Converts every record of a list insert and checks the list for repeated keys. */
function readMany<R extends object>(
  definition: EntityDefinition<R>,
  inputs: readonly unknown[],
  options: ReadManyOptions = {},
): R[] {
  const issues: Issue[] = [];
  const records: R[] = [];
  const seen = options.keysDistinct === true ? undefined : new Map<string, number>();
  const uniqueSeen =
    options.uniqueLater === true
      ? undefined
      : (definition.table.unique ?? []).map(() => new Map<unknown, number>());
  for (let index = 0; index < inputs.length; index++) {
    const own: Issue[] = [];
    const record = definition.read(inputs[index], own);
    if (record !== undefined && own.length === 0) checkIndexedLengths(definition, record, own);
    if (record === undefined || own.length > 0) {
      for (const issue of own) issues.push({ ...issue, path: [index, ...issue.path] });
      continue;
    }
    if (seen !== undefined) {
      const id = definition.idOf(record);
      const first = seen.get(id);
      if (first !== undefined) {
        issues.push({
          path: [index],
          code: 'duplicate_key',
          message: `Logical key ${quoteInput(id)} for Entity ${definition.name} appears twice in the list (records ${first} and ${index})`,
        });
        records.push(record);
        continue;
      }
      seen.set(id, index);
    }
    if (uniqueSeen !== undefined) checkUniqueInList(definition, record, index, uniqueSeen, issues);
    records.push(record);
  }
  if (issues.length > 0) {
    // The issues every check finds, in the same order as without options.
    if (options.keysDistinct === true || options.uniqueLater === true) readMany(definition, inputs);
    throw new BadRequestError(listReason(issues), issues);
  }
  return records;
}

/**
 * The 400 `readMany` gives a list of converted records (without other problems) whose records
 * repeat the values of a unique rule, or undefined when none does.
 */
function uniqueRepeats(
  definition: AnyDefinition,
  records: readonly object[],
): HttpError | undefined {
  const rules = definition.table.unique ?? [];
  if (rules.length === 0) return undefined;
  const issues: Issue[] = [];
  const seen = rules.map(() => new Map<unknown, number>());
  for (let index = 0; index < records.length; index++)
    checkUniqueInList(definition, records[index]!, index, seen, issues);
  return issues.length === 0 ? undefined : new BadRequestError(listReason(issues), issues);
}

/**
 * Whether the server generates the key of every record of a list (none gives its own): those
 * keys are distinct (a UUID v7 or ULID counts up within the process, a sequence never repeats).
 */
function keysAllGenerated(definition: AnyDefinition, bodies: readonly unknown[]): boolean {
  const key = generatedFieldsOf(definition).key;
  if (key === undefined) return false;
  for (const body of bodies) {
    if (!isPlainObject(body)) return false;
    const given = body[key.field];
    if (given !== undefined && given !== null) return false;
  }
  return true;
}

/**
 * Pushes an issue per field when `record` repeats the values of a unique rule (SPEC §16) that an
 * earlier record of the same list holds; `seen` holds, per rule, the values met so far.
 */
function checkUniqueInList(
  definition: AnyDefinition,
  record: object,
  index: number,
  seen: readonly Map<unknown, number>[],
  issues: Issue[],
): void {
  const rules = definition.table.unique ?? [];
  for (let r = 0; r < rules.length; r++) {
    const fields = rules[r]!;
    // One field: its canonical value is the map key (no text built); several: their JSON.
    const single =
      fields.length === 1 ? (record as Record<string, unknown>)[fields[0]!] : undefined;
    if (fields.length === 1 && (single === undefined || single === null)) continue;
    const values = fields.length === 1 ? [single] : uniqueValues(fields, record);
    if (values === undefined) continue;
    const text = fields.length === 1 ? single : JSON.stringify(values);
    const first = seen[r]!.get(text);
    if (first === undefined) {
      seen[r]!.set(text, index);
      continue;
    }
    const message = `${describeUnique(rules[r]!, values)} repeats record ${first} of the list (Entity ${definition.name})`;
    for (const field of rules[r]!)
      issues.push({ path: [index, field], code: UNIQUE_CODE, message });
  }
}

/** The issue code of a value a unique rule refuses. */
const UNIQUE_CODE = 'unique_violated' as const;

/** The values of a unique rule's fields in a record; undefined when one is absent (no collision). */
function uniqueValues(fields: readonly string[], record: object): unknown[] | undefined {
  const values: unknown[] = [];
  for (const field of fields) {
    const value = (record as Record<string, unknown>)[field];
    if (value === undefined || value === null) return undefined;
    values.push(value);
  }
  return values;
}

/** `Value "a@b.c" of field email` / `Values "tools", "Hammer" of fields category, name`. */
function describeUnique(fields: readonly string[], values: readonly unknown[]): string {
  const shown = values.map((value) =>
    typeof value === 'string' ? JSON.stringify(quoteInput(value)) : JSON.stringify(value),
  );
  return fields.length === 1
    ? `Value ${shown[0]} of field ${fields[0]}`
    : `Values ${shown.join(', ')} of fields ${fields.join(', ')}`;
}

/** Records of a list whose unique values are looked up in one query. */
const UNIQUE_LOOKUP_CHUNK = 200;

/**
 * The 400 of a write that broke a unique rule (SPEC §16): which record of the write holds values
 * another stored record already has, and that record's id when the caller may read it (GET by id
 * allowed, and the record is the caller's own under an owner rule).
 */
async function uniqueClash<R extends object>(
  ctx: Context,
  data: DataContext,
  definition: EntityDefinition<R>,
  records: readonly R[],
  error: UniqueViolationError,
  list: boolean,
  /** For an update: the id the record is stored under (its key is not a clash). */
  updating?: string,
): Promise<HttpError> {
  // A record whose key is taken clashes on its key first (SPEC §4.3), whichever index the
  // database checked first.
  const taken =
    updating === undefined
      ? await firstStoredKey(data, definition, records, error.index).catch(() => undefined)
      : undefined;
  if (taken !== undefined) {
    return list
      ? await duplicateInList(data, definition, records, taken)
      : new KeyExistsError(definition.name, definition.idOf(records[taken]!));
  }
  const fields = error.fields;
  const table = definition.table;
  const candidates =
    error.index !== undefined ? [error.index] : records.map((_record, index) => index);
  let clash: { index: number; values: unknown[]; holder: StoredRecord | undefined } | undefined;
  const columnOf = (field: string) => table.columns.find((column) => column.name === field)!;
  const condition = (field: string, value: unknown) => ({
    path: [field],
    operator: 'EQUALS' as const,
    kind: columnOf(field).kind,
    value: value as string | number | boolean,
  });
  try {
    for (let start = 0; start < candidates.length && clash === undefined; ) {
      const chunk: { index: number; values: unknown[] }[] = [];
      while (start < candidates.length && chunk.length < UNIQUE_LOOKUP_CHUNK) {
        const index = candidates[start++]!;
        const values = uniqueValues(fields, records[index]!);
        if (values !== undefined) chunk.push({ index, values });
        if (fields.length > 1) break; // one query per record for a combination
      }
      if (chunk.length === 0) continue;
      const filters: FilterGroup[] =
        fields.length === 1
          ? [{ anyOf: chunk.map((item) => condition(fields[0]!, item.values[0])) }]
          : fields.map((field, i) => ({ anyOf: [condition(field, chunk[0]!.values[i])] }));
      const found = await data.driver.list(table, {
        filters,
        orderBy: [],
        limit: fields.length === 1 ? chunk.length + 1 : 2,
      });
      for (const item of chunk) {
        const holder = found.find(
          (stored) =>
            definition.idOf(stored.record as R) !== definition.idOf(records[item.index]!) &&
            fields.every((field, i) => sameStoredValue(stored.record[field], item.values[i])),
        );
        if (holder !== undefined) {
          clash = { ...item, holder };
          break;
        }
      }
    }
  } catch {
    // The write failed on the rule already; the lookup only names the record that holds it.
  }
  if (clash === undefined) {
    const index = candidates.length === 1 ? candidates[0]! : undefined;
    const values = index === undefined ? undefined : uniqueValues(fields, records[index]!);
    clash =
      index === undefined || values === undefined
        ? undefined
        : { index, values, holder: undefined };
  }
  if (clash === undefined) {
    const rule = fields.length === 1 ? `field ${fields[0]}` : `fields ${fields.join(', ')}`;
    return new BadRequestError(
      `A record of the list repeats the ${rule} of another record of Entity ${definition.name}, which must be unique`,
    );
  }
  const state = ctx.state as RequestState;
  const holder = clash.holder;
  const shown =
    holder !== undefined &&
    state.readsById !== false &&
    owns(definition, ownerScopeOf(ctx), holder.record)
      ? `record ${JSON.stringify(quoteInput(definition.idOf(holder.record as R)))}`
      : undefined;
  const message =
    `${describeUnique(fields, clash.values)} ${fields.length === 1 ? 'is' : 'are'} already used by ` +
    (shown === undefined
      ? `another record of Entity ${definition.name}`
      : `Entity ${definition.name} ${shown}`);
  const issues: Issue[] = fields.map((field) => ({
    path: list ? [clash.index, field] : [field],
    code: UNIQUE_CODE,
    message,
  }));
  return new BadRequestError(
    list ? `Record ${clash.index} of the list: ${message}` : message,
    issues,
  );
}

/**
 * The position of the first record (of `index` alone, when the driver named it) whose key a
 * stored record already holds; undefined when none does.
 */
async function firstStoredKey<R extends object>(
  data: DataContext,
  definition: EntityDefinition<R>,
  records: readonly R[],
  index: number | undefined,
): Promise<number | undefined> {
  const positions = index === undefined ? records.map((_record, i) => i) : [index];
  const table = definition.table;
  if (table.key.length !== 1 || positions.length === 1) {
    for (const i of positions) {
      if ((await data.driver.get(table, definition.keyOf(records[i]!))) !== undefined) return i;
    }
    return undefined;
  }
  const column = table.columns.find((candidate) => candidate.name === table.key[0])!;
  for (let start = 0; start < positions.length; start += UNIQUE_LOOKUP_CHUNK) {
    const chunk = positions.slice(start, start + UNIQUE_LOOKUP_CHUNK);
    const found = await data.driver.list(table, {
      filters: [
        {
          anyOf: chunk.map((i) => ({
            path: [column.name],
            operator: 'EQUALS' as const,
            kind: column.kind,
            value: definition.keyOf(records[i]!)[0]!,
          })),
        },
      ],
      orderBy: [],
      limit: chunk.length,
    });
    const ids = new Set(found.map((stored) => definition.idOf(stored.record as R)));
    const hit = chunk.find((i) => ids.has(definition.idOf(records[i]!)));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Whether a stored value equals a record's value (DECIMAL by number: 1.5 = 1.50). */
function sameStoredValue(stored: unknown, value: unknown): boolean {
  if (stored === value) return true;
  if (
    typeof stored === 'string' &&
    typeof value === 'string' &&
    DECIMAL_TEXT.test(stored) &&
    DECIMAL_TEXT.test(value)
  )
    return compareDecimal(stored, value) === 0;
  return false;
}

const DECIMAL_TEXT = /^-?\d+(?:\.\d+)?$/;

/** The 400 for a list insert that hit a key already in storage. */
async function duplicateInList<R extends object>(
  data: DataContext,
  definition: EntityDefinition<R>,
  records: readonly R[],
  index: number | undefined,
): Promise<HttpError> {
  const record = index === undefined ? undefined : records[index];
  if (index === undefined || record === undefined) {
    return new BadRequestError(
      `A logical key of the list already exists for Entity ${definition.name}`,
    );
  }
  const id = definition.idOf(record);
  if (await isDeleted(data, definition, record)) {
    const error = new DeletedKeyError(definition.name, id);
    return new DeletedKeyError(definition.name, id, [
      { path: [index], code: 'duplicate_key', message: error.message },
    ]);
  }
  return new KeyExistsError(definition.name, id, [
    {
      path: [index],
      code: 'duplicate_key',
      message: `Logical key ${quoteInput(id)} for Entity ${definition.name} already exists`,
    },
  ]);
}

/**
 * The reason of a 400 for a list with invalid records: Gemini's sentence, except that a first
 * problem that is a broken constraint (SPEC §16) is named with its record, as references do.
 */
function listReason(issues: readonly Issue[]): string {
  const first = issues[0];
  if (
    (first?.code === 'constraint_violated' || first?.code === UNIQUE_CODE) &&
    typeof first.path[0] === 'number'
  ) {
    return `Record ${first.path[0]} of the list: ${first.message}`;
  }
  return 'EntityRecords are invalid';
}

/** The reason of a 400 for one invalid record: conversions first, then unknown fields, then the rest. */
function singleRecordReason(
  definition: AnyDefinition,
  input: unknown,
  issues: readonly Issue[],
): string {
  const conversion = issues.find((issue) => issue.code === 'conversion_failed');
  if (conversion !== undefined) return conversion.message;
  if (!isPlainObject(input)) return `EntityRecord of ${definition.name} must be a JSON object`;
  const unknown = issues.filter(
    (issue) => issue.code === 'unknown_field' && issue.path.length === 1,
  );
  if (unknown.length > 0) {
    const names = quoteInput(unknown.map((issue) => String(issue.path[0])).join(', '));
    return `${unknown.length === 1 ? 'Field' : 'Fields'} ${names} ${unknown.length === 1 ? 'is' : 'are'} not defined for Entity ${definition.name}`;
  }
  // A broken constraint names the field and its limit (SPEC §16).
  const constraint = issues.find((issue) => issue.code === 'constraint_violated');
  if (constraint !== undefined) return constraint.message;
  const id =
    definition.singleRecordId ??
    definition.table.key.map((name) => rawKeyText(input[name])).join(definition.keySeparator);
  return `EntityRecord of ${definition.name} with id ${quoteInput(id)} invalid`;
}

function rawKeyText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

/**
 * A single-record entity's one-field key may be left out of bodies; it is always `lkValue`. (An
 * entity without a key field stores its id in a fixed column, and its bodies hold no key.)
 */
function withSingleRecordKey(definition: AnyDefinition, payload: unknown): unknown {
  const id = definition.singleRecordId;
  const [keyField, ...more] = definition.table.key;
  if (id === undefined || keyField === undefined || more.length > 0 || !isPlainObject(payload))
    return payload;
  if (definition.table.columns.some((column) => column.name === keyField && column.fixed))
    return payload;
  if (payload[keyField] !== undefined && payload[keyField] !== null) return payload;
  return { [keyField]: id, ...payload };
}

async function findStored(
  data: DataContext,
  definition: AnyDefinition,
  id: string,
): Promise<StoredRecord | undefined> {
  const key = keyOfId(definition, id);
  return key === undefined ? undefined : data.driver.get(definition.table, key);
}

function sendRecord(ctx: Context, record: object, updatedAt: number, version: number): void {
  ctx.set('ETag', entityTag(version));
  ctx.body = successBody(record, recordMeta(updatedAt));
}

/** A record's entity tag: its version, quoted. */
export function entityTag(version: number): string {
  return `"${version}"`;
}

/**
 * Whether a GET with this `If-None-Match` (`''` when absent) gets a 304 for a record tagged `etag`.
 * If-None-Match compares weakly (RFC 9110 §13.1.2): W/"3" names the same version as "3". Not Koa's
 * `ctx.fresh`: its `fresh` package answers in full whenever the request says
 * `Cache-Control: no-cache`, which fetch() adds to every request carrying If-None-Match, so such
 * clients would never get their 304 (RFC 9110 §13.1.2 asks the origin for one).
 */
export function notModified(ifNoneMatch: string, etag: string): boolean {
  return ifNoneMatch !== '' && tagListMatches(ifNoneMatch, etag, true);
}

/** Whether an `If-Match`/`If-None-Match` list (`"3", "4"` or `*`) names `etag`. */
export function tagListMatches(header: string, etag: string, weak = false): boolean {
  for (const part of header.split(',')) {
    let tag = part.trim();
    if (weak && tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === '*' || tag === etag) return true;
  }
  return false;
}

function preconditionReason(definition: AnyDefinition, id: string): string {
  return `EntityRecord with id ${quoteInput(id)} of ${definition.name} does not match If-Match; it was changed or deleted`;
}

/** Records are plain JSON objects; the driver takes them as field maps. */
export function toFields(record: object): StoredFields {
  return record as StoredFields;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
