/**
 * `SqliteDriver`: the storage driver on better-sqlite3. The class ties the parts together:
 * connection.ts opens the database, setup.ts creates tables and runs migrations, statements.ts
 * prepares each table's statements, group-commit.ts commits writes, readers.ts runs lists and
 * counts in worker threads, outbox.ts keeps the change events, errors.ts maps SQLite errors.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import type {
  ChangeFeed,
  CountQuery,
  CountedList,
  DeletedRecord,
  DeleteOptions,
  EntityActivity,
  HistoryEntry,
  KeyValues,
  ListQuery,
  OpenOptions,
  RecordTexts,
  RecordUpdate,
  ReplacedRecord,
  ReplaceOptions,
  StorageDriver,
  StoredChange,
  StoredFields,
  StoredRecord,
  TableDescriptor,
  UpdateResult,
  WriteOptions,
} from '../driver.js';
import { ChangeListeners } from '../events/change.js';
import { historyEntities, historyId } from '../history.js';
import { StorageUnavailableError } from '../errors.js';
import { indexBoundsCount, indexBoundsList } from '../indexes.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { buildCountSql, buildListSql, type BuiltSql, LIST_COUNT_COLUMN } from '../sql/query.js';
import { Checkpointer, type CheckpointStats, WAL_BOUND_PAGES } from './checkpointer.js';
import { openConnection } from './connection.js';
import { sqliteDialect } from './dialect.js';
import { isPrimaryKeyViolation, mapError, uniqueViolation } from './errors.js';
import { WriteQueue, type Written } from './group-commit.js';
import { resolveSqliteOptions, type SqliteOptions, type SqliteSynchronous } from './options.js';
import { SqliteHistory } from './history.js';
import { SqliteOutbox } from './outbox.js';
import { ReadPool } from './readers.js';
import { SqliteReferences } from './references.js';
import { ReferenceGraph, ReferenceMissingError } from '../references.js';
import { checkDeletionTime } from '../soft-delete.js';
import { lastRecordStart, rowTexts, type RecordShape } from './record-text.js';
import { SECRETS_TABLE, TableLayout, sequenceName, type Projection } from './schema.js';
import { setUpDatabase } from './setup.js';
import {
  NOT_ALL_UPDATED,
  NOT_REPLACED,
  prepareShared,
  prepareTable,
  type PendingUpdate,
  REPLACED_CREATED,
  type ReplacedRows,
  type Row,
  type SharedStatements,
  type Statement,
  type TableState,
} from './statements.js';

/**
 * The most index entries (offset + limit, with the look-ahead row) a list served by a composite
 * index may read on the main connection; a longer one runs in a reader.
 */
export const INDEX_PAGE_ROWS = 1001;

/**
 * The most matches a count an index bounds may have found last time to run on the main connection
 * (index entries only, well under a millisecond); a count that found more runs in a reader.
 */
export const COUNT_MAIN_ROWS = 5000;
/** Size hints kept for counts (by statement and values, least recently used out). */
const COUNT_HINTS = 1000;

function countHintKey(sql: string, params: readonly unknown[]): string {
  let key = sql;
  for (const value of params)
    key += typeof value === 'string' ? `\0s${value}` : `\0${String(value)}`;
  return key;
}

/**
 * Whether a page written by SQLite failed on a BLOB in a text column (which `json_quote` refuses,
 * see `recordTextSql`): such a page is written record by record instead, as a read by key does.
 */
function refusesBlob(error: unknown): boolean {
  return error instanceof Error && error.message.includes('JSON cannot hold BLOB values');
}

/** SQLite's default `wal_autocheckpoint`, in pages. */
const SQLITE_AUTOCHECKPOINT = 1000;

/** Upper bound of the cache of list/count statements (keyed by SQL text, least recently used out). */
const QUERY_CACHE_SIZE = 200;

/** One row of `EXPLAIN QUERY PLAN`. */
export interface QueryPlanRow {
  readonly id: number;
  readonly parent: number;
  readonly detail: string;
}

/** What `SqliteDriver.diagnostics()` reports. */
export interface SqliteDiagnostics {
  readonly journalMode: string;
  readonly synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  readonly busyTimeoutMs: number;
  readonly cachedQueries: number;
  /** Write transactions this driver ran so far (a group commit counts once). */
  readonly writeCommits: number;
  /** SQLite's own checkpoint bound of the main connection, in WAL pages. */
  readonly walAutocheckpoint: number;
  /** What the background checkpointer did (file databases in WAL mode). */
  readonly checkpoints: CheckpointStats | undefined;
}

/**
 * The embedded storage driver, on better-sqlite3. One connection per driver; every call runs
 * synchronously on it (SQLite serialises writers anyway), wrapped in a promise.
 *
 * - The database runs in WAL mode (files only) with `synchronous=FULL` unless configured
 *   otherwise, and a busy timeout so writers of other processes wait instead of failing. Writes
 *   use `BEGIN IMMEDIATE`, so a waiting writer never deadlocks on a read-to-write upgrade.
 * - One `WITHOUT ROWID` table per entity, keyed by the entity's key; DECIMAL fields get a hidden
 *   sortable shadow column (`_eg_dec_<field>`) used for numeric comparison, ordering and
 *   indexing. `_eg_activity` holds the last write times and `_eg_events` the change events (outbox.ts),
 *   both written in the same transaction as the write.
 * - Busy, locked, I/O, full, corrupt and cannot-open errors become `StorageUnavailableError`; so
 *   does any call after `close()`. Other errors (bad descriptors, constraint violations other
 *   than duplicate keys) propagate unchanged.
 */
export class SqliteDriver implements StorageDriver {
  readonly dialect = 'sqlite';
  readonly filename: string;
  readonly synchronous: SqliteSynchronous;
  readonly busyTimeoutMs: number;
  /** Worker threads running list and count queries of a file database (0: the main thread). */
  readonly readers: number;
  /** Time budget of a list or count query in a reader, in milliseconds. */
  readonly queryTimeoutMs: number;
  /** Whether concurrent writes share a transaction (group commit, see `write`). */
  readonly groupCommit: boolean;
  /** Page cache (KiB) of each connection running list and count queries. */
  readonly cacheSizeKiB: number;

  /** The outbox of change events (SPEC §9). */
  readonly changes: ChangeFeed;

  private db: Database.Database | undefined;
  private pool: ReadPool | undefined;
  /** Runs the WAL's checkpoints off the request path (file databases in WAL mode). */
  private checkpointer: Checkpointer | undefined;
  private closed = false;
  /** Whether writes append change events (`OpenOptions.events`). */
  private events = true;
  private outbox: SqliteOutbox | undefined;
  private kept: SqliteHistory | undefined;
  private readonly listeners = new ChangeListeners();
  private readonly tables = new Map<string, TableState>();
  private readonly queryCache = new Map<string, Statement>();
  /** Whether a count statement's plan searches an index (by SQL text). */
  private readonly countPlans = new Map<string, boolean>();
  /** Whether a list statement's plan reads in the list's order, with no sort (by SQL text). */
  private readonly orderPlans = new Map<string, boolean>();
  /** What lists of `fields=` read (by table, fields and order; `TableLayout.projection`). */
  private readonly projections = new Map<string, Projection>();
  /**
   * The statements of the lists `listTextsNow` read, by query object, then by table, `fields` and
   * `counted`, with whether they run on the main connection. Emptied by `close`.
   */
  private textPlans = new WeakMap<ListQuery, Map<string, TextsPlan>>();
  /** The last result of each count an index bounds (by statement and values). */
  private readonly countHints = new Map<string, number>();
  /** What `count` and `countNow` work out once per query object and table (see `countStep`). */
  private countSteps = new WeakMap<CountQuery, Map<string, CountStep>>();
  /** The writes, committed alone or in groups (group-commit.ts). */
  private readonly writes: WriteQueue;
  private statements: SharedStatements | undefined;
  /** The transaction (`transaction`) whose asynchronous context a call runs in, if any. */
  private readonly scope = new AsyncLocalStorage<OpenTransaction>();
  /** Settles when the transaction now open ends; undefined when none is open. */
  private gate: Promise<void> | undefined;
  /** Settles when the last transaction begun so far has ended (they run one after another). */
  private lastTransaction: Promise<void> = Promise.resolve();

  constructor(options: SqliteOptions) {
    const resolved = resolveSqliteOptions(options);
    this.filename = resolved.filename;
    this.synchronous = resolved.synchronous;
    this.busyTimeoutMs = resolved.busyTimeoutMs;
    // An in-memory database exists only in its own connection: it is read on the main thread.
    this.readers = this.memory ? 0 : resolved.readers;
    this.queryTimeoutMs = resolved.queryTimeoutMs;
    this.groupCommit = resolved.groupCommit;
    this.cacheSizeKiB = resolved.cacheSizeKiB;
    this.writes = new WriteQueue(
      () => this.database(),
      (committed) => this.emit(committed),
      this.groupCommit,
    );
    const run = async <T>(fn: (outbox: SqliteOutbox) => T): Promise<T> => {
      await this.outside();
      try {
        return fn(this.openOutbox());
      } catch (error) {
        throw mapError(error);
      }
    };
    this.changes = {
      read: (after, limit) => run((outbox) => outbox.read(after, limit)),
      bounds: () => run((outbox) => outbox.bounds()),
      trim: (time) => run((outbox) => outbox.trim(time)),
      // Another process on the file is noticed by the reader's polling, not here.
      watch: (listener) => this.listeners.add(listener),
    };
  }

  /** True for an in-memory database. */
  get memory(): boolean {
    return this.filename === ':memory:';
  }

  async open(tables: readonly TableDescriptor[], options: OpenOptions = {}): Promise<void> {
    let applied: readonly string[] = [];
    try {
      const db = this.connect();
      const layouts = tables.map((t) => new TableLayout(t));
      this.events = options.events !== false;
      applied = setUpDatabase(db, layouts, options.migrations);
      if (this.statements === undefined) {
        this.statements = prepareShared(db);
        this.outbox = new SqliteOutbox(db);
      }
      this.kept = new SqliteHistory(db, historyEntities(tables));
      const shared = this.statements;
      const outbox = this.outbox!;
      const events = (): boolean => this.events;
      const graph = new ReferenceGraph(tables);
      const references = graph.empty
        ? undefined
        : new SqliteReferences(db, graph, (descriptor) => this.state(descriptor), shared);
      for (const layout of layouts) {
        const state = prepareTable(db, layout, shared, outbox, this.kept, events, () => references);
        this.tables.set(layout.descriptor.table, state);
      }
    } catch (error) {
      throw mapError(error);
    }
    if (applied.length > 0) options.onMigrationsApplied?.(applied);
  }

  async get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined> {
    if (this.gate !== undefined) await this.outside();
    return this.readNow(table, key);
  }

  async getMany(
    table: TableDescriptor,
    keys: readonly KeyValues[],
  ): Promise<(StoredRecord | undefined)[]> {
    if (this.gate !== undefined) await this.outside();
    const state = this.state(table);
    const many = state.getMany;
    if (many === undefined || keys.length < 2) return keys.map((key) => this.readNow(table, key));
    try {
      const params: unknown[] = [];
      for (const key of keys) state.layout.keyParams(key, params);
      // Found by the join exactly when the key column holds the very value (text compares by
      // bytes). JSON writes a lone surrogate as an escape (`\ud800`) that SQLite decodes to other
      // bytes than a bound string's: such keys are read one by one, as bound parameters.
      const text = JSON.stringify(params);
      if (params.some((value) => typeof value !== many.keyType) || text.includes('\\ud'))
        return keys.map((key) => this.readNow(table, key));
      const rows = new Map<unknown, Row>();
      for (const row of many.statement.all(text) as Row[]) rows.set(row[many.keyColumn], row);
      return params.map((value) => {
        const row = rows.get(value);
        return row === undefined ? undefined : toStored(state.layout, row);
      });
    } catch (error) {
      throw mapError(error);
    }
  }

  /**
   * Reads by key on the main connection, synchronously (no reader thread: it is one lookup).
   * While a transaction is open it throws: the main connection would see its uncommitted writes
   * (the fast path then hands the request to `get`, which waits for the commit).
   */
  readonly getNow = (table: TableDescriptor, key: KeyValues): StoredRecord | undefined => {
    if (this.gate !== undefined && this.scope.getStore() === undefined)
      throw new Error('SQLite driver: a transaction is open');
    return this.readNow(table, key);
  };

  private readNow(table: TableDescriptor, key: KeyValues): StoredRecord | undefined {
    try {
      const state = this.state(table);
      const params: unknown[] = [];
      state.layout.keyParams(key, params);
      const row = state.get.get(params) as Row | undefined;
      return row === undefined ? undefined : toStored(state.layout, row);
    } catch (error) {
      throw mapError(error);
    }
  }

  /**
   * Runs `work` in one IMMEDIATE transaction on the main connection. Transactions run one after
   * another; while one is open, the other calls of this driver that use the main connection wait
   * for its end (they would see its uncommitted writes), and the calls made in `work`'s context
   * run inside it, each write in a savepoint of its own. Readers in worker threads see only
   * committed data and keep running. The change events are announced after the commit.
   */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.scope.getStore() !== undefined) return await work();
    const before = this.lastTransaction;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.lastTransaction = before.then(() => ended);
    await before;
    const open: OpenTransaction = { changes: [] };
    try {
      await this.outside();
      const db = this.database();
      // Writes already queued commit first, on their own.
      if (this.writes.pending) this.writes.flush();
      this.gate = ended;
      db.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await this.scope.run(open, work);
        db.exec('COMMIT');
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
      this.writes.commits++;
      this.emit(open.changes);
      return result;
    } catch (error) {
      throw mapError(error);
    } finally {
      if (this.gate === ended) this.gate = undefined;
      end();
    }
  }

  /** Waits until no transaction is open, unless the caller runs inside the open one. */
  private async outside(): Promise<void> {
    while (this.gate !== undefined && this.scope.getStore() === undefined) await this.gate;
  }

  /**
   * Runs a write: inside the open transaction when the caller runs in it (`grouped`: in a
   * savepoint), else through the write queue (group commit) once no transaction is open.
   */
  private async write<T>(work: (grouped: boolean) => Written<T>): Promise<T> {
    if (this.gate === undefined) return await this.writes.write(work);
    const open = this.scope.getStore();
    if (open === undefined) {
      await this.outside();
      return await this.writes.write(work);
    }
    try {
      const { result, changes } = work(true);
      for (const change of changes) open.changes.push(change);
      return result;
    } catch (error) {
      throw mapError(error);
    }
  }

  async insert(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
    options: WriteOptions = {},
  ): Promise<void> {
    const state = this.state(table);
    if (records.length === 0) return;
    checkTime(now);
    const by = options.by ?? null;
    await this.write((grouped) => {
      const changes = (grouped ? state.insertMany : state.insertMany.immediate)(records, now, by);
      return { result: undefined, changes };
    });
  }

  async nextSequence(table: TableDescriptor, count: number): Promise<number[]> {
    const state = this.state(table);
    const take = state.takeSequence;
    if (take === undefined) throw new Error(`Table ${table.table} has no sequence`);
    if (count <= 0) return [];
    const name = sequenceName(table);
    const last = await this.write(() => ({
      result: Number(take.get(count, name)),
      changes: [],
    }));
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  }

  async update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
    options: WriteOptions = {},
  ): Promise<UpdateResult> {
    let params: unknown[];
    let keyParams: unknown[];
    const state = this.state(table);
    try {
      keyParams = [];
      state.layout.keyParams(key, keyParams);
      params = [];
      state.layout.writeParams(record, params);
      params.push(checkTime(now), ...keyParams, expectedVersion);
    } catch (error) {
      throw mapError(error);
    }
    const change: PendingUpdate = { key, record, keyParams, by: options.by ?? null };
    return this.write((grouped): Written<UpdateResult> => {
      let written: Written<number>;
      try {
        written = (grouped ? state.updateOne : state.updateOne.immediate)(params, now, change);
      } catch (error) {
        if (isPrimaryKeyViolation(error)) return { result: { status: 'duplicate' }, changes: [] };
        throw uniqueViolation(error, table, undefined) ?? error;
      }
      return {
        result:
          written.result === 0
            ? { status: 'conflict' }
            : { status: 'updated', version: expectedVersion + 1 },
        changes: written.changes,
      };
    });
  }

  async updateMany(
    table: TableDescriptor,
    updates: readonly RecordUpdate[],
    now: number,
    options: WriteOptions = {},
  ): Promise<number[] | undefined> {
    const state = this.state(table);
    if (updates.length === 0) return [];
    const params: unknown[][] = [];
    const changes: PendingUpdate[] = [];
    const changed: (number[] | undefined)[] = [];
    try {
      checkTime(now);
      const by = options.by ?? null;
      const width = state.layout.writeColumns.length;
      for (const { key, record, expectedVersion, previous } of updates) {
        const keyParams = new Array<unknown>(key.length);
        state.layout.keyParams(key, keyParams, 0);
        // The write columns, the time, the key, the expected version: sized once.
        const one = new Array<unknown>(width + keyParams.length + 2);
        let p = state.layout.writeParams(record, one);
        one[p++] = now;
        for (let k = 0; k < keyParams.length; k++) one[p++] = keyParams[k];
        one[p] = expectedVersion;
        params.push(one);
        changes.push({ key, record, keyParams, by });
        if (previous === undefined) {
          changed.push(undefined);
          continue;
        }
        // The columns whose value differs from the row as stored at the expected version.
        changed.push(state.layout.differingColumns(previous, one));
      }
    } catch (error) {
      throw mapError(error);
    }
    return this.write((grouped): Written<number[] | undefined> => {
      try {
        return (grouped ? state.updateMany : state.updateMany.immediate)(
          params,
          now,
          changes,
          changed,
        );
      } catch (error) {
        // Rolled back: the caller updates the records one by one to learn which failed, and why.
        if (
          error === NOT_ALL_UPDATED ||
          error instanceof ReferenceMissingError ||
          isPrimaryKeyViolation(error) ||
          uniqueViolation(error, table, undefined) !== undefined
        )
          return { result: undefined, changes: [] };
        throw error;
      }
    });
  }

  /**
   * The upsert of a list in replace mode in one write (see `StorageDriver.replaceMany`): per
   * record, its live row is read by key in the write's transaction, then the record is inserted,
   * or the columns that differ are written (the stamped ones with them), or nothing is. No list of
   * stored records is read first, and no statement is prepared per request. Resolves to
   * `undefined`, having written nothing, when a record breaks a unique rule or names a missing
   * record, and for tables that keep a history or soft-delete (their writes are the general
   * path's).
   */
  async replaceMany(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
    options: ReplaceOptions = {},
  ): Promise<ReplacedRecord[] | undefined> {
    if (table.softDelete === true || this.openHistory().entities.has(table.entity))
      return undefined;
    const state = this.state(table);
    checkTime(now);
    if (records.length === 0) return [];
    const { layout } = state;
    // Keys must be distinct: a key given twice is declined (the caller reads it as an error).
    const keys = new Set<unknown>();
    const names = table.key;
    for (const record of records)
      keys.add(
        names.length === 1 ? record[names[0]!] : JSON.stringify(names.map((k) => record[k])),
      );
    if (keys.size !== records.length) return undefined;
    const columnsOf = (names: readonly string[] | undefined): number[] =>
      (names ?? []).flatMap((name) => {
        const index = layout.columns.findIndex((column) => column.name === name);
        return index < 0 || layout.keyIndexes.includes(index) ? [] : [index];
      });
    const plan = {
      keep: columnsOf(options.keep),
      stamped: columnsOf(options.stamped),
      by: options.by ?? null,
    };
    const done = await this.write((grouped): Written<ReplacedRows | undefined> => {
      try {
        return (grouped ? state.replaceMany : state.replaceMany.immediate)(records, now, plan);
      } catch (error) {
        // Rolled back: the caller upserts the records one by one to learn which failed, and why.
        if (error === NOT_REPLACED || error instanceof ReferenceMissingError)
          return { result: undefined, changes: [] };
        throw error;
      }
    });
    if (done === undefined) return undefined;
    const replaced = new Array<ReplacedRecord>(records.length);
    for (let i = 0; i < records.length; i++) {
      const fate = done.fates[i];
      const row = done.unchanged.get(i);
      replaced[i] =
        row !== undefined
          ? { fate: 'unchanged', ...toStored(layout, row) }
          : {
              fate: fate === REPLACED_CREATED ? 'created' : 'updated',
              record: done.stored.get(i) ?? records[i]!,
              version: done.versions[i]!,
              createdAt: done.createdAt[i]!,
              updatedAt: now,
            };
    }
    return replaced;
  }

  async delete(
    table: TableDescriptor,
    key: KeyValues,
    expectedVersion: number | undefined,
    now: number,
    options: DeleteOptions = {},
  ): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    const soft = table.softDelete === true && options.mode !== 'purge';
    const by = options.by ?? null;
    const how = {
      op: table.softDelete === true && options.mode === 'purge' ? 'purged' : 'deleted',
      soft,
      by,
    } as const;
    const params: unknown[] = [];
    let statement = soft ? state.delete : state.purge;
    try {
      if (soft) params.push(checkDeletionTime(now), by, now);
      state.layout.keyParams(key, params);
      if (expectedVersion !== undefined) {
        params.push(expectedVersion);
        statement = soft ? state.deleteVersion : state.purgeVersion;
      }
      checkTime(now);
    } catch (error) {
      throw mapError(error);
    }
    const row = await this.write((grouped) =>
      (grouped ? state.deleteOne : state.deleteOne.immediate)(statement, params, now, how),
    );
    return row === undefined ? undefined : toStored(state.layout, row);
  }

  async history(
    table: TableDescriptor,
    key: KeyValues,
    limit: number,
    before?: number,
  ): Promise<HistoryEntry[]> {
    try {
      return this.openHistory().read(table.entity, historyId(table, key), limit, before);
    } catch (error) {
      throw mapError(error);
    }
  }

  async versionAt(
    table: TableDescriptor,
    key: KeyValues,
    time: number,
  ): Promise<HistoryEntry | undefined> {
    try {
      return this.openHistory().versionAt(table.entity, historyId(table, key), time);
    } catch (error) {
      throw mapError(error);
    }
  }

  async trimHistory(time: number): Promise<number> {
    try {
      return this.openHistory().trim(time);
    } catch (error) {
      throw mapError(error);
    }
  }

  async getDeleted(table: TableDescriptor, key: KeyValues): Promise<DeletedRecord | undefined> {
    if (this.gate !== undefined) await this.outside();
    try {
      const state = this.state(table);
      if (state.getDeleted === undefined) return undefined;
      const params: unknown[] = [];
      state.layout.keyParams(key, params);
      const row = state.getDeleted.get(params) as Row | undefined;
      if (row === undefined) return undefined;
      const n = state.layout.columns.length;
      return {
        ...toStored(state.layout, row),
        deletedAt: row[n + 3] as number,
        deletedBy: row[n + 4] as string | null,
      };
    } catch (error) {
      throw mapError(error);
    }
  }

  async restore(
    table: TableDescriptor,
    key: KeyValues,
    now: number,
    options: WriteOptions = {},
  ): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    if (state.restore === undefined) return undefined;
    const params: unknown[] = [];
    try {
      params.push(checkTime(now));
      state.layout.keyParams(key, params);
    } catch (error) {
      throw mapError(error);
    }
    const row = await this.write((grouped) =>
      (grouped ? state.restoreOne : state.restoreOne.immediate)(params, now, options.by ?? null),
    );
    return row === undefined ? undefined : toStored(state.layout, row);
  }

  async list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]> {
    try {
      const state = this.state(table);
      const built = this.listSql(table, query);
      const { sql, params } = built;
      const pool = await this.readsOn(this.listPool(table, query, built));
      const rows = (
        pool === undefined
          ? this.cached(sql, true).all(params)
          : await pool.run(sql, params as unknown[], 'rows')
      ) as Row[];
      return rows.map((row) => toStored(state.layout, row));
    } catch (error) {
      throw mapError(error);
    }
  }

  async listTexts(
    table: TableDescriptor,
    query: ListQuery,
    keep: number,
    fields?: readonly string[],
    counted = false,
  ): Promise<RecordTexts> {
    try {
      const state = this.state(table);
      let plan = this.textsSql(state, table, query, fields, counted, keep);
      const { joinedSql } = plan;
      const { params } = plan.built;
      const pool = await this.readsOn(this.listPool(table, query, plan.built));
      if (joinedSql !== undefined) {
        try {
          const row =
            pool === undefined
              ? (this.cached(joinedSql, true).get(params) as Row)
              : ((await pool.run(joinedSql, params as unknown[], 'rows')) as Row[])[0]!;
          const page = joinedPage(row, keep, counted, state.layout.nestedText);
          if (!counted || page.count !== undefined) return page;
          return { ...page, count: await this.count(table, query) };
        } catch (error) {
          // A BLOB in a text column: this page's records are written one by one, as below.
          if (!refusesBlob(error)) throw error;
          plan = this.textsSql(state, table, query, fields, counted, keep, false);
        }
      }
      const { built, shape, widen } = plan;
      const { texts, row, count } =
        pool === undefined
          ? rowTexts(shape, this.cached(built.sql, true).all(built.params) as Row[], keep)
          : await pool.texts(built.sql, built.params as unknown[], shape, keep);
      const kept = row === undefined ? undefined : { record: state.layout.decode(widen(row)) };
      if (!counted) return { texts, kept };
      // An empty page (past the end) carries no count: counted on its own.
      return { texts, kept, count: count ?? (await this.count(table, query)) };
    } catch (error) {
      throw mapError(error);
    }
  }

  /**
   * `listTexts` on the main connection, synchronously, for a list it would run there (see
   * `listPool`); `undefined` for a list it would hand to a reader. While a transaction is open it
   * throws, like `getNow`.
   */
  readonly listTextsNow = (
    table: TableDescriptor,
    query: ListQuery,
    keep: number,
    fields?: readonly string[],
    counted = false,
  ): RecordTexts | undefined => {
    if (this.gate !== undefined && this.scope.getStore() === undefined)
      throw new Error('SQLite driver: a transaction is open');
    try {
      const state = this.state(table);
      // The fast path of list pages asks again with the same query object for the same query
      // string: its statement and where it runs are worked out once (`textPlans`).
      const variant = `${table.table}\0${counted ? 'c' : ''}${keep}\0${fields?.join('\0') ?? ''}`;
      let plans = this.textPlans.get(query);
      let plan = plans?.get(variant);
      if (plan === undefined) {
        const made = this.textsSql(state, table, query, fields, counted, keep);
        plan = { ...made, onMain: this.listPool(table, query, made.built) === undefined };
        if (plans === undefined) {
          plans = new Map();
          this.textPlans.set(query, plans);
        }
        plans.set(variant, plan);
      }
      if (this.scope.getStore() === undefined && !plan.onMain) return undefined;
      const { joinedSql } = plan;
      let page: RecordTexts | undefined;
      if (joinedSql !== undefined) {
        try {
          page = joinedPage(
            this.cached(joinedSql, true).get(plan.built.params) as Row,
            keep,
            counted,
            state.layout.nestedText,
          );
        } catch (error) {
          // A BLOB in a text column: this page's records are written one by one, as below.
          if (!refusesBlob(error)) throw error;
        }
      }
      if (page === undefined) {
        const { built, shape, widen } =
          joinedSql === undefined
            ? plan
            : this.textsSql(state, table, query, fields, counted, keep, false);
        const { sql, params } = built;
        const { texts, row, count } = rowTexts(
          shape,
          this.cached(sql, true).all(params) as Row[],
          keep,
        );
        const kept = row === undefined ? undefined : { record: state.layout.decode(widen(row)) };
        page = { texts, kept, ...(count === undefined ? {} : { count }) };
      }
      if (!counted || page.count !== undefined) return page;
      // An empty page (past the end) carries no count: counted here, as the page was.
      const counting = buildCountSql(sqliteDialect, table, query);
      return {
        ...page,
        count: Number(this.cached(counting.sql, false).pluck().get(counting.params)),
      };
    } catch (error) {
      throw mapError(error);
    }
  };

  /**
   * The statement of `listTexts`, the shape of its rows and how to widen one to a full row. With
   * `fields=`, only the selected columns and those of the cursor (order, then key) are read
   * (`TableLayout.projection`, kept per table, fields and order). A page of every field with its
   * look-ahead record (`keep + 2` records) is written whole by SQLite instead (`joinedSql`, over
   * the list statement `built`: one string for the page, `joinedPage`), which spares
   * better-sqlite3 a JavaScript value per field and record.
   */
  private textsSql(
    state: TableState,
    table: TableDescriptor,
    query: ListQuery,
    fields: readonly string[] | undefined,
    counted: boolean,
    keep: number,
    joined = true,
  ): { built: BuiltSql; shape: RecordShape; widen: (row: Row) => Row; joinedSql?: string } {
    if (joined && fields === undefined && keep >= 0 && query.limit === keep + 2) {
      const text = quoteIdentifier(PAGE_TEXT_COLUMN);
      const built = buildListSql(
        sqliteDialect,
        table,
        query,
        `${state.layout.textSql()} AS ${text}`,
        counted,
      );
      const count = counted ? `, max(${quoteIdentifier(LIST_COUNT_COLUMN)})` : '';
      return {
        built,
        shape: state.layout.shape,
        widen: (row) => row,
        joinedSql: `SELECT group_concat(${text}, ','), count(*)${count} FROM (${built.sql})`,
      };
    }
    let select: string;
    let shape: RecordShape;
    let widen: (row: Row) => Row;
    if (fields === undefined) {
      select = state.layout.textSelectList();
      shape = state.layout.shape;
      widen = (row) => row;
    } else {
      const projection = this.projectionOf(state, table, query, fields);
      select = projection.select;
      shape = projection.shape;
      widen = projection.widen as (row: Row) => Row;
    }
    // Counted, every row ends with the count (`buildListSql`'s `counted`).
    return {
      built: buildListSql(sqliteDialect, table, query, select, counted),
      shape: counted ? { ...shape, counted: true } : shape,
      widen,
    };
  }

  /** What a list of `fields=` reads (`TableLayout.projection`), kept per table, fields and order. */
  private projectionOf(
    state: TableState,
    table: TableDescriptor,
    query: ListQuery,
    fields: readonly string[],
  ): Projection {
    const needed = [...fields, ...query.orderBy.map((term) => term.column), ...table.key];
    const cacheKey = `${table.table}\0${fields.join('\0')}\u0001${needed.join('\0')}`;
    let projection = this.projections.get(cacheKey);
    if (projection === undefined) {
      projection = state.layout.projection(new Set(needed), new Set(fields));
      if (this.projections.size >= QUERY_CACHE_SIZE) this.projections.clear();
      this.projections.set(cacheKey, projection);
    }
    return projection;
  }

  async listCounted(table: TableDescriptor, query: ListQuery): Promise<CountedList> {
    try {
      const state = this.state(table);
      const { sql, params } = buildListSql(
        sqliteDialect,
        table,
        query,
        state.layout.selectList(),
        true,
      );
      const pool = this.listPool(table, query);
      const rows = (
        pool === undefined
          ? this.cached(sql, true).all(params)
          : await pool.run(sql, params as unknown[], 'rows')
      ) as Row[];
      const first = rows[0];
      // The count is the page's last column; an empty page (past the end) counts on its own.
      const count =
        first === undefined ? await this.count(table, query) : Number(first[first.length - 1]);
      return { rows: rows.map((row) => toStored(state.layout, row)), count };
    } catch (error) {
      throw mapError(error);
    }
  }

  async count(table: TableDescriptor, query: CountQuery): Promise<number> {
    try {
      this.state(table);
      const { sql, params, hintKey, bounded } = this.countStep(table, query);
      const pool = await this.readsOn(this.readPool());
      if (pool === undefined) return Number(this.cached(sql, false).pluck().get(params));
      // A count an index bounds runs on the main connection when the last count of the same
      // statement and values found at most COUNT_MAIN_ROWS (it then reads about that many index
      // entries, unless the data grew since: the hint is refreshed by every count). The main
      // connection is used only once no transaction is open (it would see uncommitted writes).
      if (!bounded) return Number(await pool.run(sql, params as unknown[], 'value'));
      const hint = this.countHints.get(hintKey);
      const onMain = hint !== undefined && hint <= COUNT_MAIN_ROWS;
      if (onMain) await this.outside();
      const value = Number(
        onMain
          ? this.cached(sql, false).pluck().get(params)
          : await pool.run(sql, params as unknown[], 'value'),
      );
      this.noteCount(hintKey, value);
      return value;
    } catch (error) {
      throw mapError(error);
    }
  }

  /**
   * `count` on the main connection, synchronously, for a count it would run there (no readers,
   * or an index-bounded count whose last run found at most COUNT_MAIN_ROWS); `undefined` for a
   * count it would hand to a reader. While a transaction is open it throws, like `getNow`.
   */
  readonly countNow = (table: TableDescriptor, query: CountQuery): number | undefined => {
    const inside = this.scope.getStore() !== undefined;
    if (this.gate !== undefined && !inside) throw new Error('SQLite driver: a transaction is open');
    try {
      this.state(table);
      const step = this.countStep(table, query);
      const { sql, params, hintKey } = step;
      const pool = inside ? undefined : this.readPool();
      if (pool === undefined) return Number(this.cached(sql, false).pluck().get(params));
      if (!step.bounded) return undefined;
      const hint = this.countHints.get(hintKey);
      if (hint === undefined || hint > COUNT_MAIN_ROWS) return undefined;
      const value = Number(this.cached(sql, false).pluck().get(params));
      this.noteCount(hintKey, value);
      return value;
    } catch (error) {
      throw mapError(error);
    }
  };

  /**
   * A count's statement, hint key and plan verdict. The fast path asks again with the same query
   * object for the same query string: they are worked out once per query object and table.
   */
  private countStep(table: TableDescriptor, query: CountQuery): CountStep {
    let steps = this.countSteps.get(query);
    const kept = steps?.get(table.table);
    if (kept !== undefined) return kept;
    const { sql, params } = buildCountSql(sqliteDialect, table, query);
    const step: CountStep = {
      sql,
      params,
      hintKey: countHintKey(sql, params),
      bounded: indexBoundsCount(table, query) && this.countSearchesIndex(sql, params),
    };
    if (steps === undefined) {
      steps = new Map();
      this.countSteps.set(query, steps);
    }
    steps.set(table.table, step);
    return step;
  }

  /** Keeps the size a count found, the hint of where its next run goes (see `count`). */
  private noteCount(hintKey: string, value: number): void {
    this.countHints.delete(hintKey);
    if (this.countHints.size >= COUNT_HINTS) {
      const oldest = this.countHints.keys().next();
      if (oldest.done !== true) this.countHints.delete(oldest.value);
    }
    this.countHints.set(hintKey, value);
  }

  async activity(): Promise<Readonly<Record<string, EntityActivity>>> {
    await this.outside();
    try {
      const rows = this.shared().activity.all() as [
        string,
        number | null,
        number | null,
        number | null,
      ][];
      const result: Record<string, EntityActivity> = {};
      for (const [entity, lastCreate, lastUpdate, lastDelete] of rows) {
        const activity: { lastCreate?: number; lastUpdate?: number; lastDelete?: number } = {};
        if (lastCreate !== null) activity.lastCreate = lastCreate;
        if (lastUpdate !== null) activity.lastUpdate = lastUpdate;
        if (lastDelete !== null) activity.lastDelete = lastDelete;
        Object.defineProperty(result, entity, {
          value: activity,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return result;
    } catch (error) {
      throw mapError(error);
    }
  }

  async secret(name: string, create: () => string): Promise<string> {
    await this.outside();
    try {
      const db = this.connect();
      const table = quoteIdentifier(SECRETS_TABLE);
      db.prepare(`INSERT OR IGNORE INTO ${table} (name, value) VALUES (?, ?)`).run(name, create());
      const row = db.prepare(`SELECT value FROM ${table} WHERE name = ?`).get(name) as
        | { value: string }
        | undefined;
      if (row === undefined) throw new Error(`secret ${name} was not stored`);
      return row.value;
    } catch (error) {
      throw mapError(error);
    }
  }

  async ping(): Promise<void> {
    try {
      if (this.db === undefined || this.closed) {
        throw new StorageUnavailableError(
          this.closed ? 'the SQLite driver is closed' : 'the SQLite driver is not open',
        );
      }
      this.shared().ping.get();
    } catch (error) {
      throw mapError(error);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Writes already queued are committed first: each was accepted before the close.
    if (this.writes.pending) this.writes.flush();
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
    // Its connection closes first: the last connection to close checkpoints the whole WAL.
    await this.checkpointer?.close();
    this.checkpointer = undefined;
    const db = this.db;
    this.db = undefined;
    this.tables.clear();
    this.queryCache.clear();
    this.countPlans.clear();
    this.orderPlans.clear();
    this.projections.clear();
    this.textPlans = new WeakMap();
    this.countSteps = new WeakMap();
    this.countHints.clear();
    this.statements = undefined;
    this.outbox = undefined;
    this.writes.reset();
    if (db?.open === true) db.close();
  }

  /**
   * Where a list runs: in a reader, unless a composite index serves it and bounds what it reads
   * (`indexBoundsList`): such a page takes about as long as its rows, so the main connection
   * answers it without a trip to a worker thread and back. Every other list — scans, sorts, deep
   * offsets, whatever may run long — stays in the readers, off the event loop.
   */
  private listPool(
    table: TableDescriptor,
    query: ListQuery,
    statement?: BuiltSql,
  ): ReadPool | undefined {
    if (indexBoundsList(table, query, INDEX_PAGE_ROWS)) return undefined;
    // The primary key and single-field indexes hold the key after their field (WITHOUT ROWID)
    // and serve such pages too, when SQLite's plan reads along one of them without a sort step.
    if (
      statement !== undefined &&
      indexBoundsList(table, query, INDEX_PAGE_ROWS, { keyOrdered: true }) &&
      this.readsInOrder(statement, query.filters.length > 0)
    )
      return undefined;
    return this.readPool();
  }

  /**
   * Whether SQLite's plan of a list statement reads its rows in the list's order from the table
   * or an index, with no sort step (no temporary B-tree) and, when `filtered`, searching the
   * index for the filter's value, checked once per SQL text (the values do not change the plan).
   */
  private readsInOrder(statement: BuiltSql, filtered: boolean): boolean {
    // A filtered list must search the index (a scan would test every row against the filter).
    return this.judgedPlan(
      this.orderPlans,
      statement,
      (details) =>
        details.length === 1 &&
        (filtered ? /^SEARCH / : /^(SCAN|SEARCH) /).test(details[0]!) &&
        !details[0]!.includes('TEMP B-TREE'),
    );
  }

  /**
   * Whether SQLite's plan for a count statement searches an index for every condition (so it
   * reads only the matching index entries), checked once per SQL text.
   */
  private countSearchesIndex(sql: string, params: readonly unknown[]): boolean {
    return this.judgedPlan(
      this.countPlans,
      { sql, params: params as unknown[] },
      (details) =>
        details.length > 0 &&
        details.every(
          (detail) => detail.startsWith('SEARCH ') && / USING .*(INDEX|PRIMARY KEY)/.test(detail),
        ),
    );
  }

  /** `judge`'s verdict on SQLite's plan of a statement (its details), kept by SQL text in `cache`. */
  private judgedPlan(
    cache: Map<string, boolean>,
    { sql, params }: BuiltSql,
    judge: (details: readonly string[]) => boolean,
  ): boolean {
    let verdict = cache.get(sql);
    if (verdict === undefined) {
      const plan = this.database()
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(params as unknown[]) as { detail: string }[];
      verdict = judge(plan.map(({ detail }) => detail));
      if (cache.size >= QUERY_CACHE_SIZE) cache.clear();
      cache.set(sql, verdict);
    }
    return verdict;
  }

  /**
   * Where a read of `pool`'s kind runs and when: inside the open transaction on the main
   * connection (only it sees the transaction's writes); else in `pool` at once, or on the main
   * connection once no transaction is open.
   */
  private async readsOn(pool: ReadPool | undefined): Promise<ReadPool | undefined> {
    if (this.scope.getStore() !== undefined) return undefined;
    if (pool === undefined) await this.outside();
    return pool;
  }

  /** The readers of a file database, started on first use after `open`. */
  private readPool(): ReadPool | undefined {
    if (this.readers === 0 || this.db === undefined) return undefined;
    this.pool ??= new ReadPool(
      resolve(this.filename),
      this.busyTimeoutMs,
      this.readers,
      this.queryTimeoutMs,
      this.cacheSizeKiB,
    );
    return this.pool;
  }

  /**
   * Diagnostic API (tests, benchmarks, support): the SQL text and bound parameters `list()`
   * runs for `query`. Not part of the `StorageDriver` contract; may change without notice.
   */
  listSql(table: TableDescriptor, query: ListQuery): BuiltSql {
    const state = this.state(table);
    return buildListSql(sqliteDialect, table, query, state.layout.selectList());
  }

  /**
   * Diagnostic API: `EXPLAIN QUERY PLAN` of the statement `list()` runs for `query`, with its SQL
   * and parameters. Not part of the `StorageDriver` contract; may change without notice.
   */
  explainList(
    table: TableDescriptor,
    query: ListQuery,
  ): { sql: string; params: unknown[]; plan: QueryPlanRow[] } {
    const { sql, params } = this.listSql(table, query);
    const plan = this.database().prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as {
      id: number;
      parent: number;
      detail: string;
    }[];
    return { sql, params, plan: plan.map(({ id, parent, detail }) => ({ id, parent, detail })) };
  }

  /**
   * Diagnostic API: the settings in force on the connection (read back from SQLite) and the
   * number of cached list/count statements. Not part of the `StorageDriver` contract.
   */
  diagnostics(): SqliteDiagnostics {
    const db = this.database();
    const synchronous = Number(db.pragma('synchronous', { simple: true }));
    return {
      journalMode: String(db.pragma('journal_mode', { simple: true })),
      synchronous: (['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const)[synchronous] ?? 'OFF',
      busyTimeoutMs: Number(db.pragma('busy_timeout', { simple: true })),
      cachedQueries: this.queryCache.size,
      writeCommits: this.writes.commits,
      walAutocheckpoint: Number(db.pragma('wal_autocheckpoint', { simple: true })),
      checkpoints: this.checkpointer?.done,
    };
  }

  // ---------------------------------------------------------------------------------------------

  private connect(): Database.Database {
    if (this.closed) throw new StorageUnavailableError('the SQLite driver is closed');
    if (this.db !== undefined) return this.db;
    const db = openConnection(this.filename, {
      synchronous: this.synchronous,
      busyTimeoutMs: this.busyTimeoutMs,
      cacheSizeKiB: this.cacheSizeKiB,
    });
    this.db = db;
    // Checkpoints in a worker (checkpointer.ts); the connection's own ones only past a bound.
    if (!this.memory && db.pragma('journal_mode', { simple: true }) === 'wal') {
      db.pragma(`wal_autocheckpoint = ${WAL_BOUND_PAGES}`);
      this.checkpointer = new Checkpointer(resolve(this.filename), this.busyTimeoutMs, () => {
        if (this.db === db && db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
      });
    }
    return db;
  }

  private database(): Database.Database {
    if (this.db === undefined) {
      throw new StorageUnavailableError(
        this.closed ? 'the SQLite driver is closed' : 'the SQLite driver is not open',
      );
    }
    return this.db;
  }

  private openHistory(): SqliteHistory {
    if (this.kept === undefined) throw new StorageUnavailableError('the SQLite driver is not open');
    return this.kept;
  }

  private openOutbox(): SqliteOutbox {
    if (this.outbox === undefined) this.database();
    return this.outbox!;
  }

  /** Tells the watchers of `changes` what a write just committed. */
  private emit(committed: readonly StoredChange[]): void {
    this.checkpointer?.committed();
    if (committed.length > 0) this.listeners.emit(committed);
  }

  private shared(): SharedStatements {
    if (this.statements === undefined) this.database();
    return this.statements!;
  }

  private state(table: TableDescriptor): TableState {
    const state = this.tables.get(table.table);
    if (state === undefined) {
      this.database();
      throw new Error(`SQLite driver: table ${table.table} was not passed to open()`);
    }
    return state;
  }

  /** A cached list/count statement (LRU by SQL text). */
  private cached(sql: string, raw: boolean): Statement {
    let statement = this.queryCache.get(sql);
    if (statement !== undefined) {
      this.queryCache.delete(sql);
    } else {
      statement = this.database().prepare(sql);
      if (raw) statement.raw(true);
      if (this.queryCache.size >= QUERY_CACHE_SIZE) {
        const oldest = this.queryCache.keys().next();
        if (oldest.done !== true) this.queryCache.delete(oldest.value);
      }
    }
    this.queryCache.set(sql, statement);
    return statement;
  }
}

/** The column of a record's text in the list statement of a page SQLite writes whole. */
const PAGE_TEXT_COLUMN = '_eg_text';

/**
 * The `RecordTexts` of a page SQLite wrote whole (`textsSql`'s `joinedSql`): its row is the
 * records' texts joined with commas, how many there are, and (counted) the count of the filters.
 * The list read at most `keep + 2` records: the look-ahead record is cut off, and the record at
 * `keep`, the page's last, is read back from its text for the page's cursor (a value JSON cannot
 * hold, such as an infinite DOUBLE another program stored, is null there, as in the cursor's own
 * JSON).
 */
function joinedPage(row: Row, keep: number, counted: boolean, nested: boolean): RecordTexts {
  const all = (row[0] as string | null) ?? '';
  const records = Number(row[1]);
  const text =
    records > keep + 1 ? all.slice(0, lastRecordStart(all, all.length, nested) - 1) : all;
  const kept =
    records > keep
      ? {
          record: JSON.parse(
            text.slice(lastRecordStart(text, text.length, nested)),
          ) as StoredFields,
        }
      : undefined;
  // An empty page (past the end) carries no count.
  const count = counted && records > 0 ? { count: Number(row[2]) } : {};
  return { texts: [], joined: { text, records }, kept, ...count };
}

/** A list's statement for `listTexts`, the shape of its rows, and where it runs. */
interface TextsPlan {
  readonly built: BuiltSql;
  readonly shape: RecordShape;
  readonly widen: (row: Row) => Row;
  /** The statement that writes the page whole, over `built` (`textsSql`). */
  readonly joinedSql?: string;
  /** Whether the main connection reads it (`listPool`), outside a transaction. */
  readonly onMain: boolean;
}

/** A count's statement for `countNow`, the key of its size hint, and whether an index bounds it. */
interface CountStep {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly hintKey: string;
  /** Its filters bound an index and SQLite's plan searches it (`count`). */
  readonly bounded: boolean;
}

/** The state of an open transaction: the changes its writes appended, announced on commit. */
interface OpenTransaction {
  readonly changes: StoredChange[];
}

/** How `listTexts` writes each record: every field, or the top-level `fields` only. */
function toStored(layout: TableLayout, row: Row): StoredRecord {
  const n = layout.columns.length;
  return {
    record: layout.decode(row),
    version: row[n] as number,
    createdAt: row[n + 1] as number,
    updatedAt: row[n + 2] as number,
  };
}

function checkTime(now: number): number {
  if (!Number.isSafeInteger(now))
    throw new TypeError(`Write time must be integer milliseconds, got ${now}`);
  return now;
}
