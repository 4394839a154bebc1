/**
 * `PostgresDriver`: the storage driver on a `pg` connection pool. The class ties the parts
 * together: options.ts resolves its settings, pool.ts runs statements on pooled connections,
 * setup.ts creates tables and runs migrations, statements.ts writes each table's statements,
 * values.ts and bulk-insert.ts convert values, outbox.ts and notifications.ts carry the change
 * events, errors.ts maps PostgreSQL errors.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
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
  RecordDelete,
  RecordUpdate,
  OpenOptions,
  ReplacedRecord,
  ReplaceOptions,
  StorageDriver,
  StoredFields,
  StoredRecord,
  TableDescriptor,
  UpdateResult,
  WriteOptions,
} from '../driver.js';
import { historyEntities, historyId } from '../history.js';
import { PostgresHistory } from './history.js';
import {
  ChangeDrafter,
  ChangeListeners,
  committedChanges,
  storedOp,
  type ChangeDraft,
} from '../events/change.js';
import { ReferenceGraph } from '../references.js';
import { checkDeletionTime } from '../soft-delete.js';
import { DuplicateKeyError, StorageUnavailableError } from '../errors.js';
import { buildCountSql, buildListSql, type BuiltSql } from '../sql/query.js';
import { firstDuplicate, insertArrays, keyArrays } from './bulk-insert.js';
import { sqlState, translateError, uniqueViolation } from './errors.js';
import { ChangeAnnouncer, ChangeListener } from './notifications.js';
import {
  describeSettings,
  resolveDriverOptions,
  type PostgresDriverOptions,
  type PostgresSettings,
} from './options.js';
import { PostgresOutbox, toBounds, toChange } from './outbox.js';
import { inSavepoint, inTransaction, poolConfigOf, runStatement, withClient } from './pool.js';
import { OutboxRelay } from './relay.js';
import { ReplicaRouter, replicaSettingsFromEnv } from './replicas.js';
import { directClientConfig, listenSettingsFromEnv, poolerConfig } from './topology.js';
import {
  ACTIVITY_TABLE,
  SECRETS_TABLE,
  checkColumnNames,
  qualify,
  sequenceNameOf,
} from './schema.js';
import { setUpDatabase } from './setup.js';
import { PostgresReferences, type CascadeDrafts } from './references.js';
import {
  foldActivitySql,
  prepareTable,
  qualifyFrom,
  statementName,
  type TableState,
} from './statements.js';
import {
  checkTime,
  keyParams,
  keyString,
  normalizeKey,
  toParam,
  toStored,
  toText,
  type Row,
} from './values.js';

export type { PostgresDriverOptions } from './options.js';

/**
 * From this many records on, a list insert numbers its change events in its own statement, under
 * the counter's lock, instead of queueing them for a relay (outbox.ts): a big list then spares the
 * database half its event work, and only other big lists and relays wait for its commit.
 */
export const NUMBERED_INSERT = 100;

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
  /** The statements of writes inside `transaction` (statements.ts, `TRANSACTION_ACTIVITY`). */
  private readonly transactionTables = new Map<string, TableState>();
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
  /** Numbers queued changes and resolves this instance's own (relay.ts). */
  private readonly relay: OutboxRelay;
  /** The direct connection's settings when `DATABASE_URL` is a transaction pooler (topology.ts). */
  private readonly direct: PostgresSettings | undefined;
  /** Routes reads to the replicas of `DATABASE_READ_URL` (replicas.ts). */
  readonly router: ReplicaRouter | undefined;
  /** Whether writes answer with read-after tokens and reads honour them (read replicas). */
  readonly readAfter: boolean;
  /** The integrity of references (SPEC §11), when some table has references that keep it. */
  private references: PostgresReferences | undefined;
  /** The transaction (`transaction`) whose asynchronous context a call runs in, if any. */
  private readonly scope = new AsyncLocalStorage<OpenTransaction>();
  /** Appends a transaction's held-back change events of one entity, numbered at once. */
  private readonly numberedSql: string;
  /** Folds a transaction's own `_eg_activity` rows into its entities' rows before the commit. */
  private foldSql = '';
  /** The versions kept of `history` tables (SPEC §13). */
  private kept: PostgresHistory = new PostgresHistory(undefined, new Set());

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
    const { settings, options } = resolveDriverOptions(config, extra);
    this.settings = settings;
    const env = options.env ?? {};
    // DATABASE_LISTEN_URL: DATABASE_URL is a pooler in transaction mode (topology.ts).
    this.direct = listenSettingsFromEnv(env, settings);
    const poolConfig = poolConfigOf(settings, options.pool);
    this.pool = new pg.Pool(this.direct === undefined ? poolConfig : poolerConfig(poolConfig));
    if (this.direct === undefined) {
      // The LISTEN connection is made like the pooled ones, without a statement timeout (it waits).
      const clientConfig: pg.ClientConfig = { ...poolConfig };
      delete clientConfig.statement_timeout;
      delete clientConfig.query_timeout;
      this.clientConfig = clientConfig;
    } else {
      this.clientConfig = directClientConfig(this.direct);
    }
    const replicas = replicaSettingsFromEnv(env);
    this.router =
      replicas === undefined
        ? undefined
        : new ReplicaRouter(this.pool, replicas, settings, env, this.direct !== undefined);
    this.readAfter = this.router !== undefined;
    // An idle client whose connection breaks emits 'error' on the pool; without a listener that
    // would crash the process. The pool has already discarded the client.
    const onIdleError = options.onIdleError;
    this.pool.on('error', (error) => {
      onIdleError?.(error);
    });
    this.activityTable = qualify(settings.schema, ACTIVITY_TABLE);
    this.activitySql = `SELECT "entity", "last_create_ms", "last_update_ms", "last_delete_ms" FROM ${this.activityTable} WHERE position('#' IN "entity") = 0`;
    this.outbox = new PostgresOutbox(settings.schema);
    const outbox = this.outbox;
    this.numberedSql = `WITH ${outbox.numberedCtes({ ids: '$1', ops: '$2', records: '$3', entity: '$4', now: '$5' })}
${PostgresOutbox.FIRST_SEQ}`;
    this.relay = new OutboxRelay(this.pool, outbox, (own, lastSeq) => {
      this.listeners.emit(own);
      if (lastSeq !== undefined) this.announcer?.announce(lastSeq);
    });
    this.changes = {
      read: async (after, limit) => {
        this.checkOpen();
        // Changes an instance queued but did not relay (it died in between) are numbered here.
        if (this.events) await this.relay.sweep();
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
    const setUp = async (client: pg.PoolClient): Promise<void> => {
      ({ applied, channel } = await setUpDatabase(client, {
        schema: this.settings.schema,
        outbox: this.outbox,
        tables,
        migrations: options.migrations,
      }));
    };
    if (this.direct === undefined) await this.withClient(setUp);
    else await this.onDirectConnection(setUp);
    await this.router?.start();
    this.events = options.events !== false;
    this.kept = new PostgresHistory(this.settings.schema, historyEntities(tables));
    const target = {
      schema: this.settings.schema,
      activityTable: this.activityTable,
      outbox: this.outbox,
      events: this.events,
      history: this.kept,
    };
    for (const table of tables) {
      this.tables.set(table.table, prepareTable(table, target));
      this.transactionTables.set(
        table.table,
        prepareTable(table, { ...target, inTransaction: true }),
      );
    }
    this.foldSql = foldActivitySql(this.activityTable);
    const graph = new ReferenceGraph(tables);
    this.references = graph.empty
      ? undefined
      : new PostgresReferences(
          graph,
          (descriptor) => this.state(descriptor),
          this.activityTable,
          this.outbox,
        );
    if (channel !== undefined && this.announcer === undefined) {
      this.announcer = new ChangeAnnouncer(this.pool, channel);
      this.listener = new ChangeListener(this.clientConfig, channel, this.announcer.token, () =>
        this.listeners.emit([]),
      );
      if (this.listeners.size > 0) this.listener.start();
    }
    if (applied.length > 0) options.onMigrationsApplied?.(applied);
  }

  async get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    const values = keyParams(state, key);
    const result = await this.read({
      name: statementName(state.get),
      text: state.get,
      values,
      rowMode: 'array',
    });
    const row = result.rows[0] as Row | undefined;
    return row === undefined ? undefined : toStored(state, row);
  }

  async getMany(
    table: TableDescriptor,
    keys: readonly KeyValues[],
  ): Promise<(StoredRecord | undefined)[]> {
    const state = this.state(table);
    const keyColumns = state.keyIndexes.map((index) => state.columns[index]!);
    // One statement for every key (text and integer keys: PostgreSQL's equality is JavaScript's).
    if (keys.length < 2 || keyColumns.some((c) => c.kind !== 'text' && c.kind !== 'integer')) {
      const found: (StoredRecord | undefined)[] = [];
      for (const key of keys) found.push(await this.get(table, key));
      return found;
    }
    const arrays: unknown[][] = keyColumns.map(() => []);
    const wanted: string[] = [];
    for (const key of keys) {
      const params = keyParams(state, key);
      for (let i = 0; i < params.length; i++) arrays[i]!.push(params[i]);
      wanted.push(JSON.stringify(keyColumns.map((c, i) => normalizeKey(c.kind, key[i]))));
    }
    const result = await this.read({
      name: statementName(state.getMany),
      text: state.getMany,
      values: arrays,
      rowMode: 'array',
    });
    const rows = new Map<string, Row>();
    for (const row of result.rows as Row[]) {
      const key = state.keyIndexes.map((index, i) => normalizeKey(keyColumns[i]!.kind, row[index]));
      rows.set(JSON.stringify(key), row);
    }
    return wanted.map((key) => {
      const row = rows.get(key);
      return row === undefined ? undefined : toStored(state, row);
    });
  }

  async insert(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
    options: WriteOptions = {},
  ): Promise<void> {
    const state = this.state(table);
    checkTime(now);
    if (records.length === 0) return;
    const arrays = insertArrays(state, records);
    const drafter = state.drafter;
    let drafts = drafter === undefined ? [] : records.map((r) => drafter.draft('created', r));
    // A long list numbers its changes in its own statement (outbox.ts, `numberedCtes`).
    const numbered = (list: readonly ChangeDraft[]): boolean =>
      drafter !== undefined && list.length >= NUMBERED_INSERT;
    const queryOf = (list: readonly ChangeDraft[]): pg.QueryArrayConfig => {
      const text = numbered(list) ? state.insertNumbered : state.insert;
      return {
        name: statementName(text),
        text,
        values: [
          ...arrays,
          state.descriptor.entity,
          now,
          ...(drafter === undefined ? [] : PostgresOutbox.params(list)),
        ],
        rowMode: 'array',
      };
    };
    const references = this.references;
    const keep = this.keeps(table);
    try {
      let first: Row | undefined;
      if (references?.checks(table) === true || keep) {
        // The rows first (a record may name itself or another of the list), then the references
        // they hold, locked until the commit; then the versions kept.
        first = await this.atomically(async (client) => {
          const checks = references?.checks(table) === true;
          const found = new Map<string, Set<string>>();
          if (checks) await references?.missing(client, table, records, found);
          // The versions first, so the events carry them; a failed insert rolls them back.
          if (keep) {
            const made =
              drafter === undefined
                ? records.map((r) => state.recorder.draft('created', r))
                : drafts;
            const versioned = await this.kept.append(client, made, now, options.by ?? null);
            if (drafter !== undefined) drafts = versioned;
          }
          // In a transaction the events are held back for its end (`appendNow`).
          drafts = this.appendNow(drafts, now);
          const result = await client.query(queryOf(drafts));
          if (checks) {
            const missing = await references?.missing(client, table, records, found);
            if (missing !== undefined) throw missing;
          }
          return result.rows[0] as Row | undefined;
        });
      } else {
        drafts = this.appendNow(drafts, now);
        first = (await this.run(queryOf(drafts))).rows[0] as Row | undefined;
      }
      if (numbered(drafts)) this.emitNumbered(drafts, first, now);
      else await this.settle(drafts, first, now);
      await this.wrote();
    } catch (error) {
      if (sqlState(error) !== '23505') throw error;
      const unique = uniqueViolation(error, table, records.length === 1 ? 0 : undefined);
      if (unique !== undefined) throw unique;
      const index = await this.duplicateIndex(state, records).catch(() => undefined);
      throw new DuplicateKeyError(state.descriptor.table, index, { cause: error });
    }
  }

  async nextSequence(table: TableDescriptor, count: number): Promise<number[]> {
    if (table.sequence === undefined) throw new Error(`Table ${table.table} has no sequence`);
    if (count <= 0) return [];
    const sequence = qualify(this.settings.schema, sequenceNameOf(table));
    const result = await this.run({
      text: `SELECT nextval($1::regclass)::TEXT FROM generate_series(1, $2)`,
      values: [sequence, count],
      rowMode: 'array',
    });
    // Each value is handed out once; sorted, the list holds them in increasing order.
    return (result.rows as string[][]).map((row) => Number(row[0])).sort((a, b) => a - b);
  }

  async update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
    options: WriteOptions = {},
  ): Promise<UpdateResult> {
    const state = this.state(table);
    checkTime(now);
    const by = options.by ?? null;
    const keep = this.keeps(table);
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
    const references = this.references;
    if (references !== undefined) {
      const renames = (drafter ?? new ChangeDrafter(table)).renames(key, record);
      if (references.checks(table) || (renames && references.referenced(table))) {
        const change = { key, record, expectedVersion, renames, by };
        return await this.updateWithReferences(references, state, change, now, query);
      }
    }
    try {
      let row: Row | undefined;
      let drafts: ChangeDraft[] = [];
      if ((drafter !== undefined || keep) && state.recorder.renames(key, record)) {
        // The `deleted` event of a rename holds the record as it was: read (and lock) it first,
        // in the same transaction.
        row = await this.atomically(async (client) => {
          const old = await client.query({
            name: statementName(state.lockVersion),
            text: state.lockVersion,
            values: [...keys, expectedVersion],
            rowMode: 'array',
          });
          const previous = old.rows[0] as Row | undefined;
          if (previous === undefined) return undefined;
          let made: ChangeDraft[] = state.recorder.rename(toStored(state, previous).record, record);
          // The versions first, so the events carry them (the row is locked: it will be written).
          if (keep) made = await this.kept.append(client, made, now, by);
          drafts = drafter === undefined ? [] : this.outboxNow(made);
          const written = (await client.query(query(drafts))).rows[0] as Row | undefined;
          if (written === undefined && keep) throw new NotWritten();
          if (written !== undefined && drafter !== undefined) this.appendNow(made, now);
          return written;
        });
      } else if (keep && state.updateKept !== undefined) {
        // One statement: the update, then its version kept and its event (none in an open
        // transaction, which appends its events at its end) only if the update happened.
        const made = state.recorder.draft('updated', record);
        const appends = drafter !== undefined && this.scope.getStore() === undefined;
        const text = appends ? state.updateKept.events : state.updateKept.quiet;
        row = (
          await this.run({
            name: statementName(text),
            text,
            values: [...values, made.id, storedOp(made), by, made.record],
            rowMode: 'array',
          })
        ).rows[0] as Row | undefined;
        if (row !== undefined && drafter !== undefined) {
          const versioned = [{ ...made, version: Number(row[2]) }];
          drafts = this.outboxNow(versioned);
          this.appendNow(versioned, now);
        }
      } else {
        const made = drafter === undefined ? [] : [drafter.draft('updated', record)];
        drafts = this.outboxNow(made);
        row = (await this.run(query(drafts))).rows[0] as Row | undefined;
        if (row !== undefined) this.appendNow(made, now);
      }
      if (row === undefined) return { status: 'conflict' };
      await this.settle(drafts, row.slice(1), now);
      await this.wrote();
      return { status: 'updated', version: Number(row[0]) };
    } catch (error) {
      if (error instanceof NotWritten) return { status: 'conflict' };
      if (sqlState(error) === '23505') return throwUnique(error, table) ?? { status: 'duplicate' };
      throw error;
    }
  }

  /**
   * `update` of several records in one statement (`UPDATE … FROM unnest(…)`), all or none, in an
   * open transaction (outside one, in a transaction of its own): an upsert of a list updates a
   * window of records in one round trip instead of one each. Resolves to `undefined`, having
   * written nothing, when one record was not updated (its version changed) or breaks a unique
   * rule or names a missing record — and also for the writes this statement does not make, which
   * the caller then makes one by one as `update` does: renames, and tables that keep a history.
   */
  async updateMany(
    table: TableDescriptor,
    updates: readonly RecordUpdate[],
    now: number,
    options: WriteOptions = {},
  ): Promise<number[] | undefined> {
    if (this.scope.getStore() === undefined) {
      this.checkOpen();
      return await this.transaction(() => this.updateMany(table, updates, now, options));
    }
    const state = this.state(table);
    checkTime(now);
    if (updates.length === 0) return [];
    const recorder = state.recorder;
    if (this.keeps(table) || updates.some((update) => recorder.renames(update.key, update.record)))
      return undefined;
    const references = this.references?.checks(table) === true ? this.references : undefined;
    const records = updates.map((update) => update.record);
    const columnArrays = state.columns.map((column) =>
      records.map((record) => toText(table.table, column, record[column.name])),
    );
    const keys = state.keyIndexes.map((index, i) =>
      updates.map((update) => toText(table.table, state.columns[index]!, update.key[i])),
    );
    const versions = updates.map((update) => update.expectedVersion);
    const text = state.updateMany;
    try {
      await this.atomically(async (client) => {
        // The records they name are locked first, as by `insert` (and checked once written,
        // for names of records of the list itself).
        const found = new Map<string, Set<string>>();
        if (references !== undefined) await references.missing(client, table, records, found);
        const result = await client.query({
          name: statementName(text),
          text,
          values: [...columnArrays, ...keys, versions, table.entity, now],
          rowMode: 'array',
        });
        // One record not at its expected version: the savepoint rolls the others back.
        if (Number((result.rows[0] as Row | undefined)?.[0]) !== updates.length)
          throw new NotWritten();
        // A missing record: one by one, the caller learns which record names it.
        if ((await references?.missing(client, table, records, found)) !== undefined)
          throw new NotWritten();
      });
    } catch (error) {
      if (error instanceof NotWritten) return undefined;
      if (sqlState(error) === '23505' && uniqueViolation(error, table, undefined) !== undefined)
        return undefined;
      throw error;
    }
    if (state.drafter !== undefined)
      this.appendNow(
        records.map((record) => state.drafter!.draft('updated', record)),
        now,
      );
    return updates.map((update) => update.expectedVersion + 1);
  }

  /**
   * The upsert of a list in replace mode in one statement (`INSERT … ON CONFLICT (key) DO UPDATE
   * … WHERE` a compared column differs), in an open transaction (outside one, in a transaction of
   * its own): no read of the stored records first, and one round trip for creates and updates
   * alike. The records left unchanged are read afterwards, for the answer. Resolves to
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
    // Declined before any transaction begins.
    if (this.keeps(table) || table.softDelete === true) return undefined;
    if (this.scope.getStore() === undefined) {
      this.checkOpen();
      return await this.transaction(() => this.replaceMany(table, records, now, options));
    }
    const state = this.state(table);
    checkTime(now);
    if (records.length === 0) return [];
    const keep = options.keep ?? [];
    const text = state.replaceMany(keep, options.stamped ?? []);
    const keptColumns = state.columns.filter((c) => keep.includes(c.name));
    const references = this.references?.checks(table) === true ? this.references : undefined;
    const keyOf = rowKeys(state);
    const wanted = new Map<unknown, number>();
    for (let i = 0; i < records.length; i++) wanted.set(keyOf.record(records[i]!), i);
    if (wanted.size !== records.length) return undefined; // a key given twice
    const results = new Array<ReplacedRecord | undefined>(records.length);
    try {
      await this.atomically(async (client) => {
        // The records they name are locked first, as by `insert` (and checked once written, for
        // names of records of the list itself).
        const found = new Map<string, Set<string>>();
        if (references !== undefined) await references.missing(client, table, records, found);
        const written = await client.query({
          name: statementName(text),
          text,
          values: [...insertArrays(state, records), table.entity, now],
          rowMode: 'array',
        });
        const k = state.keyIndexes.length;
        for (const row of written.rows as Row[]) {
          const index = wanted.get(keyOf.row(row))!;
          const record = records[index]!;
          if (row[row.length - 1] === true) {
            results[index] = {
              fate: 'created',
              record,
              version: 1,
              createdAt: now,
              updatedAt: now,
            };
            continue;
          }
          // Updated: the fields it keeps are as stored.
          let stored: Record<string, unknown> | undefined;
          for (let c = 0; c < keptColumns.length; c++) {
            const value = row[k + c];
            stored ??= { ...record };
            if (value === null || value === undefined) delete stored[keptColumns[c]!.name];
            else stored[keptColumns[c]!.name] = value;
          }
          results[index] = {
            fate: 'updated',
            record: stored ?? record,
            version: Number(row[row.length - 3]),
            createdAt: Number(row[row.length - 2]),
            updatedAt: now,
          };
        }
        // A missing record: one by one, the caller learns which record names it.
        if ((await references?.missing(client, table, records, found)) !== undefined)
          throw new NotWritten();
        // The others were left as stored: read for the answer.
        const unchanged = records.filter((_, i) => results[i] === undefined);
        if (unchanged.length === 0) return;
        const read = await client.query({
          name: statementName(state.getMany),
          text: state.getMany,
          values: keyArrays(state, unchanged),
          rowMode: 'array',
        });
        for (const row of read.rows as Row[]) {
          const index = wanted.get(keyOf.row(row, state.keyIndexes))!;
          results[index] = { fate: 'unchanged', ...toStored(state, row) };
        }
      });
    } catch (error) {
      if (error instanceof NotWritten) return undefined;
      if (sqlState(error) === '23505' && uniqueViolation(error, table, undefined) !== undefined)
        return undefined;
      throw error;
    }
    const drafter = state.drafter;
    const replaced = results.map((result, index) => {
      if (result === undefined)
        throw new Error(
          `PostgreSQL driver: record ${index} of replaceMany was neither written nor read`,
        );
      return result;
    });
    if (drafter !== undefined) {
      const drafts: ChangeDraft[] = [];
      for (const { fate, record } of replaced)
        if (fate !== 'unchanged') drafts.push(drafter.draft(fate, record));
      this.appendNow(drafts, now);
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
    checkTime(now);
    const softTable = table.softDelete === true;
    const purging = softTable && options.mode === 'purge';
    const values: unknown[] = keyParams(state, key);
    let text = purging ? state.purge : state.delete;
    if (expectedVersion !== undefined) {
      values.push(expectedVersion);
      text = purging ? state.purgeVersion : state.deleteVersion;
    }
    values.push(state.descriptor.entity, now);
    if (softTable && !purging) {
      checkDeletionTime(now);
      values.push(options.by ?? null);
    }
    const remove = { name: statementName(text), text, values, rowMode: 'array' as const };
    const drafter = state.drafter;
    const references = this.references;
    if (softTable) {
      const how: DeleteHow = {
        op: purging ? 'purged' : 'deleted',
        soft: !purging,
        by: options.by ?? null,
      };
      return await this.deleteWithReferences(references, state, remove, now, how);
    }
    if (references?.referenced(table) === true || this.keeps(table)) {
      const how: DeleteHow = { op: 'deleted', soft: false, by: options.by ?? null };
      return await this.deleteWithReferences(references, state, remove, now, how);
    }
    if (drafter === undefined) {
      const row = (await this.run(remove)).rows[0] as Row | undefined;
      if (row !== undefined) await this.wrote();
      return row === undefined ? undefined : toStored(state, row);
    }
    // The event holds the deleted record, known only once it is deleted: a transaction of two
    // statements.
    const outbox = this.outbox;
    const deleted = await this.atomically(async (client) => {
      const row = (await client.query(remove)).rows[0] as Row | undefined;
      if (row === undefined) return undefined;
      const stored = toStored(state, row);
      const drafts = this.appendNow([drafter.draft('deleted', stored.record)], now);
      const appended = await client.query({
        name: statementName(outbox.appendSql),
        text: outbox.appendSql,
        values: [...PostgresOutbox.params(drafts), state.descriptor.entity, now],
        rowMode: 'array',
      });
      return { stored, drafts, arrivals: appended.rows[0] as Row | undefined };
    });
    if (deleted === undefined) return undefined;
    await this.settle(deleted.drafts, deleted.arrivals, now);
    await this.wrote();
    return deleted.stored;
  }

  /**
   * `delete` of a list of records in one statement (`DELETE … USING unnest(…)`), all or none, in
   * an open transaction (outside one, in a transaction of its own). Tables whose deletes do more
   * than remove the row — soft deletes, a history, references that keep their integrity naming
   * it — are left to `delete`, one record at a time.
   */
  async deleteMany(
    table: TableDescriptor,
    deletes: readonly RecordDelete[],
    now: number,
  ): Promise<StoredRecord[] | undefined> {
    // Declined before any transaction begins.
    if (
      table.softDelete === true ||
      this.keeps(table) ||
      this.references?.referenced(table) === true
    )
      return undefined;
    if (this.scope.getStore() === undefined) {
      this.checkOpen();
      return await this.transaction(() => this.deleteMany(table, deletes, now));
    }
    const state = this.state(table);
    checkTime(now);
    if (deletes.length === 0) return [];
    const text = state.deleteMany;
    if (text === undefined) return undefined;
    const keys = state.keyIndexes.map((index, i) =>
      deletes.map((remove) => toText(table.table, state.columns[index]!, remove.key[i])),
    );
    const versions = deletes.map((remove) => remove.expectedVersion);
    let deleted: StoredRecord[];
    try {
      deleted = await this.atomically(async (client) => {
        const result = await client.query({
          name: statementName(text),
          text,
          values: [...keys, versions, table.entity, now],
          rowMode: 'array',
        });
        // One record gone or at another version: the savepoint brings the others back.
        if (result.rows.length !== deletes.length) throw new NotWritten();
        return (result.rows as Row[]).map((row) => toStored(state, row));
      });
    } catch (error) {
      if (error instanceof NotWritten) return undefined;
      throw error;
    }
    if (state.drafter !== undefined)
      this.appendNow(
        deleted.map((stored) => state.drafter!.draft('deleted', stored.record)),
        now,
      );
    return deleted;
  }

  /**
   * `update` of a table whose writes hold references or whose renames move them: one
   * transaction that writes the record, checks and locks what it names, and rewrites the
   * references to its old key (SPEC §11).
   */
  private async updateWithReferences(
    references: PostgresReferences,
    state: TableState,
    change: {
      readonly key: KeyValues;
      readonly record: StoredFields;
      readonly expectedVersion: number;
      readonly renames: boolean;
      readonly by: string | null;
    },
    now: number,
    query: (drafts: readonly ChangeDraft[]) => pg.QueryArrayConfig,
  ): Promise<UpdateResult> {
    const table = state.descriptor;
    const drafter = state.drafter;
    const { key, record, expectedVersion, renames } = change;
    try {
      const done = await this.atomically(async (client) => {
        let made: ChangeDraft[];
        if (renames) {
          // The `deleted` event of a rename holds the record as it was: read (and lock) it first.
          const old = await client.query({
            name: statementName(state.lockVersion),
            text: state.lockVersion,
            values: [...keyParams(state, key), expectedVersion],
            rowMode: 'array',
          });
          const previous = old.rows[0] as Row | undefined;
          if (previous === undefined) return undefined;
          made = state.recorder.rename(toStored(state, previous).record, record);
        } else {
          made = [state.recorder.draft('updated', record)];
        }
        const checks = references.checks(table);
        const found = new Map<string, Set<string>>();
        if (checks) await references.missing(client, table, [record], found);
        // The versions first, so the events carry them; rolled back when the write did not happen.
        const keep = this.keeps(table);
        if (keep) made = await this.kept.append(client, made, now, change.by);
        const drafts = drafter === undefined ? [] : this.outboxNow(made);
        const row = (await client.query(query(drafts))).rows[0] as Row | undefined;
        if (row === undefined) {
          if (keep) throw new NotWritten();
          return undefined;
        }
        if (drafter !== undefined) this.appendNow(made, now);
        if (checks) {
          const missing = await references.missing(client, table, [record], found);
          if (missing !== undefined) throw missing;
        }
        const cascaded: CascadeDrafts = new Map();
        if (renames) await references.afterRename(client, table, key, record, now, cascaded);
        if (this.kept.any) await this.kept.appendCascades(client, cascaded, now, change.by);
        const appended =
          drafter === undefined ? [] : await this.appendCascaded(references, client, cascaded, now);
        return { row, drafts, appended };
      });
      if (done === undefined) return { status: 'conflict' };
      await this.settle(done.drafts, done.row.slice(1), now);
      for (const { drafts, first } of done.appended) await this.settle(drafts, first, now);
      await this.wrote();
      return { status: 'updated', version: Number(done.row[0]) };
    } catch (error) {
      if (error instanceof NotWritten) return { status: 'conflict' };
      if (sqlState(error) === '23505') return throwUnique(error, table) ?? { status: 'duplicate' };
      throw error;
    }
  }

  /** `delete` of a record others may reference: the delete and its cascades in one transaction. */
  private async deleteWithReferences(
    references: PostgresReferences | undefined,
    state: TableState,
    remove: pg.QueryArrayConfig,
    now: number,
    how: DeleteHow = { op: 'deleted', soft: false, by: null },
  ): Promise<StoredRecord | undefined> {
    const drafter = state.drafter;
    const outbox = this.outbox;
    const deleted = await this.atomically(async (client) => {
      const row = (await client.query(remove)).rows[0] as Row | undefined;
      if (row === undefined) return undefined;
      const stored = toStored(state, row);
      const cascaded: CascadeDrafts = new Map();
      // A purge of a soft-deleted row: its references were acted on at the soft delete.
      const wasDeleted =
        how.op === 'purged' &&
        row[state.columns.length + 3] !== null &&
        row.length > state.columns.length + 3;
      if (references?.referenced(state.descriptor) === true && !wasDeleted)
        await references.afterDelete(
          client,
          state.descriptor,
          stored.record,
          now,
          how.by,
          cascaded,
        );
      let made = [state.recorder.draft(how.op, stored.record, how.soft)];
      if (this.kept.any) {
        made = await this.kept.append(client, made, now, how.by);
        await this.kept.appendCascades(client, cascaded, now, how.by);
      }
      if (drafter === undefined) return { stored, appended: [] };
      const drafts = this.appendNow(made, now);
      const own = await client.query({
        name: statementName(outbox.appendSql),
        text: outbox.appendSql,
        values: [...PostgresOutbox.params(drafts), state.descriptor.entity, now],
        rowMode: 'array',
      });
      const appended = [
        { drafts, first: own.rows[0] as Row | undefined },
        ...(references === undefined
          ? []
          : await this.appendCascaded(references, client, cascaded, now)),
      ];
      return { stored, appended };
    });
    if (deleted === undefined) return undefined;
    for (const { drafts, first } of deleted.appended) await this.settle(drafts, first, now);
    await this.wrote();
    return deleted.stored;
  }

  async history(
    table: TableDescriptor,
    key: KeyValues,
    limit: number,
    before?: number,
  ): Promise<HistoryEntry[]> {
    this.state(table);
    const result = await this.read(
      this.kept.page(table.entity, historyId(table, key), limit, before),
    );
    return PostgresHistory.entries(result.rows as unknown[][]);
  }

  async versionAt(
    table: TableDescriptor,
    key: KeyValues,
    time: number,
  ): Promise<HistoryEntry | undefined> {
    this.state(table);
    const result = await this.read(this.kept.at(table.entity, historyId(table, key), time));
    return PostgresHistory.entries(result.rows as unknown[][])[0];
  }

  async trimHistory(time: number): Promise<number> {
    this.checkOpen();
    const result = await this.run({ text: this.kept.sql.trim, values: [time] });
    return result.rowCount ?? 0;
  }

  async getDeleted(table: TableDescriptor, key: KeyValues): Promise<DeletedRecord | undefined> {
    const state = this.state(table);
    if (state.getDeleted === undefined) return undefined;
    const result = await this.run({
      name: statementName(state.getDeleted),
      text: state.getDeleted,
      values: keyParams(state, key),
      rowMode: 'array',
    });
    const row = result.rows[0] as Row | undefined;
    if (row === undefined) return undefined;
    const n = state.columns.length;
    return {
      ...toStored(state, row),
      deletedAt: Number(row[n + 3]),
      deletedBy: (row[n + 4] as string | null) ?? null,
    };
  }

  async restore(
    table: TableDescriptor,
    key: KeyValues,
    now: number,
    options: WriteOptions = {},
  ): Promise<StoredRecord | undefined> {
    const state = this.state(table);
    const text = state.restore;
    if (text === undefined) return undefined;
    checkTime(now);
    const drafter = state.drafter;
    const outbox = this.outbox;
    const references = this.references;
    const restored = await this.atomically(async (client) => {
      const row = (
        await client.query({
          name: statementName(text),
          text,
          values: [...keyParams(state, key), state.descriptor.entity, now],
          rowMode: 'array',
        })
      ).rows[0] as Row | undefined;
      if (row === undefined) return undefined;
      const stored = toStored(state, row);
      // What it names may have gone while it was deleted.
      if (references?.checks(table) === true) {
        const missing = await references.missing(client, table, [stored.record], new Map());
        if (missing !== undefined) throw missing;
      }
      let made = [state.recorder.draft('restored', stored.record)];
      if (this.keeps(table)) made = await this.kept.append(client, made, now, options.by ?? null);
      if (drafter === undefined) return { stored, drafts: [], first: undefined };
      const drafts = this.appendNow(made, now);
      if (drafts.length === 0) return { stored, drafts, first: undefined };
      const own = await client.query({
        name: statementName(outbox.appendSql),
        text: outbox.appendSql,
        values: [...PostgresOutbox.params(drafts), state.descriptor.entity, now],
        rowMode: 'array',
      });
      return { stored, drafts, first: own.rows[0] as Row | undefined };
    });
    if (restored === undefined) return undefined;
    if (restored.drafts.length > 0) await this.settle(restored.drafts, restored.first, now);
    await this.wrote();
    return restored.stored;
  }

  async list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]> {
    const state = this.state(table);
    const { sql, params } = this.listSql(table, query);
    const result = await this.read({ text: sql, values: params, rowMode: 'array' });
    return (result.rows as Row[]).map((row) => toStored(state, row));
  }

  async listCounted(table: TableDescriptor, query: ListQuery): Promise<CountedList> {
    const state = this.state(table);
    // Both FROMs come schema-qualified from the dialect.
    const built = buildListSql(state.dialect, table, query, state.listSelect, true);
    const result = await this.read({ text: built.sql, values: built.params, rowMode: 'array' });
    const rows = result.rows as Row[];
    const first = rows[0];
    // The count is the page's last column; an empty page (past the end) counts on its own.
    const count =
      first === undefined ? await this.count(table, query) : Number(first[first.length - 1]);
    return { rows: rows.map((row) => toStored(state, row)), count };
  }

  async count(table: TableDescriptor, query: CountQuery): Promise<number> {
    const state = this.state(table);
    const built = buildCountSql(state.dialect, table, query);
    const sql = qualifyFrom(built.sql, 'SELECT count(*)', table.table, state.tableSql);
    const result = await this.read({ text: sql, values: built.params, rowMode: 'array' });
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
    this.transactionTables.clear();
    this.relay.stop();
    await this.router?.close();
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

  /** Whether writes of `table` keep its versions. */
  private keeps(table: TableDescriptor): boolean {
    return this.kept.entities.has(table.entity);
  }

  /** The statements of `table`, those for writes inside a transaction when one is open. */
  private state(table: TableDescriptor): TableState {
    this.checkOpen();
    const tables = this.scope.getStore() === undefined ? this.tables : this.transactionTables;
    const state = tables.get(table.table);
    if (state === undefined)
      throw new Error(`PostgreSQL driver: table ${table.table} was not passed to open()`);
    return state;
  }

  /** Runs `fn` on a pooled client (pool.ts), unless the driver is closed. */
  private async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    return await withClient(this.pool, fn);
  }

  /**
   * Runs `fn` in a transaction, all of it again on serialization failures and deadlocks. Inside
   * an open `transaction`, `fn` runs on its connection in a savepoint of its own.
   */
  private async atomically<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    const open = this.scope.getStore();
    if (open === undefined) return await inTransaction(this.pool, fn);
    return await inSavepoint(open.client, () => fn(open.client));
  }

  /**
   * Runs `work` in one transaction on one pooled connection: every call of this driver made in
   * `work`'s asynchronous context runs on it (each write in a savepoint, so a refused write —
   * a duplicate key — leaves the transaction usable). The writes' change events are held back and
   * appended at the end, numbered at once under the counter's lock (outbox.ts, `numberedCtes`),
   * so the transaction's events get consecutive seqs in the order of its writes. The whole of
   * `work` runs again on a serialization failure or a deadlock.
   */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.scope.getStore() !== undefined) return await work();
    this.checkOpen();
    const done = await inTransaction(this.pool, async (client) => {
      const open: OpenTransaction = { client, events: [] };
      const result = await this.scope.run(open, work);
      await client.query({ name: statementName(this.foldSql), text: this.foldSql });
      const numbered: { drafts: ChangeDraft[]; first: number; now: number }[] = [];
      for (const { entity, drafts, now } of open.events) {
        if (drafts.length === 0) continue;
        const [ids, ops, records] = PostgresOutbox.params(drafts);
        const appended = await client.query({
          name: statementName(this.numberedSql),
          text: this.numberedSql,
          values: [ids, ops, records, entity, now],
          rowMode: 'array',
        });
        const first = (appended.rows[0] as Row | undefined)?.[0];
        if (first !== null && first !== undefined)
          numbered.push({ drafts, first: Number(first), now });
      }
      return { result, numbered };
    });
    let last: number | undefined;
    for (const { drafts, first, now } of done.numbered) {
      this.listeners.emit(committedChanges(drafts, first, now));
      last = first + drafts.length - 1;
    }
    if (last !== undefined) this.announcer?.announce(last);
    await this.router?.wrote();
    return done.result;
  }

  /**
   * The change events a write appends in its own statements: `drafts` outside a transaction; in
   * one, none — they are held back for its end (`transaction`).
   */
  private outboxNow(drafts: ChangeDraft[]): ChangeDraft[] {
    return this.scope.getStore() === undefined ? drafts : [];
  }

  /**
   * Holds `drafts` back for the end of the open transaction, if any, and returns what the write's
   * own statement appends now: `drafts` outside a transaction, none in one. A write whose statement
   * may not happen (a version check) sends `outboxNow(drafts)` and calls this once it happened.
   */
  private appendNow(drafts: ChangeDraft[], now: number): ChangeDraft[] {
    const open = this.scope.getStore();
    if (open === undefined || drafts.length === 0) return drafts;
    let start = 0;
    for (let i = 1; i <= drafts.length; i++) {
      if (i < drafts.length && drafts[i]!.entity === drafts[start]!.entity) continue;
      const last = open.events.at(-1);
      const part = drafts.slice(start, i);
      const name = drafts[start]!.entity;
      if (last !== undefined && last.entity === name && last.now === now) last.drafts.push(...part);
      else open.events.push({ entity: name, drafts: part, now });
      start = i;
    }
    return [];
  }

  /** Appends the change events of the cascades of a write (held back in an open transaction). */
  private async appendCascaded(
    references: PostgresReferences,
    client: pg.PoolClient,
    cascaded: CascadeDrafts,
    now: number,
  ): Promise<Awaited<ReturnType<PostgresReferences['append']>>> {
    if (this.scope.getStore() === undefined) return await references.append(client, cascaded, now);
    for (const drafts of cascaded.values()) this.appendNow(drafts, now);
    return [];
  }

  /** Tells the replica router of a write, unless the write is part of an open transaction. */
  private async wrote(): Promise<void> {
    if (this.scope.getStore() === undefined) await this.router?.wrote();
  }

  /** A read: on a replica when there are some (replicas.ts), else like `run`. */
  private async read(config: pg.QueryConfig | pg.QueryArrayConfig): Promise<pg.QueryResult> {
    this.checkOpen();
    const open = this.scope.getStore();
    if (open !== undefined) return await open.client.query(config as pg.QueryConfig);
    return this.router === undefined
      ? await runStatement(this.pool, config)
      : await this.router.read(config);
  }

  /** Runs `fn` on a new direct connection (`DATABASE_LISTEN_URL`), closed afterwards. */
  private async onDirectConnection(fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = new pg.Client(this.clientConfig);
    client.on('error', () => undefined);
    try {
      await client.connect();
      await fn(client as pg.PoolClient);
    } catch (error) {
      throw translateError(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * One statement, re-run on serialization failures and deadlocks; inside an open `transaction`,
   * on its connection in a savepoint of its own.
   */
  private async run(config: pg.QueryConfig | pg.QueryArrayConfig): Promise<pg.QueryResult> {
    this.checkOpen();
    const open = this.scope.getStore();
    if (open === undefined) return await runStatement(this.pool, config);
    return await inSavepoint(open.client, () => open.client.query(config as pg.QueryConfig));
  }

  /** Position of the first record whose key exists or repeats an earlier one (SQLite reports the same). */
  private async duplicateIndex(
    state: TableState,
    records: readonly StoredFields[],
  ): Promise<number | undefined> {
    const result = await this.run({
      name: statementName(state.existing),
      text: state.existing,
      values: keyArrays(state, records),
      rowMode: 'array',
    });
    return firstDuplicate(state, records, result.rows as Row[]);
  }

  /** Tells the watchers of `changes` what a numbered list insert committed: from seq `row[0]` on. */
  private emitNumbered(drafts: readonly ChangeDraft[], row: Row | undefined, now: number): void {
    const seq = row?.[0];
    if (drafts.length === 0 || seq === null || seq === undefined) return;
    this.listeners.emit(committedChanges(drafts, Number(seq), now));
    this.announcer?.announce(Number(seq) + drafts.length - 1);
  }

  /**
   * Has the changes `drafts` a write committed (their arrivals: `row[0]`) numbered, and tells the
   * watchers of `changes` of them with their seqs (relay.ts), before the write returns.
   */
  private async settle(
    drafts: readonly ChangeDraft[],
    row: Row | undefined,
    now: number,
  ): Promise<void> {
    const arrivals = row?.[0];
    if (drafts.length === 0 || typeof arrivals !== 'string') return;
    await this.relay.settle(drafts, arrivals, now);
  }
}

/** An open transaction (`PostgresDriver.transaction`): its connection and held-back events. */
interface OpenTransaction {
  readonly client: pg.PoolClient;
  /** The change events of its writes, in write order, in runs of one entity and time. */
  readonly events: {
    readonly entity: string;
    readonly drafts: ChangeDraft[];
    readonly now: number;
  }[];
}

/** What a delete does (SPEC §13): remove the row, mark it deleted, or purge it. */
interface DeleteHow {
  readonly op: 'deleted' | 'purged';
  readonly soft: boolean;
  /** The caller's subject, for the soft deletes of the cascade. */
  readonly by: string | null;
}

/** Throws the `UniqueViolationError` of an update that broke a unique index; undefined otherwise. */
function throwUnique(error: unknown, table: TableDescriptor): undefined {
  const unique = uniqueViolation(error, table, undefined);
  if (unique !== undefined) throw unique;
  return undefined;
}

/**
 * Thrown inside a write's transaction when the write did not happen (another writer changed the
 * record since it was read) after its history version was written: it rolls the version back.
 */
class NotWritten extends Error {}

/**
 * The key of a record, and of a row holding the key columns (at `positions`, by default first),
 * as one comparable value: the value itself for a key of one text column, else the JSON text of
 * the normalised values (`normalizeKey`).
 */
function rowKeys(state: TableState): {
  record: (record: StoredFields) => unknown;
  row: (row: Row, positions?: readonly number[]) => unknown;
} {
  const keyColumns = state.keyIndexes.map((index) => state.columns[index]!);
  if (
    keyColumns.length === 1 &&
    keyColumns[0]!.kind === 'text' &&
    keyColumns[0]!.fixed === undefined
  ) {
    const name = keyColumns[0]!.name;
    return {
      record: (record) => record[name],
      row: (row, positions) => row[positions?.[0] ?? 0],
    };
  }
  return {
    record: (record) => keyString(state, record),
    row: (row, positions) =>
      JSON.stringify(keyColumns.map((c, i) => normalizeKey(c.kind, row[positions?.[i] ?? i]))),
  };
}
