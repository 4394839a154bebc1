import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type {
  ChangeFeed,
  CountQuery,
  EntityActivity,
  KeyValues,
  ListQuery,
  MigrationScript,
  OpenOptions,
  RecordTexts,
  StorageDriver,
  StoredChange,
  StoredFields,
  StoredRecord,
  TableDescriptor,
  UpdateResult,
} from '../driver.js';
import { toDecimal } from '../convert.js';
import { ChangeDrafter, ChangeListeners, type ChangeDraft } from '../events/change.js';
import { DuplicateKeyError, StorageUnavailableError } from '../errors.js';
import {
  MIGRATIONS_TABLE,
  migrationChecksum,
  migrationFailed,
  planMigrationRun,
  type AppliedMigration,
} from '../migrations.js';
import { indexBoundsList } from '../indexes.js';
import { quoteIdentifier } from '../sql/dialect.js';
import { buildCountSql, buildListSql, type BuiltSql } from '../sql/query.js';
import { decimalSortKey } from './decimal-key.js';
import { ReadPool, ReaderError } from './readers.js';
import { rowTexts } from './record-text.js';
import { DECIMAL_KEY_FUNCTION, DECIMAL_TEXT_FUNCTION, sqliteDialect } from './dialect.js';
import { resolveSqliteOptions, type SqliteOptions, type SqliteSynchronous } from './options.js';
import { createEventsTableSql, SqliteOutbox } from './outbox.js';
import {
  ACTIVITY_TABLE,
  SECRETS_TABLE,
  CREATED_COLUMN,
  TableLayout,
  UPDATED_COLUMN,
  VERSION_COLUMN,
} from './schema.js';

type Statement = Database.Statement<unknown[], unknown>;
type Row = unknown[];

/**
 * The most index entries (offset + limit, with the look-ahead row) a list served by a composite
 * index may read on the main connection; a longer one runs in a reader.
 */
export const INDEX_PAGE_ROWS = 1001;

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
}

/** Prepared statements of one table. */
interface TableState {
  readonly layout: TableLayout;
  readonly get: Statement;
  readonly insert: Statement;
  readonly update: Statement;
  readonly delete: Statement;
  readonly deleteVersion: Statement;
  readonly insertMany: Database.Transaction<
    (records: readonly StoredFields[], now: number) => StoredChange[]
  >;
  readonly updateOne: Database.Transaction<
    (params: unknown[], now: number, change: PendingUpdate) => Written<number>
  >;
  readonly deleteOne: Database.Transaction<
    (statement: Statement, params: unknown[], now: number) => Written<Row | undefined>
  >;
}

/** What `update` stores, for its change events. */
interface PendingUpdate {
  readonly key: KeyValues;
  readonly record: StoredFields;
  /** The key as bound parameters, to read the record a rename deletes. */
  readonly keyParams: readonly unknown[];
}

/** A write waiting for its group commit. */
interface QueuedWrite {
  readonly work: (grouped: boolean) => Written<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Set once the write ran (and stays set only if its savepoint was kept). */
  written?: Written<unknown>;
  error?: unknown;
}

/** The result of a write transaction and the changes it appended. */
interface Written<T> {
  readonly result: T;
  readonly changes: readonly StoredChange[];
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
  private closed = false;
  /** Whether writes append change events (`OpenOptions.events`). */
  private events = true;
  private outbox: SqliteOutbox | undefined;
  private readonly listeners = new ChangeListeners();
  private readonly tables = new Map<string, TableState>();
  private readonly queryCache = new Map<string, Statement>();
  /** Writes waiting for the next group commit, in arrival order. */
  private queue: QueuedWrite[] = [];
  /** Write transactions run (see `diagnostics`). */
  private writeCommits = 0;
  /** Whether a group commit is scheduled (`setImmediate`) and not yet run. */
  private flushScheduled = false;
  /** Runs a group of writes in one IMMEDIATE transaction, one savepoint each. */
  private group: ((batch: readonly QueuedWrite[]) => void) | undefined;
  private statements:
    | {
        readonly ping: Statement;
        readonly activity: Statement;
        readonly touchCreate: Statement;
        readonly touchUpdate: Statement;
        readonly touchDelete: Statement;
      }
    | undefined;

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
    const run = <T>(fn: (outbox: SqliteOutbox) => T): Promise<T> => {
      try {
        return Promise.resolve(fn(this.openOutbox()));
      } catch (error) {
        return Promise.reject(mapError(error));
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
      // One IMMEDIATE transaction: migrations, then missing tables. Another process starting at
      // the same time waits on the busy timeout and then finds the migrations recorded.
      db.transaction(() => {
        if (options.migrations !== undefined) applied = runMigrations(db, options.migrations);
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(ACTIVITY_TABLE)} (\n` +
            `  entity TEXT NOT NULL PRIMARY KEY,\n` +
            `  last_create_ms INTEGER,\n  last_update_ms INTEGER,\n  last_delete_ms INTEGER\n` +
            `) WITHOUT ROWID`,
        );
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(SECRETS_TABLE)} (\n` +
            `  name TEXT NOT NULL PRIMARY KEY,\n  value TEXT NOT NULL\n) WITHOUT ROWID`,
        );
        // Created at start like the other bookkeeping tables, so services that existed before
        // change events get their outbox without a migration.
        db.exec(createEventsTableSql());
        for (const layout of layouts) {
          db.exec(layout.createTableSql());
          checkColumns(db, layout);
          for (const statement of layout.createIndexSql()) db.exec(statement);
        }
      }).immediate();
      this.prepareShared(db);
      for (const layout of layouts)
        this.tables.set(layout.descriptor.table, this.prepareTable(db, layout));
    } catch (error) {
      throw mapError(error);
    }
    if (applied.length > 0) options.onMigrationsApplied?.(applied);
  }

  async get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined> {
    return this.getNow(table, key);
  }

  /** Reads by key on the main connection, synchronously (no reader thread: it is one lookup). */
  readonly getNow = (table: TableDescriptor, key: KeyValues): StoredRecord | undefined => {
    try {
      const state = this.state(table);
      const params: unknown[] = [];
      state.layout.keyParams(key, params);
      const row = state.get.get(params) as Row | undefined;
      return row === undefined ? undefined : toStored(state.layout, row);
    } catch (error) {
      throw mapError(error);
    }
  };

  async insert(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
  ): Promise<void> {
    const state = this.state(table);
    if (records.length === 0) return;
    checkTime(now);
    await this.write((grouped) => {
      const changes = (grouped ? state.insertMany : state.insertMany.immediate)(records, now);
      return { result: undefined, changes };
    });
  }

  async update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
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
    const change: PendingUpdate = { key, record, keyParams };
    return this.write((grouped): Written<UpdateResult> => {
      let written: Written<number>;
      try {
        written = (grouped ? state.updateOne : state.updateOne.immediate)(params, now, change);
      } catch (error) {
        if (isPrimaryKeyViolation(error)) return { result: { status: 'duplicate' }, changes: [] };
        throw error;
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

  async delete(
    table: TableDescriptor,
    key: KeyValues,
    expectedVersion: number | undefined,
    now: number,
  ): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    const params: unknown[] = [];
    let statement = state.delete;
    try {
      state.layout.keyParams(key, params);
      if (expectedVersion !== undefined) {
        params.push(expectedVersion);
        statement = state.deleteVersion;
      }
      checkTime(now);
    } catch (error) {
      throw mapError(error);
    }
    const row = await this.write((grouped) =>
      (grouped ? state.deleteOne : state.deleteOne.immediate)(statement, params, now),
    );
    return row === undefined ? undefined : toStored(state.layout, row);
  }

  async list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]> {
    try {
      const state = this.state(table);
      const { sql, params } = this.listSql(table, query);
      const pool = this.listPool(table, query);
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

  async listTexts(table: TableDescriptor, query: ListQuery, keep: number): Promise<RecordTexts> {
    try {
      const state = this.state(table);
      const { sql, params } = this.listSql(table, query);
      const pool = this.listPool(table, query);
      const { shape } = state.layout;
      const { texts, row } =
        pool === undefined
          ? rowTexts(shape, this.cached(sql, true).all(params) as Row[], keep)
          : await pool.texts(sql, params as unknown[], shape, keep);
      return { texts, kept: row === undefined ? undefined : toStored(state.layout, row) };
    } catch (error) {
      throw mapError(error);
    }
  }

  async count(table: TableDescriptor, query: CountQuery): Promise<number> {
    try {
      this.state(table);
      const { sql, params } = buildCountSql(sqliteDialect, table, query);
      const pool = this.readPool();
      const value =
        pool === undefined
          ? this.cached(sql, false).pluck().get(params)
          : await pool.run(sql, params as unknown[], 'value');
      return Number(value);
    } catch (error) {
      throw mapError(error);
    }
  }

  async activity(): Promise<Readonly<Record<string, EntityActivity>>> {
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
    try {
      const db = this.connect();
      const table = quoteIdentifier(SECRETS_TABLE);
      db.prepare(`INSERT OR IGNORE INTO ${table} (name, value) VALUES (?, ?)`).run(name, create());
      const row = db.prepare(`SELECT value FROM ${table} WHERE name = ?`).get(name) as
        { value: string } | undefined;
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
    if (this.queue.length > 0) this.flush();
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
    const db = this.db;
    this.db = undefined;
    this.tables.clear();
    this.queryCache.clear();
    this.statements = undefined;
    this.outbox = undefined;
    this.group = undefined;
    if (db?.open === true) db.close();
  }

  /**
   * Where a list runs: in a reader, unless a composite index serves it and bounds what it reads
   * (`indexBoundsList`): such a page takes about as long as its rows, so the main connection
   * answers it without a trip to a worker thread and back. Every other list — scans, sorts, deep
   * offsets, whatever may run long — stays in the readers, off the event loop.
   */
  private listPool(table: TableDescriptor, query: ListQuery): ReadPool | undefined {
    return indexBoundsList(table, query, INDEX_PAGE_ROWS) ? undefined : this.readPool();
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
      writeCommits: this.writeCommits,
    };
  }

  // ---------------------------------------------------------------------------------------------

  private connect(): Database.Database {
    if (this.closed) throw new StorageUnavailableError('the SQLite driver is closed');
    if (this.db !== undefined) return this.db;
    if (!this.memory) mkdirSync(dirname(resolve(this.filename)), { recursive: true });
    const db = new Database(this.filename, { timeout: this.busyTimeoutMs });
    try {
      if (!this.memory) db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.synchronous}`);
      // Pages an index serves run here (all lists without readers): the lists' page cache.
      db.pragma(`cache_size = ${-this.cacheSizeKiB}`);
      db.function(DECIMAL_KEY_FUNCTION, { deterministic: true }, (value: unknown) =>
        typeof value === 'string' || typeof value === 'number'
          ? (decimalSortKey(value) ?? null)
          : null,
      );
      // Used by migrations converting numbers to DECIMAL or STRING: the canonical decimal text.
      db.function(DECIMAL_TEXT_FUNCTION, { deterministic: true }, (value: unknown) =>
        typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint'
          ? (toDecimal(typeof value === 'bigint' ? String(value) : value, [], '', []) ?? null)
          : null,
      );
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
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

  private openOutbox(): SqliteOutbox {
    if (this.outbox === undefined) this.database();
    return this.outbox!;
  }

  /**
   * Runs one write transaction. With group commit, the write waits in a queue that is committed
   * right after the event loop's current I/O phase (`setImmediate`, no timer): the writes whose
   * requests arrived meanwhile — typically during the previous commit, which blocks the loop —
   * share one IMMEDIATE transaction and so one fsync, each inside its own savepoint, so that a
   * failing write rolls back only itself and gets its own error. Every write is acknowledged
   * (its promise settles) only after the commit that covers it; the change events of the group
   * reach the watchers in seq order. `work(grouped)` runs the write's statements, in a
   * transaction of its own when `grouped` is false and as a savepoint when it is true.
   */
  private write<T>(work: (grouped: boolean) => Written<T>): Promise<T> {
    if (!this.groupCommit) {
      try {
        this.database();
        this.writeCommits++;
        const { result, changes } = work(false);
        this.emit(changes);
        return Promise.resolve(result);
      } catch (error) {
        return Promise.reject(mapError(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits the queued writes as one group and settles their promises. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    try {
      this.database();
      if (batch.length === 1) {
        // Alone: its own transaction, without a savepoint.
        const item = batch[0]!;
        try {
          item.written = item.work(false);
        } catch (error) {
          item.error = error;
        }
      } else {
        this.groupTransaction()(batch);
      }
      this.writeCommits++;
    } catch (error) {
      // The group's transaction failed as a whole (BEGIN, COMMIT, or storage lost in between):
      // nothing of it was committed.
      const mapped = mapError(error);
      for (const item of batch) item.reject(mapped);
      return;
    }
    for (const item of batch) {
      if (item.written !== undefined) this.emit(item.written.changes);
    }
    for (const item of batch) {
      if (item.written !== undefined) item.resolve(item.written.result);
      else item.reject(mapError(item.error));
    }
  }

  private groupTransaction(): (batch: readonly QueuedWrite[]) => void {
    if (this.group !== undefined) return this.group;
    const db = this.database();
    const run = db.transaction((batch: readonly QueuedWrite[]) => {
      for (const item of batch) {
        try {
          item.written = item.work(true);
        } catch (error) {
          // A failure that ended the transaction (SQLite rolls back on some errors) fails the
          // whole group; any other rolled back the write's own savepoint only.
          if (!db.inTransaction) throw error;
          item.error = error;
        }
      }
    });
    this.group = run.immediate;
    return this.group;
  }

  /** Tells the watchers of `changes` what a write just committed. */
  private emit(committed: readonly StoredChange[]): void {
    if (committed.length > 0) this.listeners.emit(committed);
  }

  private shared(): NonNullable<SqliteDriver['statements']> {
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

  private prepareShared(db: Database.Database): void {
    if (this.statements !== undefined) return;
    const activity = quoteIdentifier(ACTIVITY_TABLE);
    const touch = (column: string): Statement =>
      db.prepare(
        `INSERT INTO ${activity} (entity, ${column}) VALUES (?, ?) ` +
          `ON CONFLICT (entity) DO UPDATE SET ${column} = ` +
          `max(coalesce(${column}, excluded.${column}), excluded.${column})`,
      );
    this.statements = {
      ping: db.prepare('SELECT 1'),
      activity: db
        .prepare(`SELECT entity, last_create_ms, last_update_ms, last_delete_ms FROM ${activity}`)
        .raw(true),
      touchCreate: touch('last_create_ms'),
      touchUpdate: touch('last_update_ms'),
      touchDelete: touch('last_delete_ms'),
    };
    this.outbox = new SqliteOutbox(db);
  }

  private prepareTable(db: Database.Database, layout: TableLayout): TableState {
    const { tableSql, descriptor } = layout;
    const entity = descriptor.entity;
    const shared = this.statements!;
    const outbox = this.outbox!;
    const drafter = new ChangeDrafter(descriptor);
    /** Appends the changes of a write, inside its transaction (none when events are off). */
    const append = (now: number, drafts: () => ChangeDraft[]): StoredChange[] =>
      this.events ? outbox.append(drafts(), now) : [];
    const select = layout.selectList();
    const where = layout.keyCondition();
    const writeColumns = layout.writeColumns.map(quoteIdentifier);
    const version = quoteIdentifier(VERSION_COLUMN);
    const updated = quoteIdentifier(UPDATED_COLUMN);
    const created = quoteIdentifier(CREATED_COLUMN);
    const returning = select.replaceAll(`${tableSql}.`, '');

    const get = db.prepare(`SELECT ${select} FROM ${tableSql} WHERE ${where}`).raw(true);
    const insert = db.prepare(
      `INSERT INTO ${tableSql} (${[...writeColumns, created, updated, version].join(', ')}) ` +
        `VALUES (${writeColumns.map(() => '?').join(', ')}, ?, ?, 1)`,
    );
    const update = db.prepare(
      `UPDATE ${tableSql} SET ${writeColumns.map((c) => `${c} = ?`).join(', ')}, ` +
        `${updated} = ?, ${version} = ${version} + 1 WHERE ${where} AND ${version} = ?`,
    );
    const del = db
      .prepare(`DELETE FROM ${tableSql} WHERE ${where} RETURNING ${returning}`)
      .raw(true);
    const deleteVersion = db
      .prepare(`DELETE FROM ${tableSql} WHERE ${where} AND ${version} = ? RETURNING ${returning}`)
      .raw(true);

    const insertMany = db.transaction((records: readonly StoredFields[], now: number) => {
      const width = layout.writeColumns.length;
      const params: unknown[] = new Array<unknown>(width + 2).fill(now);
      for (let i = 0; i < records.length; i++) {
        layout.writeParams(records[i]!, params);
        try {
          insert.run(params);
        } catch (error) {
          if (isPrimaryKeyViolation(error)) {
            throw new DuplicateKeyError(descriptor.table, i, { cause: error });
          }
          throw error;
        }
      }
      shared.touchCreate.run(entity, now);
      return append(now, () => records.map((record) => drafter.draft('created', record)));
    });
    const updateOne = db.transaction(
      (params: unknown[], now: number, change: PendingUpdate): Written<number> => {
        // A rename is the deletion of the record under its old key: read it before it moves.
        const renamed =
          this.events && drafter.renames(change.key, change.record)
            ? (get.get(change.keyParams) as Row | undefined)
            : undefined;
        const { changes } = update.run(params);
        if (changes === 0) return { result: 0, changes: [] };
        shared.touchUpdate.run(entity, now);
        const appended = append(now, () =>
          renamed === undefined
            ? [drafter.draft('updated', change.record)]
            : [
                drafter.draft('deleted', layout.decode(renamed)),
                drafter.draft('created', change.record),
              ],
        );
        return { result: changes, changes: appended };
      },
    );
    const deleteOne = db.transaction(
      (statement: Statement, params: unknown[], now: number): Written<Row | undefined> => {
        const row = statement.get(params) as Row | undefined;
        if (row === undefined) return { result: undefined, changes: [] };
        shared.touchDelete.run(entity, now);
        const appended = append(now, () => [drafter.draft('deleted', layout.decode(row))]);
        return { result: row, changes: appended };
      },
    );
    return {
      layout,
      get,
      insert,
      update,
      delete: del,
      deleteVersion,
      insertMany,
      updateOne,
      deleteOne,
    };
  }
}

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

/** Fails clearly when a table created by an older schema lacks columns (there are no migrations). */
/**
 * Brings the database's migrations in line with the code (see `planMigrationRun`); runs inside
 * the caller's transaction, so a failing migration leaves everything as it was. Returns the ids run.
 */
function runMigrations(db: Database.Database, scripts: readonly MigrationScript[]): string[] {
  const exists = (name: string): boolean =>
    db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(name) !==
    undefined;
  const table = quoteIdentifier(MIGRATIONS_TABLE);
  const hasTable = exists(MIGRATIONS_TABLE);
  const applied = hasTable
    ? (db.prepare(`SELECT id, checksum FROM ${table}`).all() as AppliedMigration[])
    : undefined;
  const run = planMigrationRun(scripts, { applied, hasTables: exists(ACTIVITY_TABLE) });
  if (!hasTable) {
    db.exec(
      `CREATE TABLE ${table} (\n  id TEXT NOT NULL PRIMARY KEY,\n  applied_ms INTEGER NOT NULL,\n` +
        `  checksum TEXT NOT NULL\n) WITHOUT ROWID`,
    );
  }
  const record = db.prepare(`INSERT INTO ${table} (id, applied_ms, checksum) VALUES (?, ?, ?)`);
  if (run.mode === 'baseline') {
    const now = Date.now();
    for (const script of run.record) record.run(script.id, now, migrationChecksum(script.sql));
    return [];
  }
  for (const script of run.pending) {
    try {
      db.exec(script.sql);
    } catch (error) {
      if (mapError(error) !== error) throw error; // busy or broken storage: retried by the caller
      throw migrationFailed(script.id, error);
    }
    record.run(script.id, Date.now(), migrationChecksum(script.sql));
  }
  return run.pending.map((script) => script.id);
}

function checkColumns(db: Database.Database, layout: TableLayout): void {
  const present = new Set(
    (
      db
        .prepare(`SELECT name FROM pragma_table_xinfo(?)`)
        .pluck()
        .all(layout.descriptor.table) as string[]
    ).map((name) => name.toLowerCase()),
  );
  const missing = layout.expectedColumns().filter((c) => !present.has(c.toLowerCase()));
  if (missing.length > 0) {
    throw new Error(
      `SQLite table ${layout.descriptor.table} exists but lacks column(s) ${missing.join(', ')}; ` +
        `it was created for another schema; run entity-gen generate to write the migration that ` +
        `brings it up to date and start the service with its migrations (docs/migrations.md)`,
    );
  }
}

function sqliteCode(error: unknown): string | undefined {
  if (error instanceof Database.SqliteError || error instanceof ReaderError) return error.code;
  return undefined;
}

function isPrimaryKeyViolation(error: unknown): boolean {
  return sqliteCode(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Primary result codes meaning the database cannot be used right now (or at all). */
const UNAVAILABLE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_PROTOCOL',
  'SQLITE_READONLY',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_NOLFS',
  'SQLITE_AUTH',
]);

/** SQLite errors meaning "storage unreachable" become `StorageUnavailableError`; others pass. */
function mapError(error: unknown): unknown {
  const code = sqliteCode(error);
  if (code !== undefined) {
    const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
    if (UNAVAILABLE.has(primary)) {
      return new StorageUnavailableError(`SQLite ${code}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return error;
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    // mkdir of the database directory failed, and the like.
    if (['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOTDIR', 'EEXIST', 'EIO'].includes(error.code)) {
      return new StorageUnavailableError(`${error.code}: ${error.message}`, { cause: error });
    }
  }
  return error;
}
