import type { Context } from 'koa';
import type { DataContext } from './data-context.js';
import type { EntityDefinition } from './definition.js';
import type { StoredFields, StoredRecord, TableDescriptor } from './driver.js';
import { recordMeta, successBody } from './envelope.js';
import {
  BadRequestError,
  HttpError,
  isDuplicateKeyError,
  KeyExistsError,
  MAX_INDEXED_BYTES,
  PreconditionFailedError,
  quoteInput,
  RecordNotFoundError,
} from './errors.js';
import { ownerScopeOf, owns, requireOwned, withOwner } from './auth/owner.js';
import type { EntityHooks } from './hooks.js';
import { checkRecordDepth, readJsonBody } from './http/body.js';
import type { RequestState } from './http/errors.js';
import { withRecordLock } from './record-lock.js';
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
  const payload = await readDataPayload(ctx, data);
  const owner = ownerScopeOf(ctx);
  if (!Array.isArray(payload)) {
    let record = readOne(definition, withOwner(definition, owner, payload));
    if (hooks.beforeInsert !== undefined)
      record = readOne(definition, (await hooks.beforeInsert(record, ctx)) ?? record);
    requireOwned(definition, owner, record);
    const now = data.now();
    try {
      await data.driver.insert(definition.table, [toFields(record)], now);
    } catch (error) {
      if (isDuplicateKeyError(error))
        throw new KeyExistsError(definition.name, definition.idOf(record));
      throw error;
    }
    await hooks.afterInsert?.(record, ctx);
    sendRecord(ctx, record, now, 1);
    return;
  }
  let records = readMany(
    definition,
    payload.map((item) => withOwner(definition, owner, item)),
  );
  if (hooks.beforeInsert !== undefined) {
    const changed: unknown[] = [];
    for (const record of records) changed.push((await hooks.beforeInsert(record, ctx)) ?? record);
    records = readMany(definition, changed);
  }
  for (const record of records) requireOwned(definition, owner, record);
  const now = data.now();
  if (records.length > 0) {
    try {
      await data.driver.insert(definition.table, records.map(toFields), now);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw duplicateInList(definition, records, error.index);
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
  const stored = await findStored(data, definition, id);
  // Someone else's record (owner rule) reads as absent, never as forbidden.
  if (stored === undefined || !owns(definition, ownerScopeOf(ctx), stored.record))
    throw new RecordNotFoundError(definition.name, id);
  const etag = entityTag(stored.version);
  const ifNoneMatch = ctx.get('If-None-Match');
  // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"3" names the same version as "3".
  // Not Koa's `ctx.fresh`: its `fresh` package answers in full whenever the request says
  // `Cache-Control: no-cache`, which fetch() adds to every request carrying If-None-Match, so
  // such clients would never get their 304 (RFC 9110 §13.1.2 asks the origin for one).
  if (ifNoneMatch !== '' && tagListMatches(ifNoneMatch, etag, true)) {
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
  const record = readOne(
    definition,
    withOwner(definition, owner, withSingleRecordKey(definition, payload)),
  );
  await writeRecord(ctx, data, definition, id, () => record, true, hooks);
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
  const payload = await readDataPayload(ctx, data);
  if (!isPlainObject(payload)) {
    throw new BadRequestError('"data" must be an object holding the fields to change');
  }
  // Checked before merging: `merged.__proto__ = …` would change the prototype, not add a field.
  const unknown: Issue[] = Object.keys(payload)
    .filter((name) => !Object.hasOwn(definition.fields, name))
    .map((name) => ({
      path: [name],
      code: 'unknown_field',
      message: `Unknown field ${quoteInput(name)}`,
    }));
  if (unknown.length > 0)
    throw new BadRequestError(singleRecordReason(definition, payload, unknown), unknown);
  const createIfAbsent = definition.singleRecordId !== undefined;
  await writeRecord(
    ctx,
    data,
    definition,
    id,
    (existing) => {
      const merged: Record<string, unknown> = existing === undefined ? {} : { ...existing };
      for (const [name, value] of Object.entries(payload)) {
        if (value === null) delete merged[name];
        else
          Object.defineProperty(merged, name, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      const owned =
        existing === undefined ? withOwner(definition, ownerScopeOf(ctx), merged) : merged;
      return readOne(definition, withSingleRecordKey(definition, owned));
    },
    createIfAbsent,
    hooks,
  );
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
  // Without If-Match, a beforeDelete hook or an owner rule there is nothing to look at first:
  // delete directly. Otherwise read the record, check it, and delete exactly that version.
  const readFirst = ifMatch !== '' || hooks.beforeDelete !== undefined || owner !== undefined;
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    let expectedVersion: number | undefined;
    if (readFirst) {
      const current = await data.driver.get(definition.table, key);
      if (
        ifMatch !== '' &&
        (current === undefined || !tagListMatches(ifMatch, entityTag(current.version)))
      )
        throw new PreconditionFailedError(preconditionReason(definition, id));
      if (current === undefined || !owns(definition, owner, current.record))
        throw new RecordNotFoundError(definition.name, id);
      await hooks.beforeDelete?.(current.record as R, ctx);
      expectedVersion = current.version;
    }
    const now = data.now();
    const deleted = await data.driver.delete(definition.table, key, expectedVersion, now);
    if (deleted === undefined) {
      if (expectedVersion === undefined) throw new RecordNotFoundError(definition.name, id);
      if (ifMatch !== '') throw new PreconditionFailedError(preconditionReason(definition, id));
      continue; // changed or deleted since the hook saw it: look again
    }
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
  if (definition.singleRecordId !== undefined && id !== definition.singleRecordId) {
    throw new RecordNotFoundError(definition.name, id);
  }
  const key = definition.parseId(id);
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
    let record = build(existing?.record);
    if (existing === undefined) {
      if (hooks.beforeInsert !== undefined)
        record = readOne(definition, (await hooks.beforeInsert(record, ctx)) ?? record);
      requireOwned(definition, owner, record);
      const newId = definition.idOf(record);
      if (newId !== id) throw new RecordNotFoundError(definition.name, id);
      const now = data.now();
      try {
        await data.driver.insert(definition.table, [toFields(record)], now);
      } catch (error) {
        if (isDuplicateKeyError(error)) continue; // created meanwhile: update it instead
        throw error;
      }
      await hooks.afterInsert?.(record, ctx);
      sendRecord(ctx, record, now, 1);
      return;
    }
    const previous = existing.record as R;
    if (hooks.beforeUpdate !== undefined)
      record = readOne(definition, (await hooks.beforeUpdate(record, previous, ctx)) ?? record);
    requireOwned(definition, owner, record);
    if (definition.singleRecordId !== undefined && definition.idOf(record) !== id) {
      throw new BadRequestError(
        `The key of single-record Entity ${definition.name} is always ${id}; it cannot be changed`,
      );
    }
    const now = data.now();
    const result = await data.driver.update(
      definition.table,
      key,
      toFields(record),
      existing.version,
      now,
    );
    if (result.status === 'updated') {
      await hooks.afterUpdate?.(record, previous, ctx);
      sendRecord(ctx, record, now, result.version);
      return;
    }
    if (result.status === 'duplicate')
      throw new KeyExistsError(definition.name, definition.idOf(record));
    // 'conflict': another writer changed or deleted the record since we read it.
  }
  throw new HttpError(
    409,
    `EntityRecord with id ${quoteInput(id)} of ${definition.name} kept changing during the update; retry the request`,
  );
}

/** The record a URL id names, whatever its spelling (`007` and `7` name one INTEGER key). */
function lockId(definition: AnyDefinition, id: string): string {
  const key = definition.parseId(id);
  return key === undefined ? id : JSON.stringify(key);
}

/** Reads `{data: ...}` from the request body. */
async function readDataPayload(ctx: Context, data: DataContext): Promise<unknown> {
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
  // The text check of readJsonBody is exact for a list; one record has a level less around it.
  if (!Array.isArray(payload)) checkRecordDepth(payload);
  return payload;
}

/** Converts one record or throws the 400 that names its first problem. */
function readOne<R extends object>(definition: EntityDefinition<R>, input: unknown): R {
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

/** The key columns, the `index: true` columns and the columns of composite indexes. */
function indexedColumnsOf(table: TableDescriptor): ReadonlySet<string> {
  let names = indexedColumns.get(table);
  if (names === undefined) {
    names = new Set([
      ...table.key,
      ...table.columns.filter((column) => column.indexed).map((column) => column.name),
      ...(table.indexes ?? []).flatMap((index) => index.map((item) => item.column)),
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

/** Converts every record of a list insert and checks the list for repeated keys. */
function readMany<R extends object>(
  definition: EntityDefinition<R>,
  inputs: readonly unknown[],
): R[] {
  const issues: Issue[] = [];
  const records: R[] = [];
  const seen = new Map<string, number>();
  for (let index = 0; index < inputs.length; index++) {
    const own: Issue[] = [];
    const record = definition.read(inputs[index], own);
    if (record !== undefined && own.length === 0) checkIndexedLengths(definition, record, own);
    if (record === undefined || own.length > 0) {
      for (const issue of own) issues.push({ ...issue, path: [index, ...issue.path] });
      continue;
    }
    const id = definition.idOf(record);
    const first = seen.get(id);
    if (first !== undefined) {
      issues.push({
        path: [index],
        code: 'duplicate_key',
        message: `Logical key ${quoteInput(id)} for Entity ${definition.name} appears twice in the list (records ${first} and ${index})`,
      });
    } else {
      seen.set(id, index);
    }
    records.push(record);
  }
  if (issues.length > 0) throw new BadRequestError('EntityRecords are invalid', issues);
  return records;
}

/** The 400 for a list insert that hit a key already in storage. */
function duplicateInList<R extends object>(
  definition: EntityDefinition<R>,
  records: readonly R[],
  index: number | undefined,
): HttpError {
  const record = index === undefined ? undefined : records[index];
  if (index === undefined || record === undefined) {
    return new BadRequestError(
      `A logical key of the list already exists for Entity ${definition.name}`,
    );
  }
  const id = definition.idOf(record);
  return new KeyExistsError(definition.name, id, [
    {
      path: [index],
      code: 'duplicate_key',
      message: `Logical key ${quoteInput(id)} for Entity ${definition.name} already exists`,
    },
  ]);
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
  if (definition.singleRecordId !== undefined && id !== definition.singleRecordId) return undefined;
  const key = definition.parseId(id);
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
function toFields(record: object): StoredFields {
  return record as StoredFields;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
