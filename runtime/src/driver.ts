/**
 * The storage-driver interface. A driver stores the records of every entity of a service; the
 * generated code hands it a typed description of each entity's table and never writes SQL itself.
 */

/** How a column's values are stored; each driver maps a kind to its own SQL type. */
export type ColumnKind =
  | 'text'
  | 'integer'
  | 'double'
  | 'decimal'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'json';

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
   * The schema asked for an index on this text field's case-folded value (`index: ci`), the
   * expression the case-insensitive operators compare (SqlDialect.fold).
   */
  readonly ciIndexed?: boolean;
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

/**
 * A top-level reference that keeps its integrity (SPEC §11: `entityRef.onDelete` is set): every
 * value written must name an existing record of `entity`, and deleting or renaming that record
 * acts on the referencing records. The field holds the target's record id.
 */
export interface ReferenceDescriptor {
  /** The referencing field (a column of this table). */
  readonly field: string;
  /** The referenced entity, as written in the schema. */
  readonly entity: string;
  /** The field is an ARRAY of references: the rule applies per element. */
  readonly array: boolean;
  readonly onDelete: 'RESTRICT' | 'EMPTY' | 'DELETE';
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
  /**
   * The combinations of columns no two rows may share (a single `unique: true` field is a list of
   * one), each enforced by a unique index (`uniqueIndexes` in indexes.ts). NULLs never collide.
   */
  readonly unique?: readonly (readonly string[])[];
  /**
   * The key column whose values the database hands out (`generated: sequence`, SPEC §16), by
   * `StorageDriver.nextSequence`.
   */
  readonly sequence?: string;
  /** The references of this table that keep their integrity (absent: none). */
  readonly references?: readonly ReferenceDescriptor[];
  /**
   * DELETE keeps the row, marked deleted (SPEC §13): reads by key, lists, counts and reference
   * checks skip it, its key stays taken, and it can be restored or purged.
   */
  readonly softDelete?: boolean;
  /** Every committed version of each record is kept (SPEC §13, `history.ts`). */
  readonly history?: boolean;
  /** Full-text search over text columns (SPEC §17, `q=`; `search.ts`). */
  readonly search?: SearchDescriptor;
}

/** The full-text search of a table: the text columns it looks in and its language. */
export interface SearchDescriptor {
  /** The searched text columns, in declared order. */
  readonly fields: readonly string[];
  /** PostgreSQL's text search configuration (`simple` unless the schema names one). */
  readonly language: string;
}

/** A single key field's value. */
export type KeyValue = string | number | boolean;

/** The values of the key fields, in `lk` order. */
export type KeyValues = readonly KeyValue[];

/** One update of `StorageDriver.updateMany`: the record under `key` at `expectedVersion`. */
export interface RecordUpdate {
  readonly key: KeyValues;
  readonly record: StoredFields;
  readonly expectedVersion: number;
  /**
   * The record as stored at `expectedVersion`, if the caller read it: the driver may then write
   * only the fields that differ from it.
   */
  readonly previous?: StoredFields;
}

/** One delete of `StorageDriver.deleteMany`: the record under `key` at `expectedVersion`. */
export interface RecordDelete {
  readonly key: KeyValues;
  readonly expectedVersion: number;
}

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
  /** `JSON.stringify(stored.record)` of each record, in list order (empty with `joined`). */
  readonly texts: readonly string[];
  /**
   * Instead of `texts`, when the driver wrote the page as one text (SQLite, a list of `keep + 2`
   * records: a page and the look-ahead record): the texts of the records up to `keep` joined with
   * commas, and how many records the list read.
   */
  readonly joined?: { readonly text: string; readonly records: number };
  /**
   * The record at the index asked for, if the list reached it: what the page's `next` cursor is
   * made from (its version and times are not read). With `fields`, it may hold only the selected
   * fields, the `orderBy` fields and the key.
   */
  readonly kept: Pick<StoredRecord, 'record'> | undefined;
  /**
   * With `counted`: the number of records matching the list's filters, read in the same snapshot
   * as the page (`count=true`, SPEC §17); absent when the driver did not count (the caller then
   * counts with `count`).
   */
  readonly count?: number;
}

/** A page of records and the number of records matching its query (`listCounted`). */
export interface CountedList {
  readonly rows: readonly StoredRecord[];
  readonly count: number;
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
  | 'LTE'
  /** Case-insensitive (Unicode case folding) forms of EQUALS, CONTAINS, STARTS_WITH, ENDS_WITH. */
  | 'IEQUALS'
  | 'ICONTAINS'
  | 'ISTARTS_WITH'
  | 'IENDS_WITH'
  /** The field is absent (`is null` in a filter expression). */
  | 'IS_NULL'
  /** The field is present (`is not null`). */
  | 'IS_NOT_NULL';

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
  /**
   * The condition is on the record the reference `field` of this table names, in `target`
   * (filtering through a reference, `category.name=tools`, SPEC §11); `path` is then a path of
   * `target`. `target` has a single key column.
   */
  readonly through?: { readonly field: string; readonly target: TableDescriptor };
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

/**
 * A filter expression (`filter=` of a list, SPEC §17): conditions combined by AND, OR and NOT,
 * with two-valued logic — a condition on an absent field is false (except the negated operators
 * and `IS_NULL`), and NOT of it is true.
 */
export type FilterExpression =
  | { readonly and: readonly FilterExpression[] }
  | { readonly or: readonly FilterExpression[] }
  | { readonly not: FilterExpression }
  | { readonly condition: FilterCondition };

/**
 * Which records of a `softDelete` table a list or count sees besides the live ones: `include`
 * adds the soft-deleted ones, `only` sees nothing else. Absent: live records only.
 */
export type DeletedFilter = 'include' | 'only';

/** A count request, already validated against the schema: filters only. */
export interface CountQuery {
  readonly filters: readonly FilterGroup[];
  /** A filter expression, ANDed with `filters`. */
  readonly expression?: FilterExpression;
  /** Soft-deleted records to see too (tables with `softDelete` only). */
  readonly deleted?: DeletedFilter;
  /**
   * Full-text search (`q=`, tables with `search` only): the words every matching record holds,
   * the last one as a prefix; each word is letters, marks and digits only, at least one word.
   */
  readonly search?: readonly string[];
}

/** A list request, already validated against the schema. */
export interface ListQuery extends CountQuery {
  /**
   * Sort keys; the driver appends the key columns as a tie-break so the order is total. With
   * `search` and no terms, the best matches come first (then the key columns).
   */
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

/**
 * What a committed change did to its record. `restored` and `purged` happen only to records of a
 * `softDelete` table (SPEC §13).
 */
export type ChangeOp = 'created' | 'updated' | 'deleted' | 'restored' | 'purged';

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
  /** A `deleted` that kept the record, marked deleted (a soft delete, SPEC §13). */
  readonly soft?: boolean;
  /** The version the change made in the record's history (entities with `history`, SPEC §13). */
  readonly version?: number;
  /** The record after the change (before it, for `deleted` and `purged`), as JSON text. */
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

/** How `StorageDriver.delete` deletes (SPEC §13); without it a delete removes the row. */
export interface DeleteOptions {
  /**
   * For a `softDelete` table: `soft` (the default there) keeps the row, marked deleted at `now`
   * by `by`; `purge` removes the row, deleted or not.
   */
  readonly mode?: 'soft' | 'purge';
  /** The subject of the caller (`null`: anonymous or no access rules). */
  readonly by?: string | null;
}

/** Who writes (SPEC §13): kept with each version of a `history` table. */
export interface WriteOptions {
  /** The subject of the caller (`null`: anonymous or no access rules). */
  readonly by?: string | null;
}

/** What `StorageDriver.replaceMany` keeps of a stored record, and what it does not compare. */
export interface ReplaceOptions extends WriteOptions {
  /**
   * Fields an update leaves as stored: neither written nor compared (the server-set `createdAt`
   * and `createdBy`).
   */
  readonly keep?: readonly string[];
  /**
   * Fields written but not compared (the server-set `updatedAt` and `updatedBy`): a record that
   * differs from the stored one only there is unchanged, and not written.
   */
  readonly stamped?: readonly string[];
}

/** A record of `StorageDriver.replaceMany` as stored after it, and what became of it. */
export interface ReplacedRecord extends StoredRecord {
  /**
   * `created`: its key was free; `updated`: the stored record differed and was replaced (version
   * + 1); `unchanged`: the stored record held the same fields, and nothing was written.
   */
  readonly fate: 'created' | 'updated' | 'unchanged';
}

/** One kept version of a record of a `history` table. */
export interface HistoryEntry {
  /** 1, 2, … per record, in commit order; a rename keeps counting under the new key. */
  readonly version: number;
  /** What the change did: `created`, `updated` (a rename too), `deleted`, `restored`, `purged`. */
  readonly op: ChangeOp;
  /** Unix time in milliseconds of the write. */
  readonly timeUnix: number;
  /** The subject of the caller, `null` when there was none. */
  readonly by: string | null;
  /** The record after the change (as it was, for `deleted` and `purged`), as JSON text. */
  readonly record: string;
}

/** A soft-deleted record with the mark of its deletion. */
export interface DeletedRecord extends StoredRecord {
  /** Unix time in milliseconds of the soft delete. */
  readonly deletedAt: number;
  /** The subject of the caller who deleted it, `null` when there was none. */
  readonly deletedBy: string | null;
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
  insert(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
    options?: WriteOptions,
  ): Promise<void>;
  /**
   * The next `count` values of the table's sequence (`TableDescriptor.sequence`), increasing;
   * never handed out twice, even when the insert that asked for them fails (gaps are allowed).
   * Optional: a driver without it cannot serve entities with `generated: sequence` keys.
   */
  nextSequence?(table: TableDescriptor, count: number): Promise<number[]>;
  /** Overwrites the record stored under `key` (its key may change) at time `now` if its version is still `expectedVersion`, with an `updated` change (a rename: `deleted`, then `created`). */
  update(
    table: TableDescriptor,
    key: KeyValues,
    record: StoredFields,
    expectedVersion: number,
    now: number,
    options?: WriteOptions,
  ): Promise<UpdateResult>;
  /**
   * Optional: `get` of several keys at once, in their order (`undefined` where no live record has
   * the key). The upsert of a list reads its records with it.
   */
  getMany?(
    table: TableDescriptor,
    keys: readonly KeyValues[],
  ): Promise<(StoredRecord | undefined)[]>;
  /**
   * Optional: `update` of several records at time `now`, in their order, all or none: resolves to
   * their new versions when every one was updated (their changes in order, consecutive), or to
   * `undefined` when one could not be — its version changed, its new key is taken, it breaks a
   * unique rule or names a missing record — and then writes nothing (the caller updates them one
   * by one to learn which, and why). Other errors reject.
   */
  updateMany?(
    table: TableDescriptor,
    updates: readonly RecordUpdate[],
    now: number,
    options?: WriteOptions,
  ): Promise<number[] | undefined>;
  /**
   * Optional: the upsert of a list in replace mode at time `now`, in one write (on PostgreSQL one
   * statement): each record is inserted when its key is free, replaces the stored record when a
   * compared field differs, and is left as stored otherwise (see `ReplaceOptions`). Resolves to the records as stored
   * afterwards, in their order, with their fates (the changes of those created or updated in that
   * order); or to `undefined`, having written nothing, when it cannot write them so — a record
   * breaks a unique rule or names a missing record, or the table keeps a history or soft-deletes —
   * and the caller then upserts them one by one. Their keys must be distinct.
   */
  replaceMany?(
    table: TableDescriptor,
    records: readonly StoredFields[],
    now: number,
    options?: ReplaceOptions,
  ): Promise<ReplacedRecord[] | undefined>;
  /**
   * Deletes the record under `key` at time `now` if its version is `expectedVersion` (any when
   * `undefined`), with a `deleted` change, and returns what was deleted. On a `softDelete` table
   * the row is kept, marked deleted (version + 1, a `deleted` change with `soft`), unless
   * `options.mode` is `purge`, which removes it, deleted or not (a `purged` change).
   */
  delete(
    table: TableDescriptor,
    key: KeyValues,
    expectedVersion: number | undefined,
    now: number,
    options?: DeleteOptions,
  ): Promise<StoredRecord | undefined>;
  /**
   * Optional: `delete` of several records at time `now`, each at its expected version, all or
   * none: resolves to the records as they were, in their order, when every one was deleted (their
   * `deleted` changes in that order, consecutive), or to `undefined`, having deleted nothing, when
   * one could not be (gone, at another version, or named twice) and for tables whose deletes do
   * more than remove the row — it soft-deletes, keeps a history, or a reference that keeps its
   * integrity names it. The caller then deletes them one by one. Other errors reject.
   */
  deleteMany?(
    table: TableDescriptor,
    deletes: readonly RecordDelete[],
    now: number,
  ): Promise<StoredRecord[] | undefined>;
  /**
   * Optional: runs `work` in one transaction — every call of this driver made in `work`'s
   * asynchronous context (directly or from a hook) joins it and sees its own writes — and commits
   * when `work` resolves, or rolls everything back when it rejects. The change events of the
   * transaction get consecutive seqs. Other callers never see its uncommitted writes; a call
   * inside a running transaction joins it. The writes of several records (upsert, changes by
   * filter, batches) need it.
   */
  transaction?<T>(work: () => Promise<T>): Promise<T>;
  /** The soft-deleted record under `key` of a `softDelete` table, or `undefined` (none, or live). */
  getDeleted?(table: TableDescriptor, key: KeyValues): Promise<DeletedRecord | undefined>;
  /**
   * Makes the soft-deleted record under `key` live again at time `now` (version + 1, a `restored`
   * change) after checking its references; returns it, or `undefined` when no deleted record has
   * that key.
   */
  restore?(
    table: TableDescriptor,
    key: KeyValues,
    now: number,
    options?: WriteOptions,
  ): Promise<StoredRecord | undefined>;
  /**
   * The kept versions of the record under `key` of a `history` table, newest first, at most
   * `limit`, only those older than version `before` when given (SPEC §13).
   */
  history?(
    table: TableDescriptor,
    key: KeyValues,
    limit: number,
    before?: number,
  ): Promise<HistoryEntry[]>;
  /** The newest kept version of the record under `key` written at or before `time` (Unix ms). */
  versionAt?(
    table: TableDescriptor,
    key: KeyValues,
    time: number,
  ): Promise<HistoryEntry | undefined>;
  /** Deletes the versions older than `time` (Unix ms) but the newest of each record; resolves to how many. */
  trimHistory?(time: number): Promise<number>;
  /** Lists records matching the query, in its order, with the key as the final tie-break. */
  list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]>;
  /**
   * Optional: `list()` with each record as its JSON text — exactly `JSON.stringify(stored.record)`
   * — and the stored record at index `keep` (when the list has one), so a page is answered
   * without building every record. The list handler uses it when present.
   */
  listTexts?(
    table: TableDescriptor,
    query: ListQuery,
    keep: number,
    /** Only these top-level fields in each text (`fields=`); every field when absent. */
    fields?: readonly string[],
    /** Also count the records matching the filters (`RecordTexts.count`). */
    counted?: boolean,
  ): Promise<RecordTexts>;
  /**
   * Optional: `listTexts` answered synchronously, when the driver can read this list in the
   * caller's tick (the fast path of list pages then answers without awaiting); `undefined` when
   * it cannot (the list would run elsewhere: call `listTexts`). Throws while the driver cannot
   * read synchronously (SQLite: a transaction is open on its connection) and on storage errors.
   */
  readonly listTextsNow?: (
    table: TableDescriptor,
    query: ListQuery,
    keep: number,
    fields?: readonly string[],
    counted?: boolean,
  ) => RecordTexts | undefined;
  /** Counts the records matching the query's filters. */
  count(table: TableDescriptor, query: CountQuery): Promise<number>;
  /**
   * Optional: `count` answered synchronously when the driver would count on its own connection
   * in the caller's tick; `undefined` when it would count elsewhere (call `count`). Throws as
   * `listTextsNow` does.
   */
  readonly countNow?: (table: TableDescriptor, query: CountQuery) => number | undefined;
  /**
   * Optional: `list()` and `count()` of the same query read in one snapshot (`count=true` of a
   * list, SPEC §17). Without it the service runs the two one after the other.
   */
  listCounted?(table: TableDescriptor, query: ListQuery): Promise<CountedList>;
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
  /**
   * True when the driver routes reads to replicas and takes part in read-your-writes (SPEC §15):
   * the service then runs each request in a read-after context (read-after.ts), which the driver
   * reads for the request's `X-Read-After` and fills with its writes' position.
   */
  readonly readAfter?: boolean;
  /** Releases connections and files; the driver cannot be used afterwards. */
  close(): Promise<void>;
}
