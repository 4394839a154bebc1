/**
 * The storage-driver interface. A driver stores the records of every entity of a service; the
 * generated code hands it a typed description of each entity's table and never writes SQL itself.
 */

/** How a column's values are stored; each driver maps a kind to its own SQL type. */
export type ColumnKind =
  'text' | 'integer' | 'double' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'json';

/** One top-level field of an entity, stored as one column. */
export interface ColumnDescriptor {
  /** Field name; also the column name. */
  readonly name: string;
  readonly kind: ColumnKind;
  /** The field's schema type, e.g. `DECIMAL` or `GEOHASH_LOCATION`. */
  readonly fieldType: string;
  readonly required: boolean;
  /** The schema asked for an index on this field. */
  readonly indexed: boolean;
  /**
   * A storage-only column that holds this same text in every row and is never part of a record:
   * the key column of a single-record entity that declares no key field. Drivers write this value
   * whatever the record holds and leave the column out of the records they read.
   */
  readonly fixed?: string;
}

/** One column of a composite index the schema declares (entity-level `indexes:`). */
export interface IndexColumnDescriptor {
  /** The field's column. */
  readonly column: string;
  readonly descending: boolean;
}

/** The generated, typed description of one entity's storage. */
export interface TableDescriptor {
  /** Entity name as written in the schema, e.g. `PRODUCT`. */
  readonly entity: string;
  /** SQL table name (lower case, unique per service). */
  readonly table: string;
  /** Every field in declared order, after the fixed key column if the entity has one. */
  readonly columns: readonly ColumnDescriptor[];
  /** Names of the key columns, in `lk` order. */
  readonly key: readonly string[];
  /** Joins the key values of a composite key into the record id (default `~`). */
  readonly keySeparator?: string;
  /**
   * The composite indexes the schema declares, each in declared column order; the drivers append
   * the key columns (see `indexes.ts`).
   */
  readonly indexes?: readonly (readonly IndexColumnDescriptor[])[];
}

/** A single key field's value. */
export type KeyValue = string | number | boolean;

/** The values of the key fields, in `lk` order. */
export type KeyValues = readonly KeyValue[];

/**
 * A record as the driver sees it: field name to canonical JSON value. Absent optional fields are
 * `undefined` or missing; drivers never store `undefined`.
 */
export type StoredFields = Readonly<Record<string, unknown>>;

/** A record read from storage together with its bookkeeping columns. */
export interface StoredRecord<TRecord = StoredFields> {
  readonly record: TRecord;
  /** Starts at 1 on insert and grows by one on every update. */
  readonly version: number;
  /** Unix time in milliseconds of the insert. */
  readonly createdAt: number;
  /** Unix time in milliseconds of the last write. */
  readonly updatedAt: number;
}

/** Records as JSON texts (`StorageDriver.listTexts`). */
export interface RecordTexts {
  /** `JSON.stringify(stored.record)` of each record, in list order. */
  readonly texts: readonly string[];
  /** The stored record at the index asked for, if the list reached it. */
  readonly kept: StoredRecord | undefined;
}

/** Outcome of a conditional update. */
export type UpdateResult =
  | { readonly status: 'updated'; readonly version: number }
  /** The record is gone or its version moved on since it was read. */
  | { readonly status: 'conflict' }
  /** The update renames the record to a key that another record already has. */
  | { readonly status: 'duplicate' };

/** Comparison operators of list filters. */
export type FilterOperator =
  | 'EQUALS'
  | 'NOT_EQUALS'
  | 'CONTAINS'
  | 'NOT_CONTAINS'
  | 'STARTS_WITH'
  | 'ENDS_WITH'
  | 'GT'
  | 'GTE'
  | 'LT'
  | 'LTE';

/** One condition on a column, or on a path inside a JSON column. */
export interface FilterCondition {
  /** Column name followed by the path inside an OBJECT field, e.g. `['address', 'city']`. */
  readonly path: readonly string[];
  readonly operator: FilterOperator;
  /** How the value compares: the kind of the column, or of the leaf inside a JSON column. */
  readonly kind: ColumnKind;
  /** The value already converted to the field's canonical form. */
  readonly value: KeyValue;
  /** The condition tests membership in an ARRAY of scalars (`tags[CONTAINS]=x`). */
  readonly arrayMembership?: boolean;
}

/** Conditions joined by OR; a query's groups are joined by AND. */
export interface FilterGroup {
  readonly anyOf: readonly FilterCondition[];
}

/** One sort key. */
export interface OrderTerm {
  readonly column: string;
  readonly descending: boolean;
}

/** A count request, already validated against the schema: filters only. */
export interface CountQuery {
  readonly filters: readonly FilterGroup[];
}

/** A list request, already validated against the schema. */
export interface ListQuery extends CountQuery {
  /** Sort keys; the driver appends the key columns as a tie-break so the order is total. */
  readonly orderBy: readonly OrderTerm[];
  /** Rows to skip (offset paging). */
  readonly offset?: number;
  /** Maximum rows to return. */
  readonly limit?: number;
  /**
   * Keyset paging: the sort values (orderBy terms, then the key columns) of the last row of the
   * previous page; the result starts strictly after it.
   */
  readonly after?: readonly (KeyValue | null)[];
}

/** Last write times of one entity, in Unix milliseconds; absent when it never happened. */
export interface EntityActivity {
  readonly lastCreate?: number;
  readonly lastUpdate?: number;
  readonly lastDelete?: number;
}

/** One schema migration for one dialect (see `migrations.ts`). */
export interface MigrationScript {
  /** The file name without `.<dialect>.sql`, e.g. `0002_add-product-color_1a2b3c4d`. */
  readonly id: string;
  /** The SQL to run: statements separated by `;`, no transaction control. */
  readonly sql: string;
}

/** What a committed change did to its record. */
export type ChangeOp = 'created' | 'updated' | 'deleted';

/**
 * One committed change as the outbox keeps it (SPEC §9): written in the same transaction as the
 * change, so it exists if and only if the change committed.
 */
export interface StoredChange {
  /** Position in the outbox: strictly increasing in commit order, without gaps, across the storage. */
  readonly seq: number;
  /** Entity name as written in the schema. */
  readonly entity: string;
  /** The record id (key values as text, joined by the key separator). */
  readonly id: string;
  readonly op: ChangeOp;
  /** The record after the change (before it, for `deleted`), as JSON text. */
  readonly record: string;
  /** Unix time in milliseconds of the write. */
  readonly timeUnix: number;
}

/** The part of the outbox that is kept. */
export interface ChangeBounds {
  /** The seq of the last committed change; 0 when there was none. */
  readonly last: number;
  /** The seq of the oldest change still kept; `last + 1` when there was none. */
  readonly first: number;
}

/**
 * The outbox of a driver that keeps one: every committed create, update and delete appends a
 * change in the write's own transaction (unless `OpenOptions.events` is false).
 */
export interface ChangeFeed {
  /** The committed changes after `seq`, in seq order, at most `limit` of them. */
  read(after: number, limit: number): Promise<StoredChange[]>;
  /** The last seq assigned and the first one still kept. */
  bounds(): Promise<ChangeBounds>;
  /** Deletes the oldest changes, up to the first one written at or after `time` (Unix ms) but never the newest one; resolves to how many. */
  trim(time: number): Promise<number>;
  /**
   * Calls `listener` whenever changes may have been committed: right after this driver committed
   * some (with them, in seq order), and with none when another instance may have (a PostgreSQL
   * notification). Returns the function that stops the calls.
   */
  watch(listener: (committed: readonly StoredChange[]) => void): () => void;
}

/** Options of `StorageDriver.open`. */
export interface OpenOptions {
  /**
   * Whether each write appends its change events to the outbox (default true); the outbox table is
   * created either way. Off, `/events` has nothing to serve (`EVENTS=off`).
   */
  readonly events?: boolean;
  /**
   * The service's migrations for this driver's dialect. When given (even empty), the driver
   * first brings the database up to date: pending migrations run in one transaction and are
   * recorded in `_eg_migrations`; a new database records them all as applied; a database that
   * recorded a migration not in this list is refused (`MigrationError`, "ahead of the code").
   * When omitted the driver does no migration bookkeeping at all.
   */
  readonly migrations?: readonly MigrationScript[];
  /** Called with the ids of the migrations that were run (not with a baseline's). */
  readonly onMigrationsApplied?: (ids: readonly string[]) => void;
}

/**
 * A storage backend for generated services. Arguments come in one order: the table, then the key,
 * then the values, then the expected version, then the time of the write.
 */
export interface StorageDriver {
  /** Short name of the backend, e.g. `sqlite` or `postgres`; migration files are `*.<dialect>.sql`. */
  readonly dialect: string;
  /** Connects, applies pending migrations (when given) and creates every missing table and index for the given entities. */
  open(tables: readonly TableDescriptor[], options?: OpenOptions): Promise<void>;
  /** Reads one record by its key values, or `undefined` when there is none. */
  get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined>;
  /**
   * `get`, answered synchronously; only drivers whose reads by key are synchronous (SQLite) have
   * it. The fast path of GET by key then answers in the tick its request arrived.
   */
  readonly getNow?: (table: TableDescriptor, key: KeyValues) => StoredRecord | undefined;
  /** Inserts all records in one transaction at time `now` (with a `created` change each); throws `DuplicateKeyError` and inserts nothing if any key exists. */
  insert(table: TableDescriptor, records: readonly StoredFields[], now: number): Promise<void>;
  /** Overwrites the record stored under `key` (its key may change) at time `now` if its version is still `expectedVersion`, with an `updated` change (a rename: `deleted`, then `created`). */
  update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
  ): Promise<UpdateResult>;
  /** Deletes the record under `key` at time `now` if its version is `expectedVersion` (any when `undefined`), with a `deleted` change, and returns what was deleted. */
  delete(
    table: TableDescriptor,
    key: KeyValues,
    expectedVersion: number | undefined,
    now: number,
  ): Promise<StoredRecord | undefined>;
  /** Lists records matching the query, in its order, with the key as the final tie-break. */
  list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]>;
  /**
   * Optional: `list()` with each record as its JSON text — exactly `JSON.stringify(stored.record)`
   * — and the stored record at index `keep` (when the list has one), so a page is answered
   * without building every record. The list handler uses it when present.
   */
  listTexts?(table: TableDescriptor, query: ListQuery, keep: number): Promise<RecordTexts>;
  /** Counts the records matching the query's filters. */
  count(table: TableDescriptor, query: CountQuery): Promise<number>;
  /** Returns the last create, update and delete time of each entity that has one. */
  activity(): Promise<Readonly<Record<string, EntityActivity>>>;
  /** Resolves when the storage answers a trivial query; rejects with `StorageUnavailableError` otherwise. */
  ping(): Promise<void>;
  /**
   * The stored secret of this name, made with `create` and stored on first use, so that every
   * instance on the same storage shares it (the key that signs list cursors). Optional: without
   * it the service uses a secret of its own process.
   */
  secret?(name: string, create: () => string): Promise<string>;
  /**
   * The outbox of change events (SPEC §9). Optional: a driver without it serves no `/events`.
   */
  readonly changes?: ChangeFeed;
  /** Releases connections and files; the driver cannot be used afterwards. */
  close(): Promise<void>;
}
