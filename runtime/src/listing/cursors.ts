/**
 * List cursors (`meta.next`): an opaque, HMAC-signed position after the last record of a page,
 * tied to the entity, filters and order of the query that issued it (rules in listing.ts's header).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { EntityDefinition } from '../definition.js';
import type {
  FilterExpression,
  FilterGroup,
  KeyValue,
  OrderTerm,
  StoredRecord,
} from '../driver.js';
import { BadRequestError } from '../errors.js';
import { convertScalar } from './filters.js';

interface CursorPayload {
  /** Format version. */
  readonly v: 1;
  /** Signature of the query the cursor belongs to. */
  readonly q: string;
  /** Page size of the page that issued the cursor. */
  readonly l: number;
  /** Sort values of the last row: order terms, then key columns not already ordered. */
  readonly a?: readonly (KeyValue | null)[];
  /** Instead of `a`, for a page in relevance order (`q` without `orderBy`): the next offset. */
  readonly o?: number;
}

/** A decoded, validated cursor: where its page starts, after `after` or at `offset`. */
export type Cursor =
  | { readonly limit: number; readonly after: (KeyValue | null)[]; readonly offset?: undefined }
  | { readonly limit: number; readonly after?: undefined; readonly offset: number };

/**
 * A short hash of entity, filters and order. Filter groups and the conditions of a group are
 * sorted, so neither the order of the parameters nor the spelling of values changes it.
 */
export function querySignature(
  definition: EntityDefinition<object>,
  filters: readonly FilterGroup[],
  orderBy: readonly OrderTerm[],
  expression?: FilterExpression,
): string {
  const groups = filters
    .map((group) =>
      group.anyOf
        .map(({ through, ...condition }) =>
          JSON.stringify(
            through === undefined ? condition : { ...condition, through: through.field },
          ),
        )
        .sort(),
    )
    .sort((a, b) => compareText(JSON.stringify(a), JSON.stringify(b)));
  // A filter expression is part of the query as written (its values converted).
  const parts: unknown[] = [definition.name, groups, orderBy];
  if (expression !== undefined) {
    parts.push(
      JSON.parse(
        JSON.stringify(expression, (key, value: unknown) =>
          key === 'through' ? (value as { field: string }).field : value,
        ),
      ),
    );
  }
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The key of callers that give none (direct calls in tests); services always pass theirs. */
const UNKEYED = 'entity-gen-cursor';

/**
 * Checksums of recent cursor bodies, by key and body: the page asked again (a popular list, each
 * client paging the same way) signs and checks the same cursor without another HMAC, which costs
 * more than the rest of the cursor. Cleared when full.
 */
const recentChecksums = new Map<string, string>();
const RECENT_CHECKSUMS = 1024;

function checksum(text: string, key: string = UNKEYED): string {
  const memo = `${key}\0${text}`;
  let sum = recentChecksums.get(memo);
  if (sum === undefined) {
    sum = createHmac('sha256', key).update(text).digest('base64url').slice(0, 22);
    if (recentChecksums.size >= RECENT_CHECKSUMS) recentChecksums.clear();
    recentChecksums.set(memo, sum);
  }
  return sum;
}

/** Compares two signatures in constant time. */
function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Columns the cursor holds values for: the order terms, then key columns not already ordered. */
function cursorColumns(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
): string[] {
  const columns = orderBy.map((term) => term.column);
  for (const key of definition.table.key) if (!columns.includes(key)) columns.push(key);
  return columns;
}

/** The value of a storage-only key column (`ColumnDescriptor.fixed`), which records do not hold. */
function fixedValue(definition: EntityDefinition<object>, column: string): string | undefined {
  return definition.table.columns.find((candidate) => candidate.name === column)?.fixed;
}

/** The cursor of the page after `last`, for the query of `signature` with pages of `pageSize`. */
export function encodeCursor(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
  signature: string,
  pageSize: number,
  last: Pick<StoredRecord, 'record'>,
  key: string | undefined,
): string {
  const record = last.record;
  const values = cursorColumns(definition, orderBy).map((column) => {
    const value = fixedValue(definition, column) ?? record[column];
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? value
      : null;
  });
  const payload: CursorPayload = {
    v: 1,
    q: signature,
    l: pageSize,
    a: values,
  };
  return signed(payload, key);
}

/**
 * The cursor of the page at `offset` of a list in relevance order (`q` without `orderBy`): no
 * column holds the relevance, so the page after is found by its position.
 */
export function encodeOffsetCursor(
  signature: string,
  pageSize: number,
  offset: number,
  key: string | undefined,
): string {
  return signed({ v: 1, q: signature, l: pageSize, o: offset }, key);
}

/** Recent cursors by key and payload text, as `recentChecksums` (the page asked again). */
const recentCursors = new Map<string, string>();

function signed(payload: CursorPayload, key: string | undefined): string {
  const text = JSON.stringify(payload);
  const memo = `${key ?? UNKEYED}\0${text}`;
  let cursor = recentCursors.get(memo);
  if (cursor === undefined) {
    const body = Buffer.from(text).toString('base64url');
    cursor = `${body}.${checksum(body, key)}`;
    if (recentCursors.size >= RECENT_CHECKSUMS) recentCursors.clear();
    recentCursors.set(memo, cursor);
  }
  return cursor;
}

/** Checks a `cursor` parameter (signature, query, values) and returns where its page starts. */
export function decodeCursor(
  definition: EntityDefinition<object>,
  orderBy: readonly OrderTerm[],
  signature: string,
  cursor: string,
  key: string | undefined,
  relevance = false,
): Cursor {
  const invalid = (why: string): BadRequestError =>
    new BadRequestError(
      `Parameter cursor is invalid: ${why}; pass meta.next of the previous page unchanged`,
    );
  const [body, sum, ...rest] = cursor.split('.');
  if (
    body === undefined ||
    body === '' ||
    sum === undefined ||
    rest.length > 0 ||
    !sameText(checksum(body, key), sum)
  ) {
    throw invalid('it was not issued by this service or was altered');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('it does not decode');
  }
  if (typeof payload !== 'object' || payload === null || (payload as { v?: unknown }).v !== 1) {
    throw invalid('unknown cursor format');
  }
  const { q, l, a, o } = payload as { q?: unknown; l?: unknown; a?: unknown; o?: unknown };
  if (q !== signature) {
    throw new BadRequestError(
      'Parameter cursor belongs to a query with other filters or another order; repeat the filters and orderBy of the first page with it',
    );
  }
  if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 1)
    throw invalid('it holds no valid page size');
  if (relevance) {
    if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0)
      throw invalid('it holds no valid position');
    return { limit: l, offset: o };
  }
  const columns = cursorColumns(definition, orderBy);
  if (!Array.isArray(a) || a.length !== columns.length)
    throw invalid('it does not match the sort order');
  const after = columns.map((column, index) => {
    const value: unknown = a[index];
    const fixed = fixedValue(definition, column);
    if (fixed !== undefined) {
      if (value !== fixed) throw invalid(`it holds another value for ${column}`);
      return fixed;
    }
    const field = Object.hasOwn(definition.fields, column) ? definition.fields[column] : undefined;
    const descriptor = definition.table.columns.find((candidate) => candidate.name === column);
    if (field === undefined || descriptor === undefined) throw invalid('it names an unknown field');
    if (value === null) {
      if (descriptor.required || definition.table.key.includes(column))
        throw invalid(`it holds no value for ${column}`);
      return null;
    }
    const converted = convertScalar(field, value);
    if (
      converted === undefined ||
      (typeof converted === 'string' && converted.includes('\u0000'))
    ) {
      throw invalid(`it holds a value of the wrong type for ${column}`);
    }
    return converted;
  });
  return { limit: l, after };
}
