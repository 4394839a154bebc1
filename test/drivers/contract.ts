/**
 * The storage-driver contract: one suite of cases every `StorageDriver` must pass, run by each
 * driver's test file (`describeDriverContract('sqlite (memory)', makeDriver, options)`).
 *
 * Decisions pinned here (every driver must behave the same, so a service can switch backends):
 *
 * Records
 * - Records are returned as plain objects with the fields in declared column order; absent
 *   optional fields (written as `undefined`) are NOT present on read (no `undefined` keys).
 * - Values round-trip exactly in canonical form: DECIMAL as the exact decimal string
 *   ("12345678901234567890.123456789"), BOOL as boolean, DATE "YYYY-MM-DD", DATE_TIME
 *   "YYYY-MM-DDTHH:mm:ss.sssZ", INTEGER/DOUBLE as numbers (full safe-integer range), JSON values
 *   (objects, arrays, nested, unicode, scalars) deep-equal to what was written.
 * - `version` is 1 after insert and +1 per update; `createdAt` / `updatedAt` are the `now` given.
 *
 * Writes
 * - A list insert is atomic: a key that exists in storage or twice in the list inserts nothing
 *   and throws `DuplicateKeyError` with `table` = the SQL table name and `index` = position of
 *   the offending record (for a repeat inside the list: the later one).
 * - `update` returns `conflict` when the record is gone or its version moved, `duplicate` when a
 *   rename hits an existing key (nothing changes), else `updated` with the new version; a rename
 *   frees the old key and keeps `createdAt`.
 * - `delete` returns the deleted record (with its last version and times), or `undefined` when
 *   nothing matched key (and `expectedVersion`, when given).
 * - `activity()` reports, per entity name, the LATEST (maximum) `now` of successful creates,
 *   updates and deletes; keys are absent when that never happened; failed or empty writes change
 *   nothing; it is persistent storage, not process memory.
 *
 * Listing
 * - Conditions of a group are ORed, groups ANDed; no groups = every record.
 * - A field that is absent matches only NOT_EQUALS and NOT_CONTAINS (absent ≠ value).
 * - CONTAINS / STARTS_WITH / ENDS_WITH are literal (`%`, `_`, `\`, quotes are plain characters)
 *   and case-sensitive.
 * - GT/GTE/LT/LTE: numbers and DECIMAL numerically (DECIMAL exactly, beyond double precision),
 *   DATE / DATE_TIME chronologically, text by Unicode code point (binary, so "B" < "a"; in
 *   PostgreSQL that means COLLATE "C").
 * - JSON paths (`['meta', 'address', 'city']`) compare the leaf as `kind`.
 * - `arrayMembership`: EQUALS/CONTAINS = some element equals the value (not a substring test);
 *   NOT_EQUALS/NOT_CONTAINS = no element equals it (absent and empty arrays included); other
 *   operators = some element satisfies the operator.
 * - ORDER: the `orderBy` terms, then the key columns as tie-break IN THE DIRECTION OF THE LAST
 *   TERM (ascending when there is no term) — so `orderBy=-x` is served by a backward scan of an
 *   index on x. NULLs sort FIRST ascending and LAST descending (SQLite's native order;
 *   PostgreSQL must write NULLS FIRST / NULLS LAST).
 * - Keyset `after`: the sort values of the last row seen (order terms, then key columns; a
 *   column may be given once when it is both); the result starts strictly after it in the order
 *   above, NULLs included. Rows existing for a whole walk are seen exactly once, whatever is
 *   inserted or deleted between pages.
 * - `count` uses the filters only.
 *
 * Soft delete (`softDelete` tables, SPEC §13)
 * - `delete` marks the row (version + 1, `updatedAt` = now, the deletion time and `by`) and
 *   appends a `deleted` change with `soft`; `get`, `list` and `count` skip marked rows unless the
 *   query asks for `deleted: 'include' | 'only'`; the key stays taken (`DuplicateKeyError`).
 * - `getDeleted` reads a marked row with its mark; `restore` clears it (version + 1, a `restored`
 *   change); `delete` with `mode: 'purge'` removes the row, marked or not (a `purged` change).
 *
 * Change events (`changes`, SPEC §9)
 * - Each committed insert, update and delete appends its changes in its own transaction: one
 *   `created` per record of a list (in request order), one `updated`, a `deleted` (with the
 *   record as it was) then a `created` for a rename, one `deleted` (the deleted record). A write
 *   that fails or changes nothing (duplicate, version conflict, missing key) appends nothing.
 * - Seqs increase by one per change, without gaps, across every driver on the storage; `record`
 *   is the record's JSON text, `id` its key values joined by `~`, `timeUnix` the write's `now`.
 * - `watch` listeners hear each write's changes right after it committed; `trim(time)` deletes
 *   the prefix of changes older than `time` but never the newest change; `bounds` gives the last
 *   seq and the first kept one. Opened with `events: false`, a driver appends nothing.
 *
 * Lifecycle
 * - `ping` resolves on an open driver; after `close()` (which may be called twice) it rejects
 *   with `StorageUnavailableError`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ChangeFeed,
  ColumnDescriptor,
  ColumnKind,
  FilterCondition,
  FilterGroup,
  FilterOperator,
  KeyValue,
  ListQuery,
  OrderTerm,
  StorageDriver,
  StoredChange,
  StoredFields,
  StoredRecord,
  TableDescriptor,
} from '../../runtime/src/driver.js';
import { isDuplicateKeyError, isStorageUnavailableError } from '../../runtime/src/errors.js';

export interface DriverContractOptions {
  /**
   * Creates another driver (not yet opened) on the same storage as the driver most recently
   * returned by `makeDriver`. Enables the persistence and cross-connection cases; omit it for
   * storage that cannot be shared (e.g. SQLite `:memory:`).
   */
  readonly reopen?: () => Promise<StorageDriver>;
  /** Rows of the keyset-paging walk table (default 1000). */
  readonly pagingRows?: number;
  /**
   * Whether the driver reads by key synchronously and so has `getNow` (SQLite); a driver that
   * does not (PostgreSQL) must leave `getNow` out, and the service reads with `get`. Default false.
   */
  readonly synchronousReads?: boolean;
}

// ------------------------------------------------------------------------------------------------
// Tables used by the suite

const FIELD_TYPES: Record<ColumnKind, string> = {
  text: 'STRING',
  integer: 'INTEGER',
  double: 'DOUBLE',
  decimal: 'DECIMAL',
  boolean: 'BOOL',
  date: 'DATE',
  datetime: 'DATE_TIME',
  json: 'OBJECT',
};

function column(
  name: string,
  kind: ColumnKind,
  options: { required?: boolean; indexed?: boolean; fieldType?: string } = {},
): ColumnDescriptor {
  return {
    name,
    kind,
    fieldType: options.fieldType ?? FIELD_TYPES[kind],
    required: options.required ?? false,
    indexed: options.indexed ?? false,
  };
}

/** Every column kind; the filter and ordering cases run on it. */
export const KINDS: TableDescriptor = {
  entity: 'KINDS',
  table: 'eg_contract_kinds',
  key: ['id'],
  columns: [
    column('id', 'text', { required: true }),
    column('name', 'text', { indexed: true }),
    column('count', 'integer', { indexed: true }),
    column('ratio', 'double'),
    column('price', 'decimal', { indexed: true }),
    column('active', 'boolean'),
    column('day', 'date'),
    column('at', 'datetime'),
    column('meta', 'json'),
    column('tags', 'json', { fieldType: 'ARRAY' }),
    column('scores', 'json', { fieldType: 'ARRAY' }),
    column('extra', 'json', { fieldType: 'ANY' }),
  ],
};

/** Composite key of text, integer and date. */
export const COMPOSITE: TableDescriptor = {
  entity: 'COMPOSITE',
  table: 'eg_contract_composite',
  key: ['region', 'seq', 'day'],
  columns: [
    column('region', 'text', { required: true }),
    column('seq', 'integer', { required: true }),
    column('day', 'date', { required: true }),
    column('label', 'text'),
  ],
};

/** INTEGER key. */
export const INT_KEY: TableDescriptor = {
  entity: 'INT_KEY',
  table: 'eg_contract_int_key',
  key: ['n'],
  columns: [column('n', 'integer', { required: true }), column('label', 'text')],
};

/** BOOL + DATE key. */
export const BOOL_KEY: TableDescriptor = {
  entity: 'BOOL_KEY',
  table: 'eg_contract_bool_key',
  key: ['flag', 'day'],
  columns: [
    column('flag', 'boolean', { required: true }),
    column('day', 'date', { required: true }),
    column('note', 'text'),
  ],
};

/** The keyset-paging walk table. */
export const PAGED: TableDescriptor = {
  entity: 'PAGED',
  table: 'eg_contract_paged',
  key: ['id'],
  columns: [
    column('id', 'integer', { required: true }),
    column('grp', 'integer', { required: true, indexed: true }),
    column('score', 'double', { indexed: true }),
    column('label', 'text'),
    column('price', 'decimal'),
  ],
};

/** A table with `softDelete` (SPEC §13), keyed by two columns. */
export const SOFT: TableDescriptor = {
  entity: 'SOFT',
  table: 'eg_contract_soft',
  key: ['region', 'seq'],
  columns: [
    column('region', 'text', { required: true }),
    column('seq', 'integer', { required: true }),
    column('price', 'decimal', { indexed: true }),
    column('active', 'boolean'),
  ],
  softDelete: true,
};

export const CONTRACT_TABLES: readonly TableDescriptor[] = [
  KINDS,
  COMPOSITE,
  INT_KEY,
  BOOL_KEY,
  PAGED,
  SOFT,
];

// ------------------------------------------------------------------------------------------------
// The filter / ordering data set (expected results below are worked out from this table)

const BIG_789 = '12345678901234567890.123456789';
const BIG_788 = '12345678901234567890.123456788';
const INJECTION = "x' OR '1'='1";

const FILTER_DATA: readonly StoredFields[] = [
  {
    id: 'r01',
    name: 'alpha',
    count: 1,
    ratio: 0.5,
    price: '9.75',
    active: true,
    day: '2024-01-15',
    at: '2024-01-15T10:00:00.000Z',
    meta: { address: { city: 'Pisa', zip: '56100' }, rank: 3, fee: '10.5', vip: true },
    tags: ['red', 'green'],
    scores: [1, 2, 3],
  },
  {
    id: 'r02',
    name: 'Alpha',
    count: 2,
    ratio: 1.5,
    price: '10.5',
    active: false,
    day: '2024-02-29',
    at: '2024-02-29T23:30:00.123Z',
    meta: { address: { city: 'Roma' }, rank: 10, fee: '9.75', vip: false },
    tags: ['green'],
    scores: [4],
  },
  {
    id: 'r03',
    name: 'ALPHABET',
    count: 10,
    ratio: -2.25,
    price: '100',
    active: true,
    day: '2023-12-31',
    at: '2023-12-31T23:59:59.999Z',
    meta: { address: { city: 'pisa' }, rank: 1, fee: '100' },
    tags: [],
    scores: [],
  },
  {
    id: 'r04',
    name: '50% off',
    count: -5,
    ratio: 0,
    price: '-3.2',
    active: false,
    day: '2024-03-01',
    at: '2024-03-01T00:00:00.000Z',
    meta: { address: { city: 'Pisa Centrale' }, rank: 2 },
    tags: ['50%', 'red'],
    scores: [10, 20],
  },
  {
    id: 'r05',
    name: 'a_b',
    count: 0,
    ratio: 100.25,
    price: '0',
    active: true,
    day: '2024-01-01',
    at: '2024-02-29T23:30:00.122Z',
    tags: ['a_b'],
    scores: [2],
  },
  { id: 'r06', name: 'back\\slash', count: 7, ratio: 2.5, price: BIG_789, day: '2024-06-30' },
  {
    id: 'r07',
    name: 'it\'s "quoted"',
    count: 7,
    ratio: 2.75,
    price: BIG_788,
    active: false,
    at: '2025-01-01T00:00:00.000Z',
  },
  {
    id: 'r08',
    name: INJECTION,
    count: 100,
    ratio: -0.001,
    price: '0.001',
    active: true,
    day: '2024-12-31',
  },
  { id: 'r09', name: '%', count: 20, ratio: 3, price: '-10' },
  { id: 'r10', name: 'Zürich 日本', count: 3, ratio: 9.75, price: '9.8', tags: ['Zürich'] },
  { id: 'r11' },
  { id: 'r12', name: 'axb', count: 9, price: '-3.25' },
];

const ALL_IDS = FILTER_DATA.map((r) => r.id as string);
const allBut = (...excluded: string[]): string[] => ALL_IDS.filter((id) => !excluded.includes(id));

function cond(
  path: string | readonly string[],
  operator: FilterOperator,
  kind: ColumnKind,
  value: KeyValue,
  arrayMembership?: boolean,
): FilterCondition {
  return {
    path: typeof path === 'string' ? [path] : path,
    operator,
    kind,
    value,
    ...(arrayMembership === undefined ? {} : { arrayMembership }),
  };
}

const where = (...groups: (FilterCondition | FilterCondition[])[]): FilterGroup[] =>
  groups.map((g) => ({ anyOf: Array.isArray(g) ? g : [g] }));

const order = (...terms: string[]): OrderTerm[] =>
  terms.map((t) =>
    t.startsWith('-') ? { column: t.slice(1), descending: true } : { column: t, descending: false },
  );

const idsOf = (records: readonly StoredRecord[], keyField = 'id'): unknown[] =>
  records.map((r) => r.record[keyField]);

// ------------------------------------------------------------------------------------------------

export function describeDriverContract(
  name: string,
  makeDriver: () => Promise<StorageDriver>,
  options: DriverContractOptions = {},
): void {
  describe(`storage driver contract: ${name}`, () => {
    let driver: StorageDriver;
    const extra: StorageDriver[] = [];

    beforeEach(async () => {
      driver = await makeDriver();
      await driver.open(CONTRACT_TABLES);
    });

    afterEach(async () => {
      for (const other of extra.splice(0)) await other.close();
      await driver.close();
    });

    /** Sorted ids of the records matching `filters` (ordered by key). */
    const matching = async (filters: FilterGroup[]): Promise<unknown[]> =>
      idsOf(await driver.list(KINDS, { filters, orderBy: [] }));

    const ordered = async (query: Partial<ListQuery>): Promise<unknown[]> =>
      idsOf(await driver.list(KINDS, { filters: [], orderBy: [], ...query }));

    const reopen = async (): Promise<StorageDriver> => {
      const other = await options.reopen!();
      extra.push(other);
      await other.open(CONTRACT_TABLES);
      return other;
    };

    // --------------------------------------------------------------------------------------------
    describe('lifecycle', () => {
      it('ping resolves on an open driver', async () => {
        await expect(driver.ping()).resolves.toBeUndefined();
      });

      it('reports a dialect name', () => {
        expect(typeof driver.dialect).toBe('string');
        expect(driver.dialect.length).toBeGreaterThan(0);
      });

      it('close can be called twice; ping afterwards rejects with StorageUnavailableError', async () => {
        await driver.close();
        await driver.close();
        const error = await driver.ping().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isStorageUnavailableError(error)).toBe(true);
      });

      it.runIf(options.reopen !== undefined)(
        'opening again on existing storage keeps the data (tables are created only if missing)',
        async () => {
          await driver.insert(INT_KEY, [{ n: 1, label: 'one' }], 1000);
          await driver.close();
          const other = await reopen();
          expect((await other.get(INT_KEY, [1]))?.record).toStrictEqual({ n: 1, label: 'one' });
        },
      );

      it.runIf(options.reopen !== undefined)(
        'a second driver on the same storage sees writes and hits the same keys',
        async () => {
          const other = await reopen();
          await driver.insert(INT_KEY, [{ n: 7 }], 1000);
          expect((await other.get(INT_KEY, [7]))?.version).toBe(1);
          const error = await other.insert(INT_KEY, [{ n: 7 }], 1001).catch((e: unknown) => e);
          expect(isDuplicateKeyError(error)).toBe(true);
          expect(await other.update(INT_KEY, [7], { n: 7, label: 'x' }, 1, 1002)).toEqual({
            status: 'updated',
            version: 2,
          });
          expect((await driver.get(INT_KEY, [7]))?.record).toStrictEqual({ n: 7, label: 'x' });
        },
      );
    });

    // --------------------------------------------------------------------------------------------
    describe('change events', () => {
      const feedOf = (of: StorageDriver): ChangeFeed => {
        expect(of.changes).toBeDefined();
        return of.changes!;
      };
      /** The changes after `after`, with their records parsed. */
      const changesAfter = async (
        after: number,
        of: StorageDriver = driver,
      ): Promise<(Omit<StoredChange, 'record'> & { record: unknown })[]> =>
        (await feedOf(of).read(after, 1000)).map((change) => ({
          ...change,
          record: JSON.parse(change.record) as unknown,
        }));
      const lastSeq = async (of: StorageDriver = driver): Promise<number> =>
        (await feedOf(of).bounds()).last;

      it('insert, update and delete each append their change, seqs one apart', async () => {
        const start = await lastSeq();
        await driver.insert(INT_KEY, [{ n: 1, label: 'one' }], 1000);
        await driver.update(INT_KEY, [1], { n: 1, label: 'uno' }, 1, 2000);
        await driver.delete(INT_KEY, [1], undefined, 3000);
        expect(await changesAfter(start)).toEqual([
          {
            seq: start + 1,
            entity: 'INT_KEY',
            id: '1',
            op: 'created',
            record: { n: 1, label: 'one' },
            timeUnix: 1000,
          },
          {
            seq: start + 2,
            entity: 'INT_KEY',
            id: '1',
            op: 'updated',
            record: { n: 1, label: 'uno' },
            timeUnix: 2000,
          },
          {
            seq: start + 3,
            entity: 'INT_KEY',
            id: '1',
            op: 'deleted',
            record: { n: 1, label: 'uno' },
            timeUnix: 3000,
          },
        ]);
        expect(await lastSeq()).toBe(start + 3);
      });

      it('the record of a change is its stored form, as get returns it', async () => {
        const start = await lastSeq();
        const record = { id: 'k1', name: 'x "y"\nz', count: 3, price: BIG_789, meta: { a: [1] } };
        await driver.insert(KINDS, [record], 1000);
        const [change] = await feedOf(driver).read(start, 10);
        expect(JSON.parse(change!.record)).toStrictEqual((await driver.get(KINDS, ['k1']))?.record);
      });

      it('a list insert appends one created per record, in request order', async () => {
        const start = await lastSeq();
        await driver.insert(INT_KEY, [{ n: 30 }, { n: 10 }, { n: 20, label: 'b' }], 1000);
        const changes = await changesAfter(start);
        expect(changes.map((c) => [c.seq - start, c.op, c.id])).toEqual([
          [1, 'created', '30'],
          [2, 'created', '10'],
          [3, 'created', '20'],
        ]);
        expect(changes[2]!.record).toEqual({ n: 20, label: 'b' });
      });

      it('failed and empty writes append nothing', async () => {
        await driver.insert(INT_KEY, [{ n: 1 }, { n: 2 }], 1000);
        const start = await lastSeq();
        await expect(driver.insert(INT_KEY, [{ n: 3 }, { n: 1 }], 1001)).rejects.toThrow();
        await expect(driver.insert(INT_KEY, [{ n: 4 }, { n: 4 }], 1001)).rejects.toThrow();
        await driver.insert(INT_KEY, [], 1001);
        expect(await driver.update(INT_KEY, [1], { n: 1, label: 'x' }, 5, 1002)).toEqual({
          status: 'conflict',
        });
        expect(await driver.update(INT_KEY, [9], { n: 9 }, 1, 1002)).toEqual({
          status: 'conflict',
        });
        expect(await driver.update(INT_KEY, [1], { n: 2 }, 1, 1003)).toEqual({
          status: 'duplicate',
        });
        expect(await driver.delete(INT_KEY, [9], undefined, 1004)).toBeUndefined();
        expect(await driver.delete(INT_KEY, [1], 7, 1004)).toBeUndefined();
        expect(await changesAfter(start)).toEqual([]);
        expect(await lastSeq()).toBe(start);
        // The next write takes the next seq: nothing was used up by the failures.
        await driver.insert(INT_KEY, [{ n: 5 }], 1005);
        expect((await changesAfter(start)).map((c) => c.seq)).toEqual([start + 1]);
      });

      it('a rename is a deleted of the old id (record as it was), then a created of the new', async () => {
        await driver.insert(
          COMPOSITE,
          [{ region: 'north', seq: 1, day: '2024-01-15', label: 'old' }],
          1000,
        );
        const start = await lastSeq();
        const renamed = { region: 'south', seq: 1, day: '2024-01-15', label: 'new' };
        expect(
          await driver.update(COMPOSITE, ['north', 1, '2024-01-15'], renamed, 1, 2000),
        ).toEqual({ status: 'updated', version: 2 });
        expect(await changesAfter(start)).toEqual([
          {
            seq: start + 1,
            entity: 'COMPOSITE',
            id: 'north~1~2024-01-15',
            op: 'deleted',
            record: { region: 'north', seq: 1, day: '2024-01-15', label: 'old' },
            timeUnix: 2000,
          },
          {
            seq: start + 2,
            entity: 'COMPOSITE',
            id: 'south~1~2024-01-15',
            op: 'created',
            record: renamed,
            timeUnix: 2000,
          },
        ]);
      });

      it('ids of boolean, date and integer keys are their text', async () => {
        const start = await lastSeq();
        await driver.insert(BOOL_KEY, [{ flag: false, day: '2024-02-29' }], 1000);
        await driver.update(
          BOOL_KEY,
          [false, '2024-02-29'],
          { flag: false, day: '2024-02-29', note: 'n' },
          1,
          1001,
        );
        expect((await changesAfter(start)).map((c) => [c.op, c.id])).toEqual([
          ['created', 'false~2024-02-29'],
          ['updated', 'false~2024-02-29'],
        ]);
      });

      it('watchers hear each write right after it committed, until they stop', async () => {
        const heard: StoredChange[][] = [];
        const stop = feedOf(driver).watch((committed) => {
          if (committed.length > 0) heard.push([...committed]);
        });
        const start = await lastSeq();
        await driver.insert(INT_KEY, [{ n: 1 }, { n: 2 }], 1000);
        expect(heard).toEqual([await feedOf(driver).read(start, 10)]);
        await driver.delete(INT_KEY, [2], 1, 1001);
        expect(heard[1]!.map((c) => [c.seq, c.op, c.id])).toEqual([[start + 3, 'deleted', '2']]);
        stop();
        await driver.insert(INT_KEY, [{ n: 3 }], 1002);
        expect(heard).toHaveLength(2);
      });

      it('trim deletes the oldest changes up to a time, never the newest; seqs go on', async () => {
        expect(await feedOf(driver).bounds()).toEqual({ first: 1, last: 0 });
        await driver.insert(INT_KEY, [{ n: 1 }], 1000);
        await driver.insert(INT_KEY, [{ n: 2 }], 2000);
        await driver.insert(INT_KEY, [{ n: 3 }], 3000);
        expect(await feedOf(driver).trim(2500)).toBe(2);
        expect(await feedOf(driver).bounds()).toEqual({ first: 3, last: 3 });
        expect((await changesAfter(0)).map((c) => c.seq)).toEqual([3]);
        // All of them are old now: the newest stays, so its seq is never handed out again.
        expect(await feedOf(driver).trim(10_000)).toBe(0);
        await driver.insert(INT_KEY, [{ n: 4 }], 4000);
        expect(await feedOf(driver).trim(10_000)).toBe(1);
        expect((await changesAfter(0)).map((c) => c.seq)).toEqual([4]);
        expect(await feedOf(driver).bounds()).toEqual({ first: 4, last: 4 });
      });

      it('trim never leaves a gap: a young change stops it even when older ones follow', async () => {
        const start = await lastSeq();
        await driver.insert(INT_KEY, [{ n: 1 }], 1000);
        await driver.insert(INT_KEY, [{ n: 2 }], 5000); // another instance's clock ran ahead
        await driver.insert(INT_KEY, [{ n: 3 }], 2000);
        expect(await feedOf(driver).trim(3000)).toBe(1);
        expect((await changesAfter(0)).map((c) => c.seq)).toEqual([start + 2, start + 3]);
      });

      it('read pages through the changes in seq order', async () => {
        const start = await lastSeq();
        await driver.insert(
          INT_KEY,
          Array.from({ length: 25 }, (_, i) => ({ n: i })),
          1000,
        );
        const seen: number[] = [];
        let after = start;
        for (;;) {
          const page = await feedOf(driver).read(after, 10);
          if (page.length === 0) break;
          seen.push(...page.map((c) => c.seq));
          after = page.at(-1)!.seq;
        }
        expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => start + 1 + i));
      });

      it('a large write keeps every change with its own record, resumable from any seq inside it', async () => {
        await driver.insert(INT_KEY, [{ n: 1, label: 'single' }], 1000);
        const start = await lastSeq();
        const records = Array.from({ length: 40 }, (_, i) => ({ n: 10 + i, label: `r${i}` }));
        await driver.insert(INT_KEY, records, 2000);
        await driver.update(INT_KEY, [10], { n: 10, label: 'changed' }, 1, 3000);
        // Each change of the bulk insert carries its record as inserted, not as it is now.
        const all = await changesAfter(start);
        expect(all.map((c) => [c.seq - start, c.op, c.record])).toEqual([
          ...records.map((record, i) => [i + 1, 'created', record]),
          [41, 'updated', { n: 10, label: 'changed' }],
        ]);
        expect(all.every((c) => c.timeUnix === (c.seq - start === 41 ? 3000 : 2000))).toBe(true);
        // Resuming inside the write, and pages that end inside it.
        for (const after of [start + 1, start + 17, start + 39, start + 40]) {
          expect((await feedOf(driver).read(after, 3)).map((c) => c.seq)).toEqual(
            [after + 1, after + 2, after + 3].filter((seq) => seq <= start + 41),
          );
        }
        expect(await lastSeq()).toBe(start + 41);
        // Trimmed up to the bulk insert: the oldest change kept is its first.
        expect(await feedOf(driver).trim(1500)).toBe(start);
        expect(await feedOf(driver).bounds()).toEqual({ first: start + 1, last: start + 41 });
        expect(await feedOf(driver).trim(2500)).toBe(40);
        expect(await feedOf(driver).bounds()).toEqual({ first: start + 41, last: start + 41 });
        // The seqs go on after it.
        await driver.insert(INT_KEY, [{ n: 99 }], 4000);
        expect(await lastSeq()).toBe(start + 42);
        // A write larger than one pack (SQLite: 1 000 changes a pack) reads back whole, in order.
        const many = Array.from({ length: 2_500 }, (_, i) => ({ n: 1_000 + i, label: `m${i}` }));
        await driver.insert(INT_KEY, many, 5000);
        const read = await feedOf(driver).read(start + 42, 3_000);
        expect(read.map((c) => c.seq)).toEqual(many.map((_, i) => start + 43 + i));
        expect(read.map((c) => JSON.parse(c.record) as unknown)).toEqual(many);
        expect((await feedOf(driver).read(start + 1_041, 2)).map((c) => c.id)).toEqual([
          '1999',
          '2000',
        ]);
        expect(await lastSeq()).toBe(start + 42 + 2_500);
      });

      it('opened with events off, writes append nothing', async () => {
        const off = await makeDriver();
        extra.push(off);
        await off.open(CONTRACT_TABLES, { events: false });
        const start = await lastSeq(off);
        await off.insert(INT_KEY, [{ n: 1 }], 1000);
        await off.update(INT_KEY, [1], { n: 2 }, 1, 1001);
        await off.delete(INT_KEY, [2], undefined, 1002);
        expect(await changesAfter(start, off)).toEqual([]);
      });

      it.runIf(options.reopen !== undefined)(
        'drivers on one storage share one gapless sequence, also when writing concurrently',
        async () => {
          const other = await reopen();
          const start = await lastSeq();
          await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              (i % 2 === 0 ? driver : other).insert(INT_KEY, [{ n: i }, { n: 100 + i }], 1000 + i),
            ),
          );
          const changes = await changesAfter(start, other);
          expect(changes.map((c) => c.seq)).toEqual(
            Array.from({ length: 80 }, (_, i) => start + 1 + i),
          );
          // The two records of one insert are adjacent: a write's changes are never interleaved.
          for (let i = 0; i < 80; i += 2)
            expect(Number(changes[i + 1]!.id) - Number(changes[i]!.id)).toBe(100);
        },
      );
    });

    // --------------------------------------------------------------------------------------------
    describe('round trips', () => {
      const full: StoredFields = {
        id: 'full',
        name: 'Zürich 日本 🎉 "quotes" \'single\' back\\slash\nnew line',
        count: Number.MAX_SAFE_INTEGER,
        ratio: 0.1 + 0.2,
        price: BIG_789,
        active: true,
        day: '2024-02-29',
        at: '2024-02-29T23:30:00.123Z',
        meta: {
          address: { city: 'Pisa', zip: '56100', geo: { lat: 43.7, lng: 10.4 } },
          list: [1, 'two', { three: [3] }, null, true],
          unicode: 'ü 日本 🎉 "q" \\ \n',
          empty: {},
          none: [],
        },
        tags: ['a', 'b', 'a'],
        scores: [1, -2, 3.5],
        extra: 'a JSON string',
      };

      it('every column kind reads back exactly, via get and list', async () => {
        await driver.insert(KINDS, [full], 1000);
        const got = await driver.get(KINDS, ['full']);
        expect(got).toStrictEqual({ record: full, version: 1, createdAt: 1000, updatedAt: 1000 });
        const listed = await driver.list(KINDS, { filters: [], orderBy: [] });
        expect(listed).toStrictEqual([got]);
      });

      if (options.synchronousReads === true) {
        it('getNow answers what get answers, synchronously', async () => {
          await driver.insert(KINDS, [full], 1000);
          expect(driver.getNow).toBeTypeOf('function');
          expect(driver.getNow!(KINDS, ['full'])).toStrictEqual(await driver.get(KINDS, ['full']));
          expect(driver.getNow!(KINDS, ['absent'])).toBeUndefined();
          // A write is visible to getNow as soon as it resolved.
          await driver.insert(KINDS, [{ ...full, id: 'later' }], 2000);
          expect(driver.getNow!(KINDS, ['later'])).toMatchObject({ version: 1, createdAt: 2000 });
        });
      } else {
        it('has no getNow (reads are asynchronous): get answers the record, or undefined', async () => {
          await driver.insert(KINDS, [full], 1000);
          // The service's fast path reads with get when getNow is absent; a getNow that is
          // present must answer, so an asynchronous driver must not have one at all.
          expect(driver.getNow).toBeUndefined();
          const pending = driver.get(KINDS, ['full']);
          expect(pending).toBeInstanceOf(Promise);
          expect(await pending).toStrictEqual({
            record: full,
            version: 1,
            createdAt: 1000,
            updatedAt: 1000,
          });
          await expect(driver.get(KINDS, ['absent'])).resolves.toBeUndefined();
        });
      }

      it('records list the fields in column order', async () => {
        const shuffled = Object.fromEntries(Object.entries(full).reverse());
        await driver.insert(KINDS, [shuffled], 1000);
        const got = await driver.get(KINDS, ['full']);
        expect(Object.keys(got!.record)).toEqual(KINDS.columns.map((c) => c.name));
      });

      it.each<[string, StoredFields]>([
        ['integer extremes', { count: Number.MIN_SAFE_INTEGER }],
        ['integer zero', { count: 0 }],
        ['double max', { ratio: Number.MAX_VALUE }],
        ['double min subnormal', { ratio: Number.MIN_VALUE }],
        ['double negative', { ratio: -123.456 }],
        ['double integral', { ratio: 3 }],
        ['decimal negative tiny', { price: '-0.000000000000000000001' }],
        ['decimal huge integer', { price: '-1234567890123456789012345678901234567890' }],
        ['decimal zero', { price: '0' }],
        ['decimal money', { price: '19.99' }],
        ['boolean false', { active: false }],
        ['empty string', { name: '' }],
        ['date', { day: '0001-01-01' }],
        ['datetime', { at: '1970-01-01T00:00:00.000Z' }],
        ['json empty object', { meta: {} }],
        ['json array of objects', { meta: { rows: [{ a: 1 }, { b: [2, { c: 'x' }] }] } }],
        ['json deep nesting', { meta: { a: { b: { c: { d: { e: { f: 'deep' } } } } } } }],
        ['json empty arrays', { tags: [], scores: [] }],
        ['json array with nulls', { scores: [1, null, 2] }],
        ['json scalar number', { extra: 42 }],
        ['json scalar false', { extra: false }],
        ['json scalar zero', { extra: 0 }],
        ['json scalar empty string', { extra: '' }],
        ['json top-level array', { extra: [1, [2, [3]], { k: 'v' }] }],
      ])('%s', async (_label, fields) => {
        const record = { id: 'x', ...fields };
        await driver.insert(KINDS, [record], 5);
        expect((await driver.get(KINDS, ['x']))?.record).toStrictEqual(record);
      });

      it('absent optional fields (undefined) are not present on read', async () => {
        await driver.insert(
          KINDS,
          [{ id: 'sparse', name: undefined, count: undefined, meta: undefined, active: undefined }],
          1,
        );
        const got = await driver.get(KINDS, ['sparse']);
        expect(got?.record).toStrictEqual({ id: 'sparse' });
        expect(Object.keys(got!.record)).toEqual(['id']);
        const [listed] = await driver.list(KINDS, { filters: [], orderBy: [] });
        expect(listed?.record).toStrictEqual({ id: 'sparse' });
      });

      it('get of a missing key is undefined', async () => {
        expect(await driver.get(KINDS, ['nope'])).toBeUndefined();
      });

      it('integer keys: numeric identity, numeric order, full safe range', async () => {
        const keys = [10, 9, -5, 0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
        await driver.insert(
          INT_KEY,
          keys.map((n) => ({ n, label: `n${n}` })),
          1,
        );
        for (const n of keys) {
          const got = await driver.get(INT_KEY, [n]);
          expect(got?.record).toStrictEqual({ n, label: `n${n}` });
          expect(typeof got?.record['n']).toBe('number');
        }
        expect(await driver.get(INT_KEY, [11])).toBeUndefined();
        const listed = await driver.list(INT_KEY, { filters: [], orderBy: [] });
        expect(idsOf(listed, 'n')).toEqual([...keys].sort((a, b) => a - b));
      });

      it('boolean + date keys', async () => {
        await driver.insert(
          BOOL_KEY,
          [
            { flag: true, day: '2024-01-02', note: 'c' },
            { flag: true, day: '2024-01-01', note: 'b' },
            { flag: false, day: '2024-01-01', note: 'a' },
          ],
          1,
        );
        expect((await driver.get(BOOL_KEY, [false, '2024-01-01']))?.record).toStrictEqual({
          flag: false,
          day: '2024-01-01',
          note: 'a',
        });
        expect((await driver.get(BOOL_KEY, [true, '2024-01-01']))?.record['note']).toBe('b');
        expect(await driver.get(BOOL_KEY, [false, '2024-01-02'])).toBeUndefined();
        const listed = await driver.list(BOOL_KEY, { filters: [], orderBy: [] });
        expect(listed.map((r) => r.record['note'])).toEqual(['a', 'b', 'c']);
        expect(typeof listed[0]?.record['flag']).toBe('boolean');
        const error = await driver
          .insert(BOOL_KEY, [{ flag: true, day: '2024-01-01' }], 2)
          .catch((e: unknown) => e);
        expect(isDuplicateKeyError(error)).toBe(true);
        const filtered = await driver.list(BOOL_KEY, {
          filters: where(cond('flag', 'EQUALS', 'boolean', true)),
          orderBy: [],
        });
        expect(filtered.map((r) => r.record['note'])).toEqual(['b', 'c']);
      });

      it('composite keys: every part matters, order is by the parts in key order', async () => {
        await driver.insert(
          COMPOSITE,
          [
            { region: 'us', seq: 1, day: '2024-01-01', label: 'us-1' },
            { region: 'eu', seq: 10, day: '2024-01-01', label: 'eu-10' },
            { region: 'eu', seq: 9, day: '2024-01-02', label: 'eu-9b' },
            { region: 'eu', seq: 9, day: '2024-01-01', label: 'eu-9a' },
          ],
          1,
        );
        expect((await driver.get(COMPOSITE, ['eu', 9, '2024-01-02']))?.record).toStrictEqual({
          region: 'eu',
          seq: 9,
          day: '2024-01-02',
          label: 'eu-9b',
        });
        expect(await driver.get(COMPOSITE, ['eu', 9, '2024-01-03'])).toBeUndefined();
        expect(await driver.get(COMPOSITE, ['us', 9, '2024-01-01'])).toBeUndefined();
        const listed = await driver.list(COMPOSITE, { filters: [], orderBy: [] });
        expect(listed.map((r) => r.record['label'])).toEqual(['eu-9a', 'eu-9b', 'eu-10', 'us-1']);
        const error = await driver
          .insert(COMPOSITE, [{ region: 'eu', seq: 9, day: '2024-01-01' }], 2)
          .catch((e: unknown) => e);
        expect(isDuplicateKeyError(error)).toBe(true);
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('insert', () => {
      it('stores version 1 and the given time', async () => {
        await driver.insert(INT_KEY, [{ n: 1 }, { n: 2 }], 1234);
        expect(await driver.get(INT_KEY, [2])).toStrictEqual({
          record: { n: 2 },
          version: 1,
          createdAt: 1234,
          updatedAt: 1234,
        });
      });

      it('an empty list inserts nothing and succeeds', async () => {
        await driver.insert(INT_KEY, [], 1);
        expect(await driver.count(INT_KEY, { filters: [] })).toBe(0);
      });

      it('a key already in storage fails the whole list; index names the record', async () => {
        await driver.insert(INT_KEY, [{ n: 1 }, { n: 2 }], 1);
        const error = await driver
          .insert(INT_KEY, [{ n: 3 }, { n: 4 }, { n: 2 }, { n: 5 }], 2)
          .catch((e: unknown) => e);
        expect(isDuplicateKeyError(error)).toBe(true);
        expect(error).toMatchObject({ table: INT_KEY.table, index: 2 });
        expect(idsOf(await driver.list(INT_KEY, { filters: [], orderBy: [] }), 'n')).toEqual([
          1, 2,
        ]);
        expect((await driver.get(INT_KEY, [2]))?.createdAt).toBe(1);
      });

      it('a key twice in the list fails the whole list; index is the repeat', async () => {
        const error = await driver
          .insert(KINDS, [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'b' }], 1)
          .catch((e: unknown) => e);
        expect(isDuplicateKeyError(error)).toBe(true);
        expect(error).toMatchObject({ table: KINDS.table, index: 3 });
        expect(await driver.count(KINDS, { filters: [] })).toBe(0);
      });

      it('the failed list leaves activity unchanged', async () => {
        await driver.insert(INT_KEY, [{ n: 1 }], 100);
        await driver.insert(INT_KEY, [{ n: 2 }, { n: 1 }], 200).catch(() => undefined);
        expect((await driver.activity())['INT_KEY']).toStrictEqual({ lastCreate: 100 });
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('update', () => {
      beforeEach(async () => {
        await driver.insert(
          KINDS,
          [
            { id: 'a', name: 'first', count: 1, meta: { x: 1 } },
            { id: 'b', name: 'second' },
          ],
          1000,
        );
      });

      it('replaces every field when the version matches and bumps the version', async () => {
        const result = await driver.update(
          KINDS,
          ['a'],
          { id: 'a', name: 'changed', price: '1.5' },
          1,
          2000,
        );
        expect(result).toEqual({ status: 'updated', version: 2 });
        expect(await driver.get(KINDS, ['a'])).toStrictEqual({
          record: { id: 'a', name: 'changed', price: '1.5' },
          version: 2,
          createdAt: 1000,
          updatedAt: 2000,
        });
        expect(await driver.update(KINDS, ['a'], { id: 'a' }, 2, 3000)).toEqual({
          status: 'updated',
          version: 3,
        });
        expect((await driver.get(KINDS, ['a']))?.record).toStrictEqual({ id: 'a' });
      });

      it('replaceMany: creates, replaces where a compared field differs, keeps and reads back the rest', async () => {
        // Optional in the interface; both drivers of the project have it.
        expect(driver.replaceMany).toBeDefined();
        await driver.insert(
          KINDS,
          [
            { id: 'rm-a', price: '1.50', meta: { x: [1], y: 2 } },
            { id: 'rm-b', count: 2, at: '2020-01-02T03:04:05.678Z', name: 'k' },
            { id: 'rm-c', count: 3 },
            { id: 'rm-d', meta: { a: 1, b: [true, null] }, active: false },
          ],
          1000,
        );
        const last = (await driver.changes!.bounds()).last;
        // `name` stands for a createdAt (kept as stored), `at` for an updatedAt (not compared).
        const replaced = await driver.replaceMany!(
          KINDS,
          [
            // DECIMAL compares as written ('1.5' is not '1.50'); JSON by value (key order aside).
            { id: 'rm-a', price: '1.5', meta: { y: 2, x: [1] } },
            { id: 'rm-b', count: 2, at: '2021-01-01T00:00:00.000Z', name: 'other' },
            { id: 'rm-c', count: 30, name: 'zz' },
            { id: 'rm-new', count: 1, name: 'made', at: '2021-01-01T00:00:00.000Z' },
            { id: 'rm-d', meta: { b: [true, null], a: 1 }, active: false },
          ],
          2000,
          { keep: ['name'], stamped: ['at'] },
        );
        expect(replaced?.map(({ fate, version, record }) => [fate, version, record])).toEqual([
          ['updated', 2, { id: 'rm-a', price: '1.5', meta: { y: 2, x: [1] } }],
          ['unchanged', 1, { id: 'rm-b', count: 2, at: '2020-01-02T03:04:05.678Z', name: 'k' }],
          ['updated', 2, { id: 'rm-c', count: 30 }],
          ['created', 1, { id: 'rm-new', count: 1, name: 'made', at: '2021-01-01T00:00:00.000Z' }],
          ['unchanged', 1, { id: 'rm-d', active: false, meta: { a: 1, b: [true, null] } }],
        ]);
        expect(replaced?.map(({ createdAt, updatedAt }) => [createdAt, updatedAt])).toEqual([
          [1000, 2000],
          [1000, 1000],
          [1000, 2000],
          [2000, 2000],
          [1000, 1000],
        ]);
        expect(
          (await driver.getMany!(KINDS, [['rm-a'], ['rm-b'], ['rm-c'], ['rm-new'], ['rm-d']])).map(
            (found) => found?.record,
          ),
        ).toEqual(replaced?.map(({ record }) => record));
        expect(
          (await driver.changes!.read(last, 10)).map((c) => [c.seq - last, c.op, c.id]),
        ).toEqual([
          [1, 'updated', 'rm-a'],
          [2, 'updated', 'rm-c'],
          [3, 'created', 'rm-new'],
        ]);
        expect((await driver.activity()).KINDS).toMatchObject({
          lastCreate: 2000,
          lastUpdate: 2000,
        });
        // A key given twice: declined, nothing written.
        expect(
          await driver.replaceMany!(
            KINDS,
            [
              { id: 'rm-twice', count: 1 },
              { id: 'rm-twice', count: 2 },
            ],
            3000,
          ),
        ).toBeUndefined();
        expect(await driver.get(KINDS, ['rm-twice'])).toBeUndefined();
      });

      it('conflict when the version moved on; nothing changes', async () => {
        await driver.update(KINDS, ['a'], { id: 'a', name: 'v2' }, 1, 2000);
        expect(await driver.update(KINDS, ['a'], { id: 'a', name: 'stale' }, 1, 3000)).toEqual({
          status: 'conflict',
        });
        expect(await driver.get(KINDS, ['a'])).toMatchObject({
          record: { id: 'a', name: 'v2' },
          version: 2,
          updatedAt: 2000,
        });
      });

      it('conflict when the record is gone', async () => {
        expect(await driver.update(KINDS, ['zz'], { id: 'zz', name: 'x' }, 1, 2000)).toEqual({
          status: 'conflict',
        });
        expect(await driver.get(KINDS, ['zz'])).toBeUndefined();
      });

      it('rename moves the record, keeps createdAt and frees the old key', async () => {
        expect(await driver.update(KINDS, ['a'], { id: 'c', name: 'renamed' }, 1, 2000)).toEqual({
          status: 'updated',
          version: 2,
        });
        expect(await driver.get(KINDS, ['a'])).toBeUndefined();
        expect(await driver.get(KINDS, ['c'])).toStrictEqual({
          record: { id: 'c', name: 'renamed' },
          version: 2,
          createdAt: 1000,
          updatedAt: 2000,
        });
        await driver.insert(KINDS, [{ id: 'a', name: 'new a' }], 3000);
        expect(await driver.get(KINDS, ['a'])).toMatchObject({
          record: { name: 'new a' },
          version: 1,
        });
      });

      it('rename onto an existing key is a duplicate; nothing changes', async () => {
        expect(await driver.update(KINDS, ['a'], { id: 'b', name: 'clash' }, 1, 2000)).toEqual({
          status: 'duplicate',
        });
        expect(await driver.get(KINDS, ['a'])).toMatchObject({
          record: { name: 'first' },
          version: 1,
        });
        expect(await driver.get(KINDS, ['b'])).toMatchObject({
          record: { name: 'second' },
          version: 1,
        });
      });

      it('rename of one part of a composite key', async () => {
        await driver.insert(
          COMPOSITE,
          [
            { region: 'eu', seq: 1, day: '2024-01-01' },
            { region: 'eu', seq: 2, day: '2024-01-01' },
          ],
          1,
        );
        expect(
          await driver.update(
            COMPOSITE,
            ['eu', 1, '2024-01-01'],
            { region: 'eu', seq: 1, day: '2024-01-05' },
            1,
            2,
          ),
        ).toEqual({ status: 'updated', version: 2 });
        expect(await driver.get(COMPOSITE, ['eu', 1, '2024-01-01'])).toBeUndefined();
        expect((await driver.get(COMPOSITE, ['eu', 1, '2024-01-05']))?.version).toBe(2);
        expect(
          await driver.update(
            COMPOSITE,
            ['eu', 1, '2024-01-05'],
            { region: 'eu', seq: 2, day: '2024-01-01' },
            2,
            3,
          ),
        ).toEqual({ status: 'duplicate' });
      });

      it('updates boolean and integer keyed records', async () => {
        await driver.insert(BOOL_KEY, [{ flag: false, day: '2024-01-01', note: 'x' }], 1);
        expect(
          await driver.update(
            BOOL_KEY,
            [false, '2024-01-01'],
            { flag: true, day: '2024-01-01', note: 'y' },
            1,
            2,
          ),
        ).toEqual({ status: 'updated', version: 2 });
        expect((await driver.get(BOOL_KEY, [true, '2024-01-01']))?.record['note']).toBe('y');
        await driver.insert(INT_KEY, [{ n: 5 }], 1);
        expect(await driver.update(INT_KEY, [5], { n: 5, label: 'five' }, 1, 2)).toEqual({
          status: 'updated',
          version: 2,
        });
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('delete', () => {
      beforeEach(async () => {
        await driver.insert(KINDS, [{ id: 'a', name: 'first', price: '1.10' }, { id: 'b' }], 1000);
        await driver.update(KINDS, ['a'], { id: 'a', name: 'second', price: '1.10' }, 1, 2000);
      });

      it('returns the deleted record with its last version and times', async () => {
        expect(await driver.delete(KINDS, ['a'], undefined, 3000)).toStrictEqual({
          record: { id: 'a', name: 'second', price: '1.10' },
          version: 2,
          createdAt: 1000,
          updatedAt: 2000,
        });
        expect(await driver.get(KINDS, ['a'])).toBeUndefined();
        expect(await driver.get(KINDS, ['b'])).toBeDefined();
      });

      it('returns undefined for a missing key', async () => {
        expect(await driver.delete(KINDS, ['zz'], undefined, 3000)).toBeUndefined();
      });

      it('honours expectedVersion', async () => {
        expect(await driver.delete(KINDS, ['a'], 1, 3000)).toBeUndefined();
        expect(await driver.get(KINDS, ['a'])).toBeDefined();
        expect((await driver.delete(KINDS, ['a'], 2, 3000))?.version).toBe(2);
        expect(await driver.get(KINDS, ['a'])).toBeUndefined();
      });

      it('composite, integer and boolean keys', async () => {
        await driver.insert(COMPOSITE, [{ region: 'eu', seq: 1, day: '2024-01-01' }], 1);
        await driver.insert(INT_KEY, [{ n: -3 }], 1);
        await driver.insert(BOOL_KEY, [{ flag: true, day: '2024-01-01' }], 1);
        expect(
          (await driver.delete(COMPOSITE, ['eu', 1, '2024-01-01'], undefined, 2))?.record,
        ).toStrictEqual({
          region: 'eu',
          seq: 1,
          day: '2024-01-01',
        });
        expect((await driver.delete(INT_KEY, [-3], undefined, 2))?.record).toStrictEqual({ n: -3 });
        expect(await driver.delete(BOOL_KEY, [false, '2024-01-01'], undefined, 2)).toBeUndefined();
        expect(
          (await driver.delete(BOOL_KEY, [true, '2024-01-01'], undefined, 2))?.record,
        ).toStrictEqual({
          flag: true,
          day: '2024-01-01',
        });
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('soft delete', () => {
      const rows: StoredFields[] = [
        { region: 'eu', seq: 1, price: '1.50', active: true },
        { region: 'eu', seq: 2, price: '2.50' },
        { region: 'us', seq: 1, price: '3.50', active: false },
      ];
      const keys = (list: readonly { record: StoredFields }[]) =>
        list.map(({ record }) => `${String(record['region'])}~${String(record['seq'])}`);
      beforeEach(async () => {
        await driver.insert(SOFT, rows, 1000);
      });

      it('marks the record deleted: reads by key, lists and counts skip it, its key stays taken', async () => {
        const first = await driver.changes!.bounds();
        expect(await driver.delete(SOFT, ['eu', 2], undefined, 2000, { by: 'ann' })).toStrictEqual({
          record: { region: 'eu', seq: 2, price: '2.50' },
          version: 2,
          createdAt: 1000,
          updatedAt: 2000,
        });
        expect(await driver.get(SOFT, ['eu', 2])).toBeUndefined();
        expect(await driver.getDeleted!(SOFT, ['eu', 2])).toStrictEqual({
          record: { region: 'eu', seq: 2, price: '2.50' },
          version: 2,
          createdAt: 1000,
          updatedAt: 2000,
          deletedAt: 2000,
          deletedBy: 'ann',
        });
        expect(await driver.getDeleted!(SOFT, ['eu', 1])).toBeUndefined();
        expect(keys(await driver.list(SOFT, { filters: [], orderBy: [] }))).toEqual([
          'eu~1',
          'us~1',
        ]);
        const byPrice: FilterGroup[] = [
          { anyOf: [{ path: ['price'], operator: 'GT', kind: 'decimal', value: '2' }] },
        ];
        expect(keys(await driver.list(SOFT, { filters: byPrice, orderBy: [] }))).toEqual(['us~1']);
        expect(await driver.count(SOFT, { filters: [] })).toBe(2);
        expect(
          keys(await driver.list(SOFT, { filters: [], orderBy: [], deleted: 'only' })),
        ).toEqual(['eu~2']);
        expect(
          keys(
            await driver.list(SOFT, {
              filters: byPrice,
              orderBy: [{ column: 'price', descending: true }],
              deleted: 'include',
            }),
          ),
        ).toEqual(['us~1', 'eu~2']);
        expect(await driver.count(SOFT, { filters: [], deleted: 'include' })).toBe(3);
        // A second delete finds nothing; an insert of the key is a duplicate.
        expect(await driver.delete(SOFT, ['eu', 2], undefined, 3000)).toBeUndefined();
        await expect(driver.insert(SOFT, [{ region: 'eu', seq: 2 }], 3000)).rejects.toMatchObject({
          index: 0,
        });
        // An update with the version read before the delete conflicts.
        expect(await driver.update(SOFT, ['eu', 2], { region: 'eu', seq: 2 }, 1, 3000)).toEqual({
          status: 'conflict',
        });
        const changes = await driver.changes!.read(first.last, 10);
        expect(changes.map(({ op, soft, id }) => ({ op, soft, id }))).toEqual([
          { op: 'deleted', soft: true, id: 'eu~2' },
        ]);
      });

      it('pages by offset over the live records only, in either key order, with and without a count', async () => {
        // 30 more records, every third one deleted: offsets count live records only.
        const more = Array.from({ length: 30 }, (_, i) => ({ region: 'mx', seq: i + 1 }));
        await driver.insert(SOFT, more, 1500);
        for (let i = 1; i <= 30; i += 3) await driver.delete(SOFT, ['mx', i], undefined, 1600);
        const live = keys(await driver.list(SOFT, { filters: [], orderBy: [] }));
        expect(live).toHaveLength(23);
        for (const descending of [false, true]) {
          const order = descending ? [...live].reverse() : live;
          // The key order, or the key order reversed.
          const terms = descending
            ? [
                { column: 'region', descending: true },
                { column: 'seq', descending: true },
              ]
            : [];
          for (const offset of [0, 1, 5, 20, 22, 23, 40]) {
            const page = await driver.list(SOFT, {
              filters: [],
              orderBy: terms,
              offset,
              limit: 4,
            });
            expect(keys(page), `offset ${offset}, descending ${descending}`).toEqual(
              order.slice(offset, offset + 4),
            );
          }
          const counted = await driver.listCounted?.(SOFT, {
            filters: [],
            orderBy: terms,
            offset: 7,
            limit: 3,
          });
          if (counted !== undefined) {
            expect(keys(counted.rows)).toEqual(order.slice(7, 10));
            expect(counted.count).toBe(23);
          }
        }
      });

      it('restores a deleted record and purges live and deleted ones, each with its change', async () => {
        await driver.delete(SOFT, ['eu', 2], undefined, 2000);
        const first = await driver.changes!.bounds();
        expect(await driver.restore!(SOFT, ['eu', 1], 3000)).toBeUndefined();
        expect(await driver.restore!(SOFT, ['eu', 2], 3000)).toStrictEqual({
          record: { region: 'eu', seq: 2, price: '2.50' },
          version: 3,
          createdAt: 1000,
          updatedAt: 3000,
        });
        expect((await driver.get(SOFT, ['eu', 2]))?.version).toBe(3);
        // Purge: a live record, then a deleted one (with expectedVersion).
        expect(
          (await driver.delete(SOFT, ['eu', 1], undefined, 4000, { mode: 'purge' }))?.version,
        ).toBe(1);
        await driver.delete(SOFT, ['us', 1], undefined, 4000);
        expect(await driver.delete(SOFT, ['us', 1], 1, 5000, { mode: 'purge' })).toBeUndefined();
        expect(
          (await driver.delete(SOFT, ['us', 1], 2, 5000, { mode: 'purge' }))?.record,
        ).toStrictEqual({
          region: 'us',
          seq: 1,
          price: '3.50',
          active: false,
        });
        expect(await driver.count(SOFT, { filters: [], deleted: 'include' })).toBe(1);
        await driver.insert(SOFT, [{ region: 'us', seq: 1 }], 6000);
        const changes = await driver.changes!.read(first.last, 10);
        expect(changes.map(({ op, soft, id }) => ({ op, soft, id }))).toEqual([
          { op: 'restored', soft: undefined, id: 'eu~2' },
          { op: 'purged', soft: undefined, id: 'eu~1' },
          { op: 'deleted', soft: true, id: 'us~1' },
          { op: 'purged', soft: undefined, id: 'us~1' },
          { op: 'created', soft: undefined, id: 'us~1' },
        ]);
        expect((await driver.activity())['SOFT']).toEqual({
          lastCreate: 6000,
          lastUpdate: 3000,
          lastDelete: 5000,
        });
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('activity', () => {
      it('is empty on fresh storage', async () => {
        expect(await driver.activity()).toStrictEqual({});
      });

      it('tracks the last create, update and delete per entity; absent when never happened', async () => {
        await driver.insert(KINDS, [{ id: 'a' }, { id: 'b' }], 1000);
        expect(await driver.activity()).toStrictEqual({ KINDS: { lastCreate: 1000 } });
        await driver.update(KINDS, ['a'], { id: 'a', name: 'x' }, 1, 2000);
        expect((await driver.activity())['KINDS']).toStrictEqual({
          lastCreate: 1000,
          lastUpdate: 2000,
        });
        await driver.delete(KINDS, ['b'], undefined, 3000);
        await driver.insert(INT_KEY, [{ n: 1 }], 4000);
        expect(await driver.activity()).toStrictEqual({
          KINDS: { lastCreate: 1000, lastUpdate: 2000, lastDelete: 3000 },
          INT_KEY: { lastCreate: 4000 },
        });
      });

      it('keeps the latest time, and ignores failed and empty writes', async () => {
        await driver.insert(KINDS, [{ id: 'a' }], 5000);
        await driver.insert(KINDS, [{ id: 'b' }], 4000);
        await driver.insert(KINDS, [], 9000);
        await driver.insert(KINDS, [{ id: 'a' }], 9000).catch(() => undefined);
        await driver.update(KINDS, ['a'], { id: 'a' }, 7, 9000);
        await driver.update(KINDS, ['a'], { id: 'b' }, 1, 9000);
        await driver.delete(KINDS, ['zz'], undefined, 9000);
        await driver.delete(KINDS, ['a'], 5, 9000);
        expect(await driver.activity()).toStrictEqual({ KINDS: { lastCreate: 5000 } });
      });

      it.runIf(options.reopen !== undefined)('is persisted in storage', async () => {
        await driver.insert(KINDS, [{ id: 'a' }], 1000);
        await driver.delete(KINDS, ['a'], undefined, 2000);
        await driver.close();
        const other = await reopen();
        expect(await other.activity()).toStrictEqual({
          KINDS: { lastCreate: 1000, lastDelete: 2000 },
        });
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('list filters', () => {
      beforeEach(async () => {
        await driver.insert(KINDS, FILTER_DATA, 1000);
      });

      it('no filter lists everything in key order', async () => {
        expect(await matching([])).toEqual(ALL_IDS);
      });

      describe('text', () => {
        it.each<[FilterOperator, string, string[]]>([
          ['EQUALS', 'alpha', ['r01']],
          ['EQUALS', 'Alpha', ['r02']],
          ['EQUALS', 'alp', []],
          ['EQUALS', 'Zürich 日本', ['r10']],
          ['EQUALS', '', []],
          ['NOT_EQUALS', 'alpha', allBut('r01')],
          ['CONTAINS', 'lph', ['r01', 'r02']],
          ['CONTAINS', 'LPH', ['r03']],
          ['CONTAINS', '%', ['r04', 'r09']],
          ['CONTAINS', '_', ['r05']],
          ['CONTAINS', '\\', ['r06']],
          ['CONTAINS', "'", ['r07', 'r08']],
          ['CONTAINS', '"', ['r07']],
          ['CONTAINS', 'a%b', []],
          ['CONTAINS', '日', ['r10']],
          ['CONTAINS', '', allBut('r11')],
          ['NOT_CONTAINS', 'a', ['r03', 'r04', 'r07', 'r08', 'r09', 'r10', 'r11']],
          ['NOT_CONTAINS', '%', allBut('r04', 'r09')],
          ['STARTS_WITH', 'a', ['r01', 'r05', 'r12']],
          ['STARTS_WITH', 'A', ['r02', 'r03']],
          ['STARTS_WITH', '%', ['r09']],
          ['STARTS_WITH', 'a_', ['r05']],
          ['STARTS_WITH', 'back\\', ['r06']],
          ['STARTS_WITH', 'alphabetical', []],
          ['STARTS_WITH', 'Zü', ['r10']],
          ['ENDS_WITH', '%', ['r09']],
          ['ENDS_WITH', 'ha', ['r01', 'r02']],
          ['ENDS_WITH', '\\slash', ['r06']],
          ['ENDS_WITH', '"', ['r07']],
          ['ENDS_WITH', "'1", ['r08']],
          ['ENDS_WITH', '日本', ['r10']],
          ['ENDS_WITH', '_b', ['r05']],
          ['ENDS_WITH', 'much longer than any value', []],
          ['GT', 'a', ['r01', 'r05', 'r06', 'r07', 'r08', 'r12']],
          ['GTE', 'alpha', ['r01', 'r06', 'r07', 'r08', 'r12']],
          ['LT', 'B', ['r02', 'r03', 'r04', 'r09']],
          ['LTE', 'Alpha', ['r02', 'r03', 'r04', 'r09']],
        ])('%s %j', async (operator, value, expected) => {
          expect(await matching(where(cond('name', operator, 'text', value)))).toEqual(expected);
        });

        it.each<[string]>([
          [INJECTION],
          ["' OR 1=1 --"],
          ['%'],
          ['_'],
          ['"; DROP TABLE eg_contract_kinds; --'],
          ['\\'],
        ])('injection-looking value %j matches only literally', async (value) => {
          const expected = FILTER_DATA.filter((r) => r['name'] === value).map((r) => r['id']);
          expect(await matching(where(cond('name', 'EQUALS', 'text', value)))).toEqual(expected);
          const containing = FILTER_DATA.filter(
            (r) => typeof r['name'] === 'string' && r['name'].includes(value),
          ).map((r) => r['id']);
          expect(await matching(where(cond('name', 'CONTAINS', 'text', value)))).toEqual(
            containing,
          );
          expect(await driver.count(KINDS, { filters: [] })).toBe(FILTER_DATA.length);
        });
      });

      it.each<[FilterOperator, number, string[]]>([
        ['EQUALS', 7, ['r06', 'r07']],
        ['NOT_EQUALS', 7, allBut('r06', 'r07')],
        ['GT', 7, ['r03', 'r08', 'r09', 'r12']],
        ['GT', 9, ['r03', 'r08', 'r09']],
        ['GTE', 7, ['r03', 'r06', 'r07', 'r08', 'r09', 'r12']],
        ['LT', 0, ['r04']],
        ['LTE', 0, ['r04', 'r05']],
        ['LT', -100, []],
      ])('integer %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('count', operator, 'integer', value)))).toEqual(expected);
      });

      it.each<[FilterOperator, number, string[]]>([
        ['EQUALS', 0, ['r04']],
        ['EQUALS', 1.5, ['r02']],
        ['NOT_EQUALS', 1.5, allBut('r02')],
        ['GT', 2.5, ['r05', 'r07', 'r09', 'r10']],
        ['GTE', 2.5, ['r05', 'r06', 'r07', 'r09', 'r10']],
        ['LT', 0, ['r03', 'r08']],
        ['LTE', 0, ['r03', 'r04', 'r08']],
        ['GT', -0.0015, ['r01', 'r02', 'r04', 'r05', 'r06', 'r07', 'r08', 'r09', 'r10']],
      ])('double %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('ratio', operator, 'double', value)))).toEqual(expected);
      });

      it.each<[FilterOperator, string, string[]]>([
        ['GT', '9.75', ['r02', 'r03', 'r06', 'r07', 'r10']],
        ['GTE', '9.75', ['r01', 'r02', 'r03', 'r06', 'r07', 'r10']],
        ['LT', '0', ['r04', 'r09', 'r12']],
        ['LTE', '0', ['r04', 'r05', 'r09', 'r12']],
        ['LT', '-3.2', ['r09', 'r12']],
        ['GT', BIG_788, ['r06']],
        ['GTE', BIG_788, ['r06', 'r07']],
        ['LT', BIG_789, ['r01', 'r02', 'r03', 'r04', 'r05', 'r07', 'r08', 'r09', 'r10', 'r12']],
        ['GT', '0.0001', ['r01', 'r02', 'r03', 'r06', 'r07', 'r08', 'r10']],
        ['EQUALS', '10.50', ['r02']],
        ['EQUALS', '100', ['r03']],
        ['EQUALS', BIG_789, ['r06']],
        ['NOT_EQUALS', '0', allBut('r05')],
      ])('decimal (numeric, exact) %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('price', operator, 'decimal', value)))).toEqual(expected);
      });

      it.each<[FilterOperator, boolean, string[]]>([
        ['EQUALS', true, ['r01', 'r03', 'r05', 'r08']],
        ['EQUALS', false, ['r02', 'r04', 'r07']],
        ['NOT_EQUALS', true, ['r02', 'r04', 'r06', 'r07', 'r09', 'r10', 'r11', 'r12']],
      ])('boolean %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('active', operator, 'boolean', value)))).toEqual(expected);
      });

      it.each<[FilterOperator, string, string[]]>([
        ['EQUALS', '2024-02-29', ['r02']],
        ['GT', '2024-02-29', ['r04', 'r06', 'r08']],
        ['GTE', '2024-02-29', ['r02', 'r04', 'r06', 'r08']],
        ['LT', '2024-01-15', ['r03', 'r05']],
        ['LTE', '2024-01-15', ['r01', 'r03', 'r05']],
        ['NOT_EQUALS', '2024-02-29', allBut('r02')],
      ])('date %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('day', operator, 'date', value)))).toEqual(expected);
      });

      it.each<[FilterOperator, string, string[]]>([
        ['EQUALS', '2024-02-29T23:30:00.123Z', ['r02']],
        ['GT', '2024-02-29T23:30:00.122Z', ['r02', 'r04', 'r07']],
        ['GTE', '2024-02-29T23:30:00.122Z', ['r02', 'r04', 'r05', 'r07']],
        ['LT', '2024-02-29T23:30:00.123Z', ['r01', 'r03', 'r05']],
        ['LTE', '2024-02-29T23:30:00.123Z', ['r01', 'r02', 'r03', 'r05']],
      ])('datetime %s %j', async (operator, value, expected) => {
        expect(await matching(where(cond('at', operator, 'datetime', value)))).toEqual(expected);
      });

      it.each<[readonly string[], FilterOperator, ColumnKind, KeyValue, string[]]>([
        [['meta', 'address', 'city'], 'EQUALS', 'text', 'Pisa', ['r01']],
        [['meta', 'address', 'city'], 'STARTS_WITH', 'text', 'Pisa', ['r01', 'r04']],
        [['meta', 'address', 'city'], 'CONTAINS', 'text', 'isa', ['r01', 'r03', 'r04']],
        [['meta', 'address', 'city'], 'ENDS_WITH', 'text', 'ale', ['r04']],
        [['meta', 'address', 'city'], 'NOT_EQUALS', 'text', 'Pisa', allBut('r01')],
        [['meta', 'address', 'city'], 'EQUALS', 'text', INJECTION, []],
        [['meta', 'address', 'zip'], 'EQUALS', 'text', '56100', ['r01']],
        [['meta', 'rank'], 'GT', 'integer', 2, ['r01', 'r02']],
        [['meta', 'rank'], 'LTE', 'integer', 2, ['r03', 'r04']],
        [['meta', 'rank'], 'EQUALS', 'integer', 10, ['r02']],
        [['meta', 'fee'], 'GT', 'decimal', '9.8', ['r01', 'r03']],
        [['meta', 'fee'], 'EQUALS', 'decimal', '10.50', ['r01']],
        [['meta', 'vip'], 'EQUALS', 'boolean', true, ['r01']],
        [['meta', 'vip'], 'EQUALS', 'boolean', false, ['r02']],
        [['meta', 'missing', 'deeper'], 'EQUALS', 'text', 'x', []],
      ])('JSON path %j %s %j', async (path, operator, kind, value, expected) => {
        expect(await matching(where(cond(path, operator, kind, value)))).toEqual(expected);
      });

      it.each<[string, FilterOperator, ColumnKind, KeyValue, string[]]>([
        ['tags', 'CONTAINS', 'text', 'red', ['r01', 'r04']],
        ['tags', 'EQUALS', 'text', 'green', ['r01', 'r02']],
        ['tags', 'CONTAINS', 'text', 'ed', []],
        ['tags', 'CONTAINS', 'text', '%', []],
        ['tags', 'CONTAINS', 'text', '50%', ['r04']],
        ['tags', 'CONTAINS', 'text', 'a_b', ['r05']],
        ['tags', 'CONTAINS', 'text', 'Zürich', ['r10']],
        ['tags', 'NOT_CONTAINS', 'text', 'red', allBut('r01', 'r04')],
        ['scores', 'CONTAINS', 'integer', 2, ['r01', 'r05']],
        ['scores', 'CONTAINS', 'integer', 20, ['r04']],
        ['scores', 'CONTAINS', 'integer', 5, []],
        ['scores', 'NOT_CONTAINS', 'integer', 2, allBut('r01', 'r05')],
        ['scores', 'GT', 'integer', 5, ['r04']],
      ])('array membership %s %s %j', async (field, operator, kind, value, expected) => {
        expect(await matching(where(cond(field, operator, kind, value, true)))).toEqual(expected);
      });

      it('conditions of a group are ORed', async () => {
        expect(
          await matching(
            where([cond('count', 'EQUALS', 'integer', 1), cond('count', 'EQUALS', 'integer', 10)]),
          ),
        ).toEqual(['r01', 'r03']);
        expect(
          await matching(
            where([cond('name', 'EQUALS', 'text', 'axb'), cond('price', 'GT', 'decimal', '100')]),
          ),
        ).toEqual(['r06', 'r07', 'r12']);
      });

      it('groups are ANDed', async () => {
        expect(
          await matching(
            where(cond('active', 'EQUALS', 'boolean', true), cond('count', 'GT', 'integer', 1)),
          ),
        ).toEqual(['r03', 'r08']);
        expect(
          await matching(
            where(
              [cond('count', 'EQUALS', 'integer', 1), cond('count', 'EQUALS', 'integer', 2)],
              cond('active', 'EQUALS', 'boolean', true),
            ),
          ),
        ).toEqual(['r01']);
        expect(
          await matching(
            where(
              [cond('count', 'EQUALS', 'integer', 1), cond('count', 'EQUALS', 'integer', 10)],
              [cond('active', 'EQUALS', 'boolean', true)],
              [
                cond(['meta', 'address', 'city'], 'CONTAINS', 'text', 'isa'),
                cond('tags', 'CONTAINS', 'text', 'x', true),
              ],
            ),
          ),
        ).toEqual(['r01', 'r03']);
      });

      it('count uses the filters', async () => {
        expect(await driver.count(KINDS, { filters: [] })).toBe(12);
        expect(
          await driver.count(KINDS, {
            filters: where(cond('active', 'EQUALS', 'boolean', true)),
          }),
        ).toBe(4);
        expect(
          await driver.count(KINDS, {
            filters: where(cond('tags', 'CONTAINS', 'text', 'red', true)),
          }),
        ).toBe(2);
        expect(
          await driver.count(KINDS, {
            filters: where(cond('name', 'CONTAINS', 'text', '%')),
          }),
        ).toBe(2);
        expect(
          await driver.count(KINDS, {
            filters: where(cond('price', 'GT', 'decimal', '9.75')),
          }),
        ).toBe(5);
        expect(await driver.count(INT_KEY, { filters: [] })).toBe(0);
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('list order and paging', () => {
      beforeEach(async () => {
        await driver.insert(KINDS, FILTER_DATA, 1000);
      });

      it('integer ascending: NULLs first, ties broken by the key', async () => {
        expect(await ordered({ orderBy: order('count') })).toEqual([
          'r11',
          'r04',
          'r05',
          'r01',
          'r02',
          'r10',
          'r06',
          'r07',
          'r12',
          'r03',
          'r09',
          'r08',
        ]);
      });

      it('integer descending: NULLs last, ties broken by the key descending', async () => {
        expect(await ordered({ orderBy: order('-count') })).toEqual([
          'r08',
          'r09',
          'r03',
          'r12',
          'r07',
          'r06',
          'r10',
          'r02',
          'r01',
          'r05',
          'r04',
          'r11',
        ]);
      });

      it('decimal orders numerically and exactly', async () => {
        expect(await ordered({ orderBy: order('price') })).toEqual([
          'r11',
          'r09',
          'r12',
          'r04',
          'r05',
          'r08',
          'r01',
          'r10',
          'r02',
          'r03',
          'r07',
          'r06',
        ]);
      });

      it('text orders by code point (binary, case-sensitive)', async () => {
        expect(await ordered({ orderBy: order('name') })).toEqual([
          'r11',
          'r09',
          'r04',
          'r03',
          'r02',
          'r10',
          'r05',
          'r01',
          'r12',
          'r06',
          'r07',
          'r08',
        ]);
      });

      it('double ascending with NULLs first', async () => {
        expect(await ordered({ orderBy: order('ratio') })).toEqual([
          'r11',
          'r12',
          'r03',
          'r08',
          'r04',
          'r01',
          'r02',
          'r06',
          'r07',
          'r09',
          'r10',
          'r05',
        ]);
      });

      it('datetime descending with NULLs last', async () => {
        expect(await ordered({ orderBy: order('-at') })).toEqual([
          'r07',
          'r04',
          'r02',
          'r05',
          'r01',
          'r03',
          'r12',
          'r11',
          'r10',
          'r09',
          'r08',
          'r06',
        ]);
      });

      it('date ascending', async () => {
        expect(await ordered({ orderBy: order('day') })).toEqual([
          'r07',
          'r09',
          'r10',
          'r11',
          'r12',
          'r03',
          'r05',
          'r01',
          'r02',
          'r04',
          'r06',
          'r08',
        ]);
      });

      it('boolean: false before true, NULLs first; ties by key', async () => {
        expect(await ordered({ orderBy: order('active') })).toEqual([
          'r06',
          'r09',
          'r10',
          'r11',
          'r12',
          'r02',
          'r04',
          'r07',
          'r01',
          'r03',
          'r05',
          'r08',
        ]);
        expect(await ordered({ orderBy: order('-active') })).toEqual([
          'r08',
          'r05',
          'r03',
          'r01',
          'r07',
          'r04',
          'r02',
          'r12',
          'r11',
          'r10',
          'r09',
          'r06',
        ]);
      });

      it('several keys with mixed directions', async () => {
        expect(await ordered({ orderBy: order('active', '-count') })).toEqual([
          'r09',
          'r12',
          'r06',
          'r10',
          'r11',
          'r07',
          'r02',
          'r04',
          'r08',
          'r03',
          'r01',
          'r05',
        ]);
      });

      it('ordering by the key itself', async () => {
        expect(await ordered({ orderBy: order('-id') })).toEqual([...ALL_IDS].reverse());
        expect(await ordered({ orderBy: order('id') })).toEqual(ALL_IDS);
      });

      it('offset and limit', async () => {
        expect(await ordered({ offset: 2, limit: 3 })).toEqual(['r03', 'r04', 'r05']);
        expect(await ordered({ offset: 10 })).toEqual(['r11', 'r12']);
        expect(await ordered({ limit: 2 })).toEqual(['r01', 'r02']);
        expect(await ordered({ offset: 12, limit: 5 })).toEqual([]);
        expect(await ordered({ limit: 100 })).toEqual(ALL_IDS);
        expect(
          await ordered({
            filters: where(cond('active', 'EQUALS', 'boolean', true)),
            orderBy: order('-count'),
            offset: 1,
            limit: 2,
          }),
        ).toEqual(['r03', 'r01']);
      });

      it('keyset after: ascending, descending, NULL cursor values, decimal', async () => {
        expect(await ordered({ orderBy: order('count'), after: [7, 'r06'] })).toEqual([
          'r07',
          'r12',
          'r03',
          'r09',
          'r08',
        ]);
        expect(await ordered({ orderBy: order('count'), after: [null, 'r11'] })).toEqual([
          'r04',
          'r05',
          'r01',
          'r02',
          'r10',
          'r06',
          'r07',
          'r12',
          'r03',
          'r09',
          'r08',
        ]);
        expect(await ordered({ orderBy: order('-count'), after: [7, 'r07'], limit: 4 })).toEqual([
          'r06',
          'r10',
          'r02',
          'r01',
        ]);
        expect(await ordered({ orderBy: order('-count'), after: [-5, 'r04'] })).toEqual(['r11']);
        expect(await ordered({ orderBy: order('-count'), after: [null, 'r11'] })).toEqual([]);
        expect(await ordered({ orderBy: order('price'), after: ['9.75', 'r01'] })).toEqual([
          'r10',
          'r02',
          'r03',
          'r07',
          'r06',
        ]);
        expect(
          await ordered({ orderBy: order('-active', 'name'), after: [false, 'Alpha', 'r02'] }),
        ).toEqual(['r07', 'r11', 'r09', 'r10', 'r12', 'r06']);
        expect(await ordered({ after: ['r10'] })).toEqual(['r11', 'r12']);
        expect(await ordered({ orderBy: order('-id'), after: ['r03', 'r03'] })).toEqual([
          'r02',
          'r01',
        ]);
        expect(await ordered({ orderBy: order('-id'), after: ['r03'] })).toEqual(['r02', 'r01']);
      });

      it('keyset after combines with filters', async () => {
        expect(
          await ordered({
            filters: where(cond('active', 'EQUALS', 'boolean', true)),
            orderBy: order('-count'),
            after: [10, 'r03'],
          }),
        ).toEqual(['r01', 'r05']);
      });
    });

    // --------------------------------------------------------------------------------------------
    describe('keyset paging walk', () => {
      const rows = options.pagingRows ?? 1000;
      const PAGE = 37;

      /** Deterministic pseudo-random numbers (mulberry32). */
      const random = (seed: number): (() => number) => {
        let a = seed >>> 0;
        return () => {
          a = (a + 0x6d2b79f5) >>> 0;
          let t = a;
          t = Math.imul(t ^ (t >>> 15), t | 1);
          t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
          return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
      };

      const makeRow = (id: number, next: () => number): StoredFields => {
        const row: Record<string, unknown> = { id, grp: Math.floor(next() * 7) };
        if (next() > 0.2) row['score'] = Math.floor(next() * 40) / 4;
        if (next() > 0.15) row['label'] = `L${Math.floor(next() * 30)}`;
        if (next() > 0.25) row['price'] = (Math.floor(next() * 400 - 200) / 4).toFixed(2);
        return row;
      };

      /** Reference order of the contract: NULLs first ascending; key tie-break in the last direction. */
      const comparator = (orderBy: readonly OrderTerm[]) => {
        const terms = [
          ...orderBy,
          ...PAGED.key
            .filter((k) => !orderBy.some((t) => t.column === k))
            .map((k) => ({ column: k, descending: orderBy.at(-1)?.descending ?? false })),
        ];
        return (a: StoredFields, b: StoredFields): number => {
          for (const term of terms) {
            const x = a[term.column] ?? null;
            const y = b[term.column] ?? null;
            let c = 0;
            if (x === null || y === null) c = x === y ? 0 : x === null ? -1 : 1;
            else if (term.column === 'price') c = Number(x) - Number(y);
            else if (typeof x === 'number' && typeof y === 'number') c = x - y;
            else c = String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
            if (c !== 0) return term.descending ? -c : c;
          }
          return 0;
        };
      };

      const afterOf = (
        orderBy: readonly OrderTerm[],
        record: StoredFields,
      ): (KeyValue | null)[] => [
        ...orderBy.map((t) => (record[t.column] ?? null) as KeyValue | null),
        ...PAGED.key.map((k) => record[k] as KeyValue),
      ];

      const ORDERS: [string, OrderTerm[]][] = [
        ['grp, -score, label (mixed, nullable)', order('grp', '-score', 'label')],
        ['-score (nullable descending)', order('-score')],
        ['grp (ties, required)', order('grp')],
        ['score, grp (ascending, nullable)', order('score', 'grp')],
        ['-grp, -label (descending, nullable)', order('-grp', '-label')],
        ['label, -price (text, decimal descending)', order('label', '-price')],
        ['price (decimal)', order('price')],
        ['key only', []],
        ['-id (key descending)', order('-id')],
      ];

      it.each(ORDERS)('pages of order %s concatenate to the full list', async (_label, orderBy) => {
        const next = random(7);
        await driver.insert(
          PAGED,
          Array.from({ length: Math.min(rows, 300) }, (_, i) => makeRow(i, next)),
          1,
        );
        const all = idsOf(await driver.list(PAGED, { filters: [], orderBy }));
        const seen: unknown[] = [];
        let after: (KeyValue | null)[] | undefined;
        for (;;) {
          const page = await driver.list(PAGED, {
            filters: [],
            orderBy,
            limit: PAGE,
            ...(after === undefined ? {} : { after }),
          });
          seen.push(...idsOf(page));
          if (page.length < PAGE) break;
          after = afterOf(orderBy, page.at(-1)!.record);
        }
        expect(seen).toEqual(all);
        const records = (await driver.list(PAGED, { filters: [], orderBy })).map((r) => r.record);
        const sorted = [...records].sort(comparator(orderBy));
        expect(idsOf(records.map((record) => ({ record }) as StoredRecord))).toEqual(
          idsOf(sorted.map((record) => ({ record }) as StoredRecord)),
        );
      });

      it.each(ORDERS)(
        `walk of ${rows} rows in order %s with inserts and deletes between pages`,
        async (_label, orderBy) => {
          const next = random(42);
          await driver.insert(
            PAGED,
            Array.from({ length: rows }, (_, i) => makeRow(i, next)),
            1,
          );
          const live = new Set<number>(Array.from({ length: rows }, (_, i) => i));
          const deleted = new Set<number>();
          let nextId = 1_000_000;
          const compare = comparator(orderBy);
          const seen = new Map<unknown, number>();
          let previous: StoredFields | undefined;
          let after: (KeyValue | null)[] | undefined;
          let pages = 0;
          for (;;) {
            const page = await driver.list(PAGED, {
              filters: [],
              orderBy,
              limit: PAGE,
              ...(after === undefined ? {} : { after }),
            });
            pages++;
            for (const { record } of page) {
              seen.set(record['id'], (seen.get(record['id']) ?? 0) + 1);
              if (previous !== undefined) expect(compare(previous, record)).toBeLessThan(0);
              previous = record;
            }
            if (page.length < PAGE) break;
            after = afterOf(orderBy, page.at(-1)!.record);
            // Meanwhile, others insert rows (sorting anywhere) and delete rows (seen or not).
            const inserted = [
              makeRow(nextId++, next),
              makeRow(nextId++, next),
              makeRow(nextId++, next),
            ];
            await driver.insert(PAGED, inserted, 2);
            for (const row of inserted) live.add(row['id'] as number);
            for (let d = 0; d < 3; d++) {
              const candidates = [...live];
              const victim = candidates[Math.floor(next() * candidates.length)]!;
              expect(await driver.delete(PAGED, [victim], undefined, 3)).toBeDefined();
              live.delete(victim);
              deleted.add(victim);
            }
            expect(pages).toBeLessThan(rows); // no endless loop
          }
          for (let id = 0; id < rows; id++) {
            if (!deleted.has(id)) expect(seen.get(id), `row ${id}`).toBe(1);
          }
          for (const [id, times] of seen) expect(times, `row ${String(id)}`).toBe(1);
        },
      );
    });
  });
}
