/**
 * Values the server gives (SPEC §16): generated keys — `uuid` (UUID version 7), `ulid` and
 * `sequence` (from the database) — and the fields set on every write: `createdAt`, `updatedAt`
 * (the write's time) and `createdBy`, `updatedBy` (the principal's subject of the access rules).
 *
 * The rules, for every entity alike:
 * - A POST (one record or a list) and a PUT that creates may leave a generated key out; the server
 *   fills it in and the answer carries it. A client-supplied `uuid` or `ulid` key is accepted when
 *   well-formed (and written in its canonical case); a client-supplied `sequence` key is refused.
 * - Server-set fields are never taken from a client: a POST that sends one is refused (400), a
 *   PUT or PATCH that sends one has it ignored. `createdAt`/`createdBy` are set on insert and kept
 *   by every later write; `updatedAt`/`updatedBy` are set by every write.
 */
import { randomFillSync } from 'node:crypto';
import type { EntityDefinition } from './definition.js';
import { BadRequestError, quoteInput } from './errors.js';
import type { Issue } from './issues.js';
import type { Generator } from './schema.js';

/** The generated fields of one entity. */
export interface GeneratedFields {
  /** The key field the server fills in, and how. */
  readonly key?: { readonly field: string; readonly generator: 'uuid' | 'ulid' | 'sequence' };
  /** Fields the server sets, with what. */
  readonly serverSet: readonly (readonly [
    string,
    'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy',
  ])[];
}

const NONE: GeneratedFields = { serverSet: [] };
const cache = new WeakMap<object, GeneratedFields>();

/** The generated fields of an entity (from its document, once). */
export function generatedFieldsOf(definition: EntityDefinition<object>): GeneratedFields {
  const document = definition.document;
  let found = cache.get(document);
  if (found === undefined) {
    let key: GeneratedFields['key'];
    const serverSet: [string, 'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy'][] = [];
    for (const field of document.entity.fields) {
      const generator: Generator | undefined = field.generated;
      if (generator === undefined) continue;
      if (generator === 'uuid' || generator === 'ulid' || generator === 'sequence') {
        if (definition.table.key.length === 1 && definition.table.key[0] === field.name)
          key = { field: field.name, generator };
      } else serverSet.push([field.name, generator]);
    }
    found =
      key === undefined && serverSet.length === 0 ? NONE : { ...(key ? { key } : {}), serverSet };
    cache.set(document, found);
  }
  return found;
}

/** Whether an entity has anything generated (the fast path skips all of this otherwise). */
export function hasGenerated(definition: EntityDefinition<object>): boolean {
  return generatedFieldsOf(definition) !== NONE;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes taken from a pool refilled 4 KiB at a time (one system call per ~400 ids). */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** Reserves `count` bytes of the pool and returns where they start (no Buffer view is made). */
function reserve(count: number): number {
  if (poolAt + count > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += count;
  return at;
}

/** Character codes of the lowercase hexadecimal digits. */
const HEX_DIGITS = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));
/** Character codes of Crockford's base32 digits. */
const CROCKFORD_DIGITS = Array.from(CROCKFORD, (digit) => digit.charCodeAt(0));
const DASH = '-'.charCodeAt(0);

/**
 * The character codes of the UUID being made: its dashes stay, its timestamp digits change once
 * per millisecond. One `String.fromCharCode` of the 36 codes makes a flat string, about three
 * times faster than joining sixteen pieces (a list of 10 000 records makes 10 000 of them).
 */
const uuidCodes: number[] = Array.from({ length: 36 }, () => DASH);

/** Writes byte `value` as two hexadecimal digits at `at` of `codes`. */
function hexAt(codes: number[], at: number, value: number): void {
  codes[at] = HEX_DIGITS[value >>> 4]!;
  codes[at + 1] = HEX_DIGITS[value & 15]!;
}

let lastUuidMs = -1;
let uuidCounter = 0;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter that restarts
 * at a random value each millisecond (so the ids of one process sort in the order they were made),
 * then 62 random bits.
 */
export function uuidv7(now = Date.now()): string {
  let timeChanged = false;
  if (now > lastUuidMs) {
    lastUuidMs = now;
    const r = reserve(2);
    uuidCounter = ((pool[r]! << 8) | pool[r + 1]!) & 0x7ff; // leave room to count up
    timeChanged = true;
  } else {
    uuidCounter++;
    if (uuidCounter > 0xfff) {
      lastUuidMs++; // the counter ran out within the millisecond: borrow the next one
      uuidCounter = 0;
      timeChanged = true;
    }
  }
  const codes = uuidCodes;
  if (timeChanged) {
    // xxxxxxxx-xxxx: the six bytes of the milliseconds.
    const ms = lastUuidMs;
    const high = Math.floor(ms / 2 ** 32);
    hexAt(codes, 0, (high >>> 8) & 0xff);
    hexAt(codes, 2, high & 0xff);
    hexAt(codes, 4, (ms >>> 24) & 0xff);
    hexAt(codes, 6, (ms >>> 16) & 0xff);
    hexAt(codes, 9, (ms >>> 8) & 0xff);
    hexAt(codes, 11, ms & 0xff);
  }
  hexAt(codes, 14, 0x70 | (uuidCounter >>> 8));
  hexAt(codes, 16, uuidCounter & 0xff);
  const t = reserve(8); // the 62 random bits, read from the pool in place
  hexAt(codes, 19, 0x80 | (pool[t]! & 0x3f));
  hexAt(codes, 21, pool[t + 1]!);
  for (let i = 2; i < 8; i++) hexAt(codes, 20 + 2 * i, pool[t + i]!);
  return String.fromCharCode.apply(null, codes);
}

let lastUlidMs = -1;
/** The ULID's 26 digits as character codes: 10 of the milliseconds, 16 random ones. */
const ulidCodes: number[] = Array.from({ length: 26 }, () => CROCKFORD_DIGITS[0]!);
/** The 16 random digits (0–31) of the last ULID, counted up within a millisecond. */
const ulidRandom: number[] = Array.from({ length: 16 }, () => 0);

/**
 * A ULID: 48 bits of Unix milliseconds and 80 random bits in Crockford base32 (26 characters);
 * within one millisecond the random part counts up (monotonic), so a process's ids sort in order.
 */
export function ulid(now = Date.now()): string {
  if (now > lastUlidMs) {
    lastUlidMs = now;
    const r = reserve(16);
    for (let i = 0; i < 16; i++) ulidRandom[i] = pool[r + i]! & 31;
    ulidRandom[0] = ulidRandom[0]! & 15; // room to count up
  } else {
    let i = 15;
    while (i >= 0 && ulidRandom[i] === 31) ulidRandom[i--] = 0;
    if (i < 0) {
      lastUlidMs++;
      return ulid(lastUlidMs);
    }
    ulidRandom[i]!++;
  }
  let ms = lastUlidMs;
  for (let i = 9; i >= 0; i--) {
    ulidCodes[i] = CROCKFORD_DIGITS[ms % 32]!;
    ms = Math.floor(ms / 32);
  }
  for (let i = 0; i < 16; i++) ulidCodes[10 + i] = CROCKFORD_DIGITS[ulidRandom[i]!]!;
  return String.fromCharCode.apply(null, ulidCodes);
}

/**
 * The bodies of an insert (POST one or a list, a PUT that creates) with their generated key
 * filled in where absent, and server-set fields refused (`refuse`, POST) or dropped (PUT).
 * The bodies are changed in place (they are the request's own, freshly parsed objects; a list of
 * 10 000 records is not copied) and returned. A sequence key takes its values from `sequence`
 * (asked for once, for every body that needs one). Throws the 400 naming every problem; `list`
 * puts the record's position first in issue paths.
 */
export async function withGeneratedKeys(
  definition: EntityDefinition<object>,
  bodies: readonly unknown[],
  list: boolean,
  refuse: boolean,
  sequence: (count: number) => Promise<number[]>,
): Promise<readonly unknown[]> {
  const generated = generatedFieldsOf(definition);
  if (generated === NONE) return bodies;
  const issues: Issue[] = [];
  const at = (index: number, field: string): (string | number)[] =>
    list ? [index, field] : [field];
  const { key, serverSet } = generated;
  const needing: Record<string, unknown>[] = [];
  for (let index = 0; index < bodies.length; index++) {
    const body = bodies[index];
    if (typeof body !== 'object' || body === null || Array.isArray(body)) continue;
    const record = body as Record<string, unknown>;
    for (let s = 0; s < serverSet.length; s++) {
      const [field, generator] = serverSet[s]!;
      if (!Object.hasOwn(record, field)) continue;
      if (refuse && record[field] !== null) {
        issues.push({
          path: at(index, field),
          code: 'server_set',
          message: `Field ${field} of Entity ${definition.name} is set by the server (${generator}); leave it out`,
        });
      }
      delete record[field];
    }
    if (key === undefined) continue;
    const given = record[key.field];
    if (given === undefined || given === null) {
      if (key.generator === 'uuid') record[key.field] = uuidv7();
      else if (key.generator === 'ulid') record[key.field] = ulid();
      else {
        delete record[key.field]; // filled from the sequence below
        needing.push(record);
      }
    } else if (key.generator === 'sequence') {
      issues.push({
        path: at(index, key.field),
        code: 'server_set',
        message: `Field ${key.field} of Entity ${definition.name} is generated by the database (sequence); leave it out`,
      });
    } else if (typeof given === 'string') {
      const pattern = key.generator === 'uuid' ? UUID : ULID;
      if (!pattern.test(given)) {
        issues.push({
          path: at(index, key.field),
          code: 'conversion_failed',
          message: `Field ${key.field} of Entity ${definition.name} must be a ${key.generator === 'uuid' ? 'UUID (8-4-4-4-12 hexadecimal digits)' : 'ULID (26 Crockford base32 characters)'}, not ${JSON.stringify(quoteInput(given))}`,
        });
      } else {
        record[key.field] = key.generator === 'uuid' ? given.toLowerCase() : given.toUpperCase();
      }
    }
  }
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new BadRequestError(
      list ? `Record ${first.path[0]} of the list: ${first.message}` : first.message,
      issues,
    );
  }
  if (key !== undefined && needing.length > 0) {
    const values = await sequence(needing.length);
    for (let i = 0; i < needing.length; i++) needing[i]![key.field] = values[i];
  }
  return bodies;
}

/** A PUT or PATCH body without the server-set fields (a value sent is ignored). */
export function withoutServerSet(definition: EntityDefinition<object>, body: unknown): unknown {
  const generated = generatedFieldsOf(definition);
  if (generated.serverSet.length === 0) return body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  let copy: Record<string, unknown> | undefined;
  for (const [field] of generated.serverSet) {
    if (!Object.hasOwn(body, field)) continue;
    copy ??= { ...(body as Record<string, unknown>) };
    delete copy[field];
  }
  return copy ?? body;
}

/**
 * Sets the server-set fields of a record about to be written at `now` by `subject` (undefined:
 * no principal, the field is left absent): `createdAt`/`createdBy` from `previous` when the
 * record exists (kept), else from this write; `updatedAt`/`updatedBy` from this write.
 */
export function stampServerSet(
  definition: EntityDefinition<object>,
  record: object,
  previous: object | undefined,
  now: number,
  subject: string | undefined,
): void {
  const generated = generatedFieldsOf(definition);
  if (generated.serverSet.length === 0) return;
  const target = record as Record<string, unknown>;
  const before = previous as Record<string, unknown> | undefined;
  const time = new Date(now).toISOString();
  for (const [field, generator] of generated.serverSet) {
    let value: unknown;
    switch (generator) {
      case 'createdAt':
        value = before === undefined ? time : before[field];
        break;
      case 'createdBy':
        value = before === undefined ? subject : before[field];
        break;
      case 'updatedAt':
        value = time;
        break;
      case 'updatedBy':
        value = subject;
        break;
    }
    if (value === undefined || value === null) delete target[field];
    else target[field] = value;
  }
}
