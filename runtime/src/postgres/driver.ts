import pg from 'pg';
import type {
  ChangeFeed,
  ColumnDescriptor,
  ColumnKind,
  CountQuery,
  EntityActivity,
  KeyValues,
  ListQuery,
  MigrationScript,
  OpenOptions,
  StorageDriver,
  StoredFields,
  StoredRecord,
  TableDescriptor,
  UpdateResult,
} from '../driver.js';
import type { Environment } from '../env.js';
import {
  ChangeDrafter,
  ChangeListeners,
  committedChanges,
  type ChangeDraft,
} from '../events/change.js';
import { DuplicateKeyError, StorageUnavailableError } from '../errors.js';
import {
  MIGRATIONS_TABLE,
  migrationChecksum,
  migrationFailed,
  planMigrationRun,
  type AppliedMigration,
} from '../migrations.js';
import type { SqlDialect } from '../sql/dialect.js';
import { buildCountSql, buildListSql, type BuiltSql } from '../sql/query.js';
import { postgresDialect } from './dialect.js';
import { describeError, isRetryable, isUnavailable, sqlState, translateError } from './errors.js';
import { ChangeAnnouncer, ChangeListener } from './notifications.js';
import { PostgresOutbox, toBounds, toChange } from './outbox.js';
import {
  describeSettings,
  parsePostgresUrl,
  type PostgresSettings,
  type PostgresSettingsOverrides,
} from './options.js';
import {
  ACTIVITY_TABLE,
  CREATED_COLUMN,
  UPDATED_COLUMN,
  VERSION_COLUMN,
  castType,
  checkColumnNames,
  createActivityTableSql,
  createSecretsTableSql,
  SECRETS_TABLE,
  createIndexSql,
  createTableSql,
  expectedColumns,
  qualify,
  quoteIdent,
  shortHash,
} from './schema.js';
import { driverTypes } from './types.js';

/** Options of `PostgresDriver`; explicit values win over URL parameters, which win over the environment. */
export interface PostgresDriverOptions extends PostgresSettingsOverrides {
  /** `postgres://` / `postgresql://` URL (grammar in `index.ts`). */
  readonly url?: string;
  /**
   * Environment read for `DATABASE_URL`, `PGPOOL_MAX` & co.; default none (a generated service
   * passes `process.env`). `pg` itself still falls back to `PGHOST`, `PGUSER` & co.
   */
  readonly env?: Environment;
  /**
   * Called with errors of idle pooled connections (e.g. the server restarted). The pool drops
   * such connections and opens new ones on demand; these errors never reach a request and never
   * crash the process. Default: ignored.
   */
  readonly onIdleError?: (error: Error) => void;
  /** Further `pg.Pool` settings (merged last; for tests and special set-ups). */
  readonly pool?: Omit<pg.PoolConfig, 'types'>;
}

/** How often a write is run again after a serialization failure or a deadlock (SQLSTATE 40001/40P01). */
const MAX_ATTEMPTS = 5;

/** Prepared-statement texts and value codecs of one table. */
interface TableState {
  readonly descriptor: TableDescriptor;
  /** Schema-qualified quoted table name. */
  readonly tableSql: string;
  readonly columns: readonly ColumnDescriptor[];
  readonly keyIndexes: readonly number[];
  readonly dialect: SqlDialect;
  /** Select list for the shared list builder (`"table"."column", …`). */
  readonly listSelect: string;
  readonly get: string;
  readonly insert: string;
  readonly update: string;
  readonly delete: string;
  readonly deleteVersion: string;
  /** Finds which of a list of keys exist (for the index of a `DuplicateKeyError`). */
  readonly existing: string;
  /** Reads the record a rename deletes, locking it (`$1…$k` the key, `$k+1` the version). */
  readonly lockVersion: string;
  /** Builds the change events of the table's writes (when events are on). */
  readonly drafter: ChangeDrafter | undefined;
}

type Row = unknown[];

/**
 * The PostgreSQL storage driver, on a `pg` connection pool. Stateless apart from the pool, so
 * any number of service instances can share one database.
 *
 * - One table per entity (column types in `index.ts`), the key as primary key, bookkeeping
 *   columns `_eg_created_ms`, `_eg_updated_ms`, `_eg_version`; `_eg_activity` holds each
 *   entity's last write times and is updated by the same statement as the write.
 * - Every write is ONE statement (data-modifying CTE), hence atomic without an explicit
 *   transaction and one round trip: insert of a list via `unnest` of one array per column,
 *   update with a version check, delete with RETURNING. The change events (outbox.ts) are part
 *   of that statement; only a delete and a rename, whose events hold the record as it was, run
 *   two statements in a transaction. Fixed statements are named prepared
 *   statements; values are always bound parameters.
 * - Duplicate keys are found by the primary key (SQLSTATE 23505), so concurrent inserts from
 *   several instances are safe. Serialization failures and deadlocks are retried.
 * - Lost, refused or timed-out connections and server shutdowns become
 *   `StorageUnavailableError`; the pool reconnects by itself once the server is back.
 */
export class PostgresDriver implements StorageDriver {
  readonly dialect = 'postgres';
  readonly settings: PostgresSettings;

  private readonly pool: pg.Pool;
  private readonly tables = new Map<string, TableState>();
  private closed = false;
  private readonly activityTable: string;
  private readonly activitySql: string;
  /** The outbox of change events (SPEC §9). */
  readonly changes: ChangeFeed;
  private readonly outbox: PostgresOutbox;
  /** Whether writes append change events (`OpenOptions.events`). */
  private events = true;
  private readonly listeners = new ChangeListeners();
  /** Announces this instance's commits to the others, once `open()` knows the channel. */
  private announcer: ChangeAnnouncer | undefined;
  /** The LISTEN connection, once `open()` knows the channel and while someone watches. */
  private listener: ChangeListener | undefined;
  private readonly clientConfig: pg.ClientConfig;

  /**
   * @param config a URL (its parameters only: no environment is read), settings returned by
   *   `parsePostgresUrl`, or options (whose `url` defaults to `DATABASE_URL` of their `env`, then
   *   to pg's environment defaults).
   * @param extra idle-error callback and pool settings when `config` is a URL or settings.
   */
  constructor(
    config: string | PostgresSettings | PostgresDriverOptions = {},
    extra: Pick<PostgresDriverOptions, 'onIdleError' | 'pool'> = {},
  ) {
    let options: PostgresDriverOptions;
    if (typeof config === 'string') {
      options = { ...extra, url: config };
      this.settings = parsePostgresUrl(config);
    } else if (isSettings(config)) {
      options = extra;
      this.settings = config;
    } else {
      options = { ...extra, ...config };
      const env = options.env ?? {};
      this.settings = parsePostgresUrl(
        options.url ?? env['DATABASE_URL'] ?? 'postgres://',
        env,
        options,
      );
    }
    const s = this.settings;
    const poolConfig: pg.PoolConfig = {
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
      max: s.poolMax,
      idleTimeoutMillis: s.idleTimeoutMs,
      connectionTimeoutMillis: s.connectTimeoutMs,
      ssl: s.ssl,
      application_name: s.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: driverTypes,
      ...(s.statementTimeoutMs > 0
        ? {
            statement_timeout: s.statementTimeoutMs,
            // Client-side guard for a server that stops answering (network partition, SIGSTOP):
            // slightly longer than the server's own timeout, so that one normally fires first.
            query_timeout: s.statementTimeoutMs + Math.max(1000, s.connectTimeoutMs),
          }
        : {}),
      ...(s.options === undefined ? {} : { options: s.options }),
      ...(s.channelBinding ? { enableChannelBinding: true } : {}),
      ...options.pool,
    };
    for (const key of Object.keys(poolConfig) as (keyof pg.PoolConfig)[]) {
      if (poolConfig[key] === undefined) delete poolConfig[key];
    }
    this.pool = new pg.Pool(poolConfig);
    // The LISTEN connection is made like the pooled ones, without a statement timeout (it waits).
    const clientConfig: pg.ClientConfig = { ...poolConfig };
    delete clientConfig.statement_timeout;
    delete clientConfig.query_timeout;
    this.clientConfig = clientConfig;
    // An idle client whose connection breaks emits 'error' on the pool; without a listener that
    // would crash the process. The pool has already discarded the client.
    const onIdleError = options.onIdleError;
    this.pool.on('error', (error) => {
      onIdleError?.(error);
    });
    this.activityTable = qualify(s.schema, ACTIVITY_TABLE);
    this.activitySql = `SELECT "entity", "last_create_ms", "last_update_ms", "last_delete_ms" FROM ${this.activityTable}`;
    this.outbox = new PostgresOutbox(s.schema);
    const outbox = this.outbox;
    this.changes = {
      read: async (after, limit) => {
        this.checkOpen();
        const result = await this.run({
          name: statementName(outbox.readSql),
          text: outbox.readSql,
          values: [after, limit],
          rowMode: 'array',
        });
        return (result.rows as Row[]).map(toChange);
      },
      bounds: async () => {
        this.checkOpen();
        const result = await this.run({
          name: statementName(outbox.boundsSql),
          text: outbox.boundsSql,
          rowMode: 'array',
        });
        return toBounds(result.rows[0] as Row | undefined);
      },
      trim: async (time) => {
        this.checkOpen();
        const result = await this.run({ text: outbox.trimSql, values: [time] });
        return result.rowCount ?? 0;
      },
      watch: (listener) => {
        const stop = this.listeners.add(listener);
        this.listener?.start();
        return () => {
          stop();
          if (this.listeners.size === 0) void this.listener?.stop();
        };
      },
    };
  }

  /** Connection target without the password, for logs. */
  describe(): string {
    return describeSettings(this.settings);
  }

  /**
   * Connects and creates the schema (when configured and missing), `_eg_activity` and every
   * missing table and index. Safe to run from several instances at once (an advisory lock
   * serialises the DDL; "already exists" races are absorbed). Rejects with
   * `StorageUnavailableError` when the server cannot be reached, so the caller can retry with
   * backoff; the driver stays usable for another `open()`.
   */
  async open(tables: readonly TableDescriptor[], options: OpenOptions = {}): Promise<void> {
    this.checkOpen();
    for (const table of tables) checkColumnNames(table);
    let applied: readonly string[] = [];
    let channel: string | undefined;
    await this.withClient(async (client) => {
      const dateStyle = (await client.query<{ DateStyle: string }>('SHOW DateStyle')).rows[0]
        ?.DateStyle;
      if (dateStyle !== undefined && !/^ISO/i.test(dateStyle)) {
        throw new Error(
          `PostgreSQL DateStyle is ${dateStyle}; the driver needs ISO output. Set it for the database ` +
            `(ALTER DATABASE … SET DateStyle = ISO) or add ?options=-c%20DateStyle%3DISO to the URL`,
        );
      }
      const locked = await this.advisoryLock(client);
      try {
        const schema = this.settings.schema;
        if (schema !== undefined) {
          const exists = await client.query(
            'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1',
            [schema],
          );
          if (exists.rowCount === 0)
            await ddl(client, `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
        }
        if (options.migrations !== undefined) {
          applied = await this.runMigrations(client, options.migrations);
        }
        await ddl(client, createActivityTableSql(schema));
        await ddl(client, createSecretsTableSql(schema));
        // Created at start like the other bookkeeping tables, so services that existed before
        // change events get their outbox without a migration.
        for (const statement of this.outbox.createSql()) await ddl(client, statement);
        const current = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
        channel = PostgresOutbox.channel(schema ?? current.rows[0]?.schema ?? '');
        for (const table of tables) {
          await ddl(client, createTableSql(schema, table));
          await this.checkColumns(client, table);
          for (const statement of createIndexSql(schema, table)) await ddl(client, statement);
        }
      } finally {
        if (locked)
          await client.query(
            'SELECT pg_advisory_unlock($1, $2)',
            advisoryKey(this.settings.schema),
          );
      }
    });
    this.events = options.events !== false;
    for (const table of tables) this.tables.set(table.table, this.prepareTable(table));
    if (channel !== undefined && this.announcer === undefined) {
      this.announcer = new ChangeAnnouncer(this.pool, channel);
      this.listener = new ChangeListener(this.clientConfig, channel, this.announcer.token, () =>
        this.listeners.emit([]),
      );
      if (this.listeners.size > 0) this.listener.start();
    }
    if (applied.length > 0) options.onMigrationsApplied?.(applied);
  }

  /**
   * Brings the database's migrations in line with the code (see `planMigrationRun`) in ONE
   * transaction, under the advisory lock `open()` holds: pending migrations run with the
   * configured schema alone on the search path (the files use unqualified names), without a
   * statement timeout and with shortest-exact float output. Returns the ids run.
   */
  private async runMigrations(
    client: pg.PoolClient,
    scripts: readonly MigrationScript[],
  ): Promise<string[]> {
    const schema = this.settings.schema;
    const table = qualify(schema, MIGRATIONS_TABLE);
    await client.query('BEGIN');
    try {
      // No timeout for table rewrites; float8 as text in its shortest exact form (DOUBLE → DECIMAL).
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query('SET LOCAL extra_float_digits = 1');
      if (schema !== undefined) {
        await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
      }
      const exists = async (name: string): Promise<boolean> =>
        (
          await client.query(
            `SELECT 1 FROM pg_catalog.pg_tables
              WHERE schemaname = COALESCE($1, current_schema()) AND tablename = $2`,
            [schema ?? null, name],
          )
        ).rowCount !== 0;
      const hasTable = await exists(MIGRATIONS_TABLE);
      const applied = hasTable
        ? (await client.query<AppliedMigration>(`SELECT id, checksum FROM ${table}`)).rows
        : undefined;
      const run = planMigrationRun(scripts, {
        applied,
        hasTables: await exists(ACTIVITY_TABLE),
      });
      if (!hasTable) {
        await client.query(
          `CREATE TABLE ${table} (\n  id TEXT COLLATE "C" NOT NULL PRIMARY KEY,\n` +
            `  applied_ms BIGINT NOT NULL,\n  checksum TEXT NOT NULL\n)`,
        );
      }
      const record = async (script: MigrationScript): Promise<void> => {
        await client.query(`INSERT INTO ${table} (id, applied_ms, checksum) VALUES ($1, $2, $3)`, [
          script.id,
          Date.now(),
          migrationChecksum(script.sql),
        ]);
      };
      let ran: string[] = [];
      if (run.mode === 'baseline') {
        for (const script of run.record) await record(script);
      } else {
        for (const script of run.pending) {
          try {
            await client.query(script.sql);
          } catch (error) {
            if (isUnavailable(error)) throw error;
            throw migrationFailed(script.id, error);
          }
          await record(script);
        }
        ran = run.pending.map((script) => script.id);
      }
      await client.query('COMMIT');
      return ran;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    const values = keyParams(state, key);
    const result = await this.run({
      name: statementName(state.get),
      text: state.get,
      values,
      rowMode: 'array',
    });
    const row = result.rows[0] as Row | undefined;
    return row === undefined ? undefined : toStored(state, row);
  }

  async insert(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
  ): Promise<void> {
    const state = this.state(table);
    checkTime(now);
    if (records.length === 0) return;
    const { columns } = state;
    // A fixed insert order (by key) keeps concurrent batches with overlapping keys from
    // deadlocking each other; positions are still reported in request order.
    const order = records.map((_, i) => i);
    if (records.length > 1) {
      const keys = records.map((r) => keyString(state, r));
      order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
    }
    const arrays: (string | null)[][] = columns.map(() => new Array<string | null>(records.length));
    for (let n = 0; n < order.length; n++) {
      const record = records[order[n]!]!;
      for (let c = 0; c < columns.length; c++) {
        arrays[c]![n] = toText(state.descriptor.table, columns[c]!, record[columns[c]!.name]);
      }
    }
    const drafter = state.drafter;
    const drafts = drafter === undefined ? [] : records.map((r) => drafter.draft('created', r));
    try {
      const result = await this.run({
        name: statementName(state.insert),
        text: state.insert,
        values: [
          ...arrays,
          state.descriptor.entity,
          now,
          ...(drafter === undefined ? [] : PostgresOutbox.params(drafts)),
        ],
        rowMode: 'array',
      });
      this.emit(drafts, result.rows[0] as Row | undefined, now);
    } catch (error) {
      if (sqlState(error) !== '23505') throw error;
      const index = await this.duplicateIndex(state, records).catch(() => undefined);
      throw new DuplicateKeyError(state.descriptor.table, index, { cause: error });
    }
  }

  async update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
  ): Promise<UpdateResult> {
    const state = this.state(table);
    checkTime(now);
    const keys = keyParams(state, key);
    const values: unknown[] = state.columns.map((c) =>
      toParam(state.descriptor.table, c, record[c.name]),
    );
    values.push(now, ...keys, expectedVersion, state.descriptor.entity);
    const drafter = state.drafter;
    const query = (drafts: readonly ChangeDraft[]): pg.QueryArrayConfig => ({
      name: statementName(state.update),
      text: state.update,
      values: drafter === undefined ? values : [...values, ...PostgresOutbox.params(drafts)],
      rowMode: 'array',
    });
    try {
      let row: Row | undefined;
      let drafts: ChangeDraft[] = [];
      if (drafter !== undefined && drafter.renames(key, record)) {
        // The `deleted` event of a rename holds the record as it was: read (and lock) it first,
        // in the same transaction.
        row = await this.transaction(async (client) => {
          const old = await client.query({
            name: statementName(state.lockVersion),
            text: state.lockVersion,
            values: [...keys, expectedVersion],
            rowMode: 'array',
          });
          const previous = old.rows[0] as Row | undefined;
          if (previous === undefined) return undefined;
          drafts = [
            drafter.draft('deleted', toStored(state, previous).record),
            drafter.draft('created', record),
          ];
          return (await client.query(query(drafts))).rows[0] as Row | undefined;
        });
      } else {
        drafts = drafter === undefined ? [] : [drafter.draft('updated', record)];
        row = (await this.run(query(drafts))).rows[0] as Row | undefined;
      }
      if (row === undefined) return { status: 'conflict' };
      this.emit(drafts, row.slice(1), now);
      return { status: 'updated', version: Number(row[0]) };
    } catch (error) {
      if (sqlState(error) === '23505') return { status: 'duplicate' };
      throw error;
    }
  }

  async delete(
    table: TableDescriptor,
    key: KeyValues,
    expectedVersion: number | undefined,
    now: number,
  ): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    checkTime(now);
    const values: unknown[] = keyParams(state, key);
    let text = state.delete;
    if (expectedVersion !== undefined) {
      values.push(expectedVersion);
      text = state.deleteVersion;
    }
    values.push(state.descriptor.entity, now);
    const remove = { name: statementName(text), text, values, rowMode: 'array' as const };
    const drafter = state.drafter;
    if (drafter === undefined) {
      const row = (await this.run(remove)).rows[0] as Row | undefined;
      return row === undefined ? undefined : toStored(state, row);
    }
    // The event holds the deleted record, known only once it is deleted: a transaction of two
    // statements.
    const outbox = this.outbox;
    const deleted = await this.transaction(async (client) => {
      const row = (await client.query(remove)).rows[0] as Row | undefined;
      if (row === undefined) return undefined;
      const stored = toStored(state, row);
      const drafts = [drafter.draft('deleted', stored.record)];
      const appended = await client.query({
        name: statementName(outbox.appendSql),
        text: outbox.appendSql,
        values: [...PostgresOutbox.params(drafts), state.descriptor.entity, now],
        rowMode: 'array',
      });
      return { stored, drafts, first: appended.rows[0] as Row | undefined };
    });
    if (deleted === undefined) return undefined;
    this.emit(deleted.drafts, deleted.first, now);
    return deleted.stored;
  }

  async list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]> {
    const state = this.state(table);
    const { sql, params } = this.listSql(table, query);
    const result = await this.run({ text: sql, values: params, rowMode: 'array' });
    return (result.rows as Row[]).map((row) => toStored(state, row));
  }

  async count(table: TableDescriptor, query: CountQuery): Promise<number> {
    const state = this.state(table);
    const built = buildCountSql(state.dialect, table, query);
    const sql = qualifyFrom(built.sql, 'SELECT count(*)', table.table, state.tableSql);
    const result = await this.run({ text: sql, values: built.params, rowMode: 'array' });
    return Number((result.rows[0] as Row | undefined)?.[0] ?? 0);
  }

  async activity(): Promise<Readonly<Record<string, EntityActivity>>> {
    this.checkOpen();
    const result = await this.run({
      name: statementName(this.activitySql),
      text: this.activitySql,
      rowMode: 'array',
    });
    const activities: Record<string, EntityActivity> = {};
    for (const row of result.rows as [string, number | null, number | null, number | null][]) {
      const [entity, lastCreate, lastUpdate, lastDelete] = row;
      const activity: { lastCreate?: number; lastUpdate?: number; lastDelete?: number } = {};
      if (lastCreate !== null) activity.lastCreate = lastCreate;
      if (lastUpdate !== null) activity.lastUpdate = lastUpdate;
      if (lastDelete !== null) activity.lastDelete = lastDelete;
      Object.defineProperty(activities, entity, {
        value: activity,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return activities;
  }

  async secret(name: string, create: () => string): Promise<string> {
    this.checkOpen();
    const table = qualify(this.settings.schema, SECRETS_TABLE);
    await this.run({
      text: `INSERT INTO ${table} ("name", "value") VALUES ($1, $2) ON CONFLICT ("name") DO NOTHING`,
      values: [name, create()],
    });
    const result = await this.run({
      text: `SELECT "value" FROM ${table} WHERE "name" = $1`,
      values: [name],
    });
    const row = result.rows[0] as { value?: unknown } | undefined;
    if (typeof row?.value !== 'string') throw new Error(`secret ${name} was not stored`);
    return row.value;
  }

  async ping(): Promise<void> {
    this.checkOpen();
    // Bounded by the connect timeout even when statement timeouts are switched off.
    await this.run({
      text: 'SELECT 1',
      query_timeout: this.settings.connectTimeoutMs,
    } as pg.QueryConfig);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.tables.clear();
    await this.listener?.stop();
    await this.pool.end();
  }

  /**
   * Diagnostic API (tests, benchmarks, support): the SQL text and parameters `list()` runs.
   * Not part of the `StorageDriver` contract; may change without notice.
   */
  listSql(table: TableDescriptor, query: ListQuery): BuiltSql {
    const state = this.state(table);
    const built = buildListSql(state.dialect, table, query, state.listSelect);
    return {
      sql: qualifyFrom(built.sql, `SELECT ${state.listSelect}`, table.table, state.tableSql),
      params: built.params,
    };
  }

  /** Diagnostic API: `EXPLAIN` of the statement `list()` runs (one line per plan row). */
  async explainList(table: TableDescriptor, query: ListQuery): Promise<string[]> {
    const { sql, params } = this.listSql(table, query);
    const result = await this.run({ text: `EXPLAIN ${sql}`, values: params, rowMode: 'array' });
    return (result.rows as Row[]).map((row) => String(row[0]));
  }

  // ---------------------------------------------------------------------------------------------

  private checkOpen(): void {
    if (this.closed) throw new StorageUnavailableError('the PostgreSQL driver is closed');
  }

  private state(table: TableDescriptor): TableState {
    this.checkOpen();
    const state = this.tables.get(table.table);
    if (state === undefined)
      throw new Error(`PostgreSQL driver: table ${table.table} was not passed to open()`);
    return state;
  }

  /**
   * Runs `fn` on a pooled client. A client whose connection failed is discarded instead of being
   * returned to the pool; connection-level errors become `StorageUnavailableError`.
   */
  private async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw translateError(error);
    }
    let broken: Error | undefined;
    // A checked-out client emits 'error' when its connection drops between queries; without a
    // listener that would be an uncaught exception.
    const onError = (error: Error): void => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (error) {
      if (isUnavailable(error))
        broken ??= error instanceof Error ? error : new Error(describeError(error));
      throw translateError(error);
    } finally {
      client.off('error', onError);
      client.release(broken ?? false);
    }
  }

  /** Tells the watchers of `changes` what a write committed: `drafts` from seq `first[0]` on. */
  private emit(drafts: readonly ChangeDraft[], first: Row | undefined, now: number): void {
    const seq = first?.[0];
    if (drafts.length === 0 || seq === null || seq === undefined) return;
    this.listeners.emit(committedChanges(drafts, Number(seq), now));
    this.announcer?.announce(Number(seq) + drafts.length - 1);
  }

  /** Runs `fn` in a transaction on one client, all of it again on serialization failures and deadlocks. */
  private transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      for (let attempt = 1; ; attempt++) {
        await client.query('BEGIN');
        try {
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
          await sleep(Math.random() * 20 * attempt);
        }
      }
    });
  }

  /** One statement, re-run on serialization failures and deadlocks. */
  private run(config: pg.QueryConfig | pg.QueryArrayConfig): Promise<pg.QueryResult> {
    return this.withClient(async (client) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await client.query(config as pg.QueryConfig);
        } catch (error) {
          if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
          await sleep(Math.random() * 20 * attempt);
        }
      }
    });
  }

  /** Session advisory lock serialising DDL of concurrent `open()`s; false where the engine has none. */
  private async advisoryLock(client: pg.PoolClient): Promise<boolean> {
    try {
      await client.query('SELECT pg_advisory_lock($1, $2)', advisoryKey(this.settings.schema));
      return true;
    } catch (error) {
      const state = sqlState(error);
      if (state === '42883' || state === '0A000') return false; // undefined_function, feature_not_supported
      throw error;
    }
  }

  /** Fails clearly when a table created for another schema lacks columns (there are no migrations). */
  private async checkColumns(client: pg.PoolClient, table: TableDescriptor): Promise<void> {
    const result = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2`,
      [this.settings.schema ?? null, table.table],
    );
    const present = new Set(result.rows.map((r) => r.column_name));
    const missing = expectedColumns(table).filter((c) => !present.has(c));
    if (missing.length > 0) {
      throw new Error(
        `PostgreSQL table ${table.table} exists but lacks column(s) ${missing.join(', ')}; ` +
          `it was created for another schema; run entity-gen generate to write the migration that ` +
          `brings it up to date and start the service with its migrations (docs/migrations.md)`,
      );
    }
  }

  /** Position of the first record whose key exists or repeats an earlier one (SQLite reports the same). */
  private async duplicateIndex(
    state: TableState,
    records: readonly StoredFields[],
  ): Promise<number | undefined> {
    const keyColumns = state.keyIndexes.map((i) => state.columns[i]!);
    const arrays = keyColumns.map((c) =>
      records.map((r) => toText(state.descriptor.table, c, r[c.name])),
    );
    const result = await this.run({
      name: statementName(state.existing),
      text: state.existing,
      values: arrays,
      rowMode: 'array',
    });
    const existing = new Set(
      (result.rows as Row[]).map((row) =>
        JSON.stringify(row.map((v, i) => normalizeKey(keyColumns[i]!.kind, v))),
      ),
    );
    const seen = new Set<string>();
    for (let i = 0; i < records.length; i++) {
      const key = JSON.stringify(
        keyColumns.map((c) => normalizeKey(c.kind, valueOf(c, records[i]!))),
      );
      if (seen.has(key) || existing.has(key)) return i;
      seen.add(key);
    }
    return undefined;
  }

  private prepareTable(descriptor: TableDescriptor): TableState {
    const schema = this.settings.schema;
    const tableSql = qualify(schema, descriptor.table);
    const columns = descriptor.columns;
    const keyIndexes = descriptor.key.map((name) => columns.findIndex((c) => c.name === name));
    const names = columns.map((c) => quoteIdent(c.name));
    const version = quoteIdent(VERSION_COLUMN);
    const created = quoteIdent(CREATED_COLUMN);
    const updated = quoteIdent(UPDATED_COLUMN);
    const select = [...names, version, created, updated].join(', ');
    const bareTable = quoteIdent(descriptor.table);
    const listSelect = [...names, version, created, updated]
      .map((c) => `${bareTable}.${c}`)
      .join(', ');
    const n = columns.length;
    const keyWhere = (first: number): string =>
      descriptor.key.map((k, i) => `${quoteIdent(k)} = $${first + i}`).join(' AND ');
    const touch = (column: string, source: string, entity: string, now: string): string =>
      `INSERT INTO ${this.activityTable} ("entity", "${column}") SELECT ${entity}::TEXT, ${now}::BIGINT FROM ${source}
  ON CONFLICT ("entity") DO UPDATE SET "${column}" =
    GREATEST(COALESCE(${this.activityTable}."${column}", EXCLUDED."${column}"), EXCLUDED."${column}")`;

    const get = `SELECT ${select} FROM ${tableSql} WHERE ${keyWhere(1)}`;

    const events = this.events;
    /** The event CTEs after `"_eg_touch"`, their arrays from parameter `$first` on. */
    const appendAfterTouch = (first: number, entity: string, now: string): string =>
      this.outbox.appendCtes(
        { ids: `$${first}`, ops: `$${first + 1}`, records: `$${first + 2}`, entity, now },
        '"_eg_touch"',
      );

    // $1…$n: one TEXT[] per column; $n+1: entity; $n+2: now; with events, $n+3…$n+5 their arrays.
    const input = columns.map((_, i) => `"_${i + 1}"`);
    const insertTouch = touch(
      'last_create_ms',
      `(SELECT count(*) AS "n" FROM "_eg_rows") AS "_eg_count" WHERE "_eg_count"."n" > 0`,
      `$${n + 1}`,
      `$${n + 2}`,
    );
    const insert = `WITH "_eg_rows" AS (
  INSERT INTO ${tableSql} (${[...names, created, updated, version].join(', ')})
  SELECT ${columns.map((c, i) => `"_eg_input".${input[i]}::${castType(c.kind)}`).join(', ')}, $${n + 2}::BIGINT, $${n + 2}::BIGINT, 1
    FROM unnest(${columns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${input.join(', ')})
  RETURNING 1
)${
      events
        ? `, "_eg_touch" AS (
  ${insertTouch}
  RETURNING 1
), ${appendAfterTouch(n + 3, `$${n + 1}`, `$${n + 2}`)}
SELECT min("seq") FROM "_eg_events"`
        : `
${insertTouch}`
    }`;

    // $1…$n: fields; $n+1: now; then the key; then the expected version; then the entity; with
    // events, their arrays.
    const k = descriptor.key.length;
    const update = `WITH "_eg_updated" AS (
  UPDATE ${tableSql} SET ${names.map((c, i) => `${c} = $${i + 1}`).join(', ')}, ${updated} = $${n + 1}, ${version} = ${version} + 1
   WHERE ${keyWhere(n + 2)} AND ${version} = $${n + 2 + k}
  RETURNING ${version}
), "_eg_touch" AS (
  ${touch('last_update_ms', '"_eg_updated"', `$${n + 3 + k}`, `$${n + 1}`)}
  RETURNING 1
)${
      events
        ? `, ${appendAfterTouch(n + 4 + k, `$${n + 3 + k}`, `$${n + 1}`)}
SELECT ${version}, (SELECT min("seq") FROM "_eg_events") FROM "_eg_updated"`
        : `
SELECT ${version} FROM "_eg_updated"`
    }`;
    const lockVersion = `SELECT ${select} FROM ${tableSql} WHERE ${keyWhere(1)} AND ${version} = $${k + 1} FOR UPDATE`;

    // $1…$k: the key; [$k+1: expected version]; then entity and now.
    const remove = (withVersion: boolean): string => {
      const next = k + 1 + (withVersion ? 1 : 0);
      return `WITH "_eg_deleted" AS (
  DELETE FROM ${tableSql} WHERE ${keyWhere(1)}${withVersion ? ` AND ${version} = $${k + 1}` : ''}
  RETURNING ${select}
), "_eg_touch" AS (
  ${touch('last_delete_ms', '"_eg_deleted"', `$${next}`, `$${next + 1}`)}
  RETURNING 1
)
SELECT ${select} FROM "_eg_deleted"`;
    };

    const keyColumns = keyIndexes.map((i) => columns[i]!);
    const existing = `SELECT ${keyColumns.map((c) => `"_eg_t".${quoteIdent(c.name)}`).join(', ')}
  FROM ${tableSql} AS "_eg_t"
  JOIN unnest(${keyColumns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${keyColumns
    .map((_, i) => `"_${i + 1}"`)
    .join(', ')})
    ON ${keyColumns.map((c, i) => `"_eg_t".${quoteIdent(c.name)} = "_eg_input"."_${i + 1}"::${castType(c.kind)}`).join(' AND ')}`;

    return {
      descriptor,
      tableSql,
      columns,
      keyIndexes,
      dialect: postgresDialect(descriptor),
      listSelect,
      get,
      insert,
      update,
      delete: remove(false),
      deleteVersion: remove(true),
      existing,
      lockVersion,
      drafter: events ? new ChangeDrafter(descriptor) : undefined,
    };
  }
}

// -------------------------------------------------------------------------------------------------

/** True for a complete settings object (as returned by `parsePostgresUrl`). */
function isSettings(config: PostgresSettings | PostgresDriverOptions): config is PostgresSettings {
  const required: (keyof PostgresSettings)[] = [
    'poolMax',
    'statementTimeoutMs',
    'connectTimeoutMs',
    'idleTimeoutMs',
    'sslMode',
    'ssl',
    'applicationName',
    'channelBinding',
  ];
  return required.every((key) => key in config) && !('url' in config);
}

/** Statement names are derived from the text, so a name never meets two different texts. */
const names = new Map<string, string>();
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `eg_${shortHash(text, 24)}`;
    if (names.size > 10_000) names.clear();
    names.set(text, name);
  }
  return name;
}

function advisoryKey(schema: string | undefined): [number, number] {
  // First half: "EGen" as a 32-bit integer; second half: hash of the schema (or the default).
  const hash = Number.parseInt(shortHash(`schema:${schema ?? ''}`, 8), 16) | 0;
  return [0x4547656e, hash];
}

/** DDL statement; "already exists" from a concurrent creator (without advisory locks) is fine. */
async function ddl(client: pg.PoolClient, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (error) {
    const state = sqlState(error);
    // unique_violation on the catalog, duplicate_table / _object / _schema
    if (state === '23505' || state === '42P07' || state === '42710' || state === '42P06') {
      await client.query(sql);
      return;
    }
    throw error;
  }
}

/**
 * Replaces the unqualified table of the shared builder's `FROM` with the schema-qualified one;
 * column references stay `"table"."column"`, which PostgreSQL resolves against the FROM item.
 */
function qualifyFrom(sql: string, head: string, table: string, tableSql: string): string {
  const bare = `${head} FROM ${quoteIdent(table)}`;
  if (!sql.startsWith(bare)) {
    throw new Error(`PostgreSQL driver: unexpected list SQL shape: ${sql.slice(0, 120)}`);
  }
  if (tableSql === quoteIdent(table)) return sql;
  return `${head} FROM ${tableSql}${sql.slice(bare.length)}`;
}

function checkTime(now: number): void {
  if (!Number.isSafeInteger(now))
    throw new TypeError(`Write time must be integer milliseconds, got ${now}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function keyParams(state: TableState, key: KeyValues): unknown[] {
  if (key.length !== state.keyIndexes.length) {
    throw new Error(
      `Table ${state.descriptor.table}: expected ${state.keyIndexes.length} key values, got ${key.length}`,
    );
  }
  return state.keyIndexes.map((index, i) =>
    toParam(state.descriptor.table, state.columns[index]!, key[i]),
  );
}

/** A key value as compared in JS: numbers for BIGINT, booleans, everything else as text. */
function normalizeKey(kind: ColumnKind, value: unknown): unknown {
  if (kind === 'integer') return Number(value);
  if (kind === 'boolean') return value === true || value === 'true';
  return String(value);
}

function keyString(state: TableState, record: StoredFields): string {
  return JSON.stringify(
    state.keyIndexes.map((i) => {
      const column = state.columns[i]!;
      return normalizeKey(column.kind, valueOf(column, record));
    }),
  );
}

/** What a record holds in a column: its field, or the column's fixed value. */
function valueOf(column: ColumnDescriptor, record: StoredFields): unknown {
  return column.fixed ?? record[column.name];
}

/** A field value as a bound parameter (pg sends it as text; the statement gives its type). */
function toParam(table: string, column: ColumnDescriptor, value: unknown): unknown {
  return toText(table, column, value);
}

/** A field value as the text PostgreSQL parses for the column's type, or NULL. */
function toText(table: string, column: ColumnDescriptor, value: unknown): string | null {
  if (column.fixed !== undefined) return column.fixed;
  if (value === undefined || value === null) return null;
  switch (column.kind) {
    case 'json':
      return JSON.stringify(value);
    case 'boolean':
      if (typeof value !== 'boolean') {
        throw new TypeError(`${table}.${column.name}: expected a boolean, got ${typeof value}`);
      }
      return value ? 'true' : 'false';
    case 'integer':
    case 'double':
      if (typeof value === 'number' && !Number.isFinite(value)) {
        throw new TypeError(`${table}.${column.name}: expected a finite number, got ${value}`);
      }
      return String(value);
    default:
      return typeof value === 'string' ? value : String(value);
  }
}

function toStored(state: TableState, row: Row): StoredRecord {
  const { columns } = state;
  const record: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const value = row[i];
    if (value === null || value === undefined || columns[i]!.fixed !== undefined) continue;
    const name = columns[i]!.name;
    if (name === '__proto__') {
      Object.defineProperty(record, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      record[name] = value;
    }
  }
  const n = columns.length;
  return {
    record,
    version: Number(row[n]),
    createdAt: Number(row[n + 1]),
    updatedAt: Number(row[n + 2]),
  };
}
