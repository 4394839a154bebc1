/**
 * The statements of the PostgreSQL driver, one set per table: each write is one statement (a
 * data-modifying CTE) that also touches `_eg_activity` and, with events on, appends its change
 * events to the outbox (outbox.ts). Fixed statements run as named prepared statements.
 *
 * Inside a transaction of several writes (a batch, an upsert of a list, a change by filter) the
 * writes touch a row of `_eg_activity` of their own transaction instead (`TRANSACTION_ACTIVITY`),
 * folded into the entity's row just before the commit (`foldActivitySql`): the entity's row is
 * then locked only from that fold to the commit, not for the whole transaction, so concurrent
 * writers of the entity do not wait for a long batch (nor time out waiting).
 */
import type { TableDescriptor } from '../driver.js';
import { DELETED_AT_COLUMN, DELETED_BY_COLUMN } from '../soft-delete.js';
import { ChangeDrafter } from '../events/change.js';
import type { SqlDialect } from '../sql/dialect.js';
import { postgresDialect } from './dialect.js';
import { PostgresOutbox } from './outbox.js';
import {
  CREATED_COLUMN,
  UPDATED_COLUMN,
  VERSION_COLUMN,
  castType,
  qualify,
  quoteIdent,
  shortHash,
} from './schema.js';
import type { TableCodec } from './values.js';

/**
 * The suffix of the `_eg_activity` row a write inside a transaction touches: `<entity>#<txid>`,
 * private to the transaction (no other one writes or waits on it) and folded before its commit.
 */
export const TRANSACTION_ACTIVITY = `'#' || txid_current()::TEXT`;

/**
 * Folds the open transaction's own `_eg_activity` rows (`TRANSACTION_ACTIVITY`) into the rows of
 * their entities, keeping the latest time of each kind, and deletes them.
 */
export function foldActivitySql(activityTable: string): string {
  const latest = (column: string): string =>
    `"${column}" = GREATEST(${activityTable}."${column}", EXCLUDED."${column}")`;
  return `WITH "_eg_mine" AS (
  DELETE FROM ${activityTable} WHERE "entity" LIKE '%' || ${TRANSACTION_ACTIVITY}
  RETURNING split_part("entity", '#', 1) AS "entity", "last_create_ms", "last_update_ms", "last_delete_ms"
)
INSERT INTO ${activityTable} ("entity", "last_create_ms", "last_update_ms", "last_delete_ms")
SELECT "entity", max("last_create_ms"), max("last_update_ms"), max("last_delete_ms") FROM "_eg_mine" GROUP BY "entity"
ON CONFLICT ("entity") DO UPDATE SET ${['last_create_ms', 'last_update_ms', 'last_delete_ms'].map(latest).join(', ')}`;
}

/**
 * What a write inside a transaction does to its transaction's `_eg_activity` row when it exists:
 * sets the time only when it is later. A row updated again by every write of a transaction of
 * thousands (each in its savepoint) makes each update slower than the last — PostgreSQL checks
 * every version the transaction left — so a change of 10 000 records by filter took minutes;
 * the writes of one bulk request share one time, and touch the row once.
 */
export function transactionTouch(activityTable: string, column: string): string {
  return `UPDATE SET "${column}" = EXCLUDED."${column}"
  WHERE ${activityTable}."${column}" IS NULL OR ${activityTable}."${column}" < EXCLUDED."${column}"`;
}

/** Prepared-statement texts and value codecs of one table. */
export interface TableState extends TableCodec {
  /** Whether its writes touch the transaction's own `_eg_activity` row (`TRANSACTION_ACTIVITY`). */
  readonly inTransaction: boolean;
  /** Schema-qualified quoted table name. */
  readonly tableSql: string;
  readonly dialect: SqlDialect;
  /** Select list for the shared list builder (`"table"."column", …`). */
  readonly listSelect: string;
  readonly get: string;
  readonly insert: string;
  /** The insert of a list of at least `NUMBERED_INSERT` records, its changes numbered at once. */
  readonly insertNumbered: string;
  readonly update: string;
  /**
   * The update of a list of records that keep their keys (`StorageDriver.updateMany`): $1…$n one
   * TEXT[] per column, then one TEXT[] per key column, the expected versions (BIGINT[]), the
   * entity and now. Its row: how many records were updated. Events are appended by the caller.
   */
  readonly updateMany: string;
  /**
   * The statement of `replaceMany` whose updates keep the fields `keep` and do not compare
   * `stamped` (made once per pair): `INSERT … ON CONFLICT (key) DO UPDATE … WHERE` a compared
   * column differs. $1…$n one TEXT[] per column, $n+1 the entity, $n+2 now. Its rows are those
   * inserted or updated: the key columns, the `keep` columns (in column order), the version, the
   * created time and whether the row was inserted. Events are appended by the caller.
   */
  readonly replaceMany: (keep: readonly string[], stamped: readonly string[]) => string;
  /**
   * `update` of a `history` table that also keeps the record's next version (`"_eg_kept"`,
   * history.ts) and, with `events`, queues its event carrying that version: one statement. Its row:
   * the record's version, the arrivals (NULL without `events`), the kept version. Parameters those
   * of `update` without the event arrays, then the record's id, the op, by and the record's text.
   */
  readonly updateKept: { readonly quiet: string; readonly events: string } | undefined;
  /** Deletes (on a `softDelete` table: marks deleted, `by` after `now`). */
  readonly delete: string;
  readonly deleteVersion: string;
  /**
   * The delete of a list of records, each at its version (`StorageDriver.deleteMany`; `undefined`
   * for a `softDelete` table): $1…$k one TEXT[] per key column, $k+1 the versions (BIGINT[]), then
   * the entity and now. Its rows: the deleted records as `get` selects them, in the order of the
   * arrays. Events are appended by the caller.
   */
  readonly deleteMany: string | undefined;
  /** Removes the row, deleted or not, returning its mark last (`softDelete` tables: as `delete` otherwise). */
  readonly purge: string;
  readonly purgeVersion: string;
  /** A soft-deleted row with its mark (`softDelete` tables only). */
  readonly getDeleted: string | undefined;
  /** Clears the mark of a soft-deleted row (`$1…$k` the key, `$k+1` entity, `$k+2` now). */
  readonly restore: string | undefined;
  /** Finds which of a list of keys exist (for the index of a `DuplicateKeyError`). */
  readonly existing: string;
  /** Reads the live rows of a list of keys (one TEXT[] per key column), as `get` selects them. */
  readonly getMany: string;
  /** Reads the record a rename deletes, locking it (`$1…$k` the key, `$k+1` the version). */
  readonly lockVersion: string;
  /** Builds the change events of the table's writes (when events are on). */
  readonly drafter: ChangeDrafter | undefined;
  /** Builds the drafts of the table's writes whether events are on or not (history, SPEC §13). */
  readonly recorder: ChangeDrafter;
}

/** Where a table's statements write besides the table itself. */
export interface StatementTarget {
  /** The configured schema (`undefined`: the search path's first). */
  readonly schema: string | undefined;
  /** The schema-qualified `_eg_activity`. */
  readonly activityTable: string;
  readonly outbox: PostgresOutbox;
  /** Whether writes append change events. */
  readonly events: boolean;
  /** The record history (SPEC §13): `PostgresHistory` (history.ts). */
  readonly history: { keptCte(guard: string, p: KeptParams): string };
  /** Statements for writes inside a transaction (`TRANSACTION_ACTIVITY`). */
  readonly inTransaction?: boolean;
}

/** The parameters (placeholders) of the CTE that keeps a write's version (history.ts). */
export interface KeptParams {
  readonly entity: string;
  readonly id: string;
  readonly op: string;
  readonly by: string;
  readonly record: string;
  readonly now: string;
}

/** The statements of one table. */
export function prepareTable(descriptor: TableDescriptor, where: StatementTarget): TableState {
  const { schema, activityTable, outbox, events, history } = where;
  const inTransaction = where.inTransaction === true;
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
    inTransaction
      ? `INSERT INTO ${activityTable} ("entity", "${column}") SELECT ${entity}::TEXT || ${TRANSACTION_ACTIVITY}, ${now}::BIGINT FROM ${source}
ON CONFLICT ("entity") DO ${transactionTouch(activityTable, column)}`
      : `INSERT INTO ${activityTable} ("entity", "${column}") SELECT ${entity}::TEXT, ${now}::BIGINT FROM ${source}
ON CONFLICT ("entity") DO UPDATE SET "${column}" =
  GREATEST(COALESCE(${activityTable}."${column}", EXCLUDED."${column}"), EXCLUDED."${column}")`;

  const soft = descriptor.softDelete === true;
  const deletedAt = quoteIdent(DELETED_AT_COLUMN);
  const deletedBy = quoteIdent(DELETED_BY_COLUMN);
  const live = soft ? ` AND ${deletedAt} IS NULL` : '';
  const get = `SELECT ${select} FROM ${tableSql} WHERE ${keyWhere(1)}${live}`;
  const recorder = new ChangeDrafter(descriptor);

  /** The event CTEs after `"_eg_touch"`, their arrays from parameter `$first` on. */
  const appendAfterTouch = (first: number, entity: string, now: string): string =>
    outbox.appendCtes(
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
  /** The insert with the event CTEs `append` and the final select `result`. */
  const insertWith = (append: string, result: string): string => `WITH "_eg_rows" AS (
INSERT INTO ${tableSql} (${[...names, created, updated, version].join(', ')})
SELECT ${columns.map((c, i) => `"_eg_input".${input[i]}::${castType(c.kind)}`).join(', ')}, $${n + 2}::BIGINT, $${n + 2}::BIGINT, 1
  FROM unnest(${columns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${input.join(', ')})
RETURNING 1
)${
    events
      ? `, "_eg_touch" AS (
${insertTouch}
RETURNING 1
), ${append}
${result}`
      : `
${insertTouch}`
  }`;
  const insert = insertWith(
    appendAfterTouch(n + 3, `$${n + 1}`, `$${n + 2}`),
    PostgresOutbox.ARRIVALS,
  );
  // A list of many records numbers its changes itself (outbox.ts, `numberedCtes`).
  const insertNumbered = insertWith(
    outbox.numberedCtes(
      {
        ids: `$${n + 3}`,
        ops: `$${n + 4}`,
        records: `$${n + 5}`,
        entity: `$${n + 1}`,
        now: `$${n + 2}`,
      },
      '"_eg_touch"',
    ),
    PostgresOutbox.FIRST_SEQ,
  );

  // $1…$n: fields; $n+1: now; then the key; then the expected version; then the entity; with
  // events, their arrays.
  const k = descriptor.key.length;
  const updateHead = `WITH "_eg_updated" AS (
UPDATE ${tableSql} SET ${names.map((c, i) => `${c} = $${i + 1}`).join(', ')}, ${updated} = $${n + 1}, ${version} = ${version} + 1
 WHERE ${keyWhere(n + 2)} AND ${version} = $${n + 2 + k}
RETURNING ${version}
), "_eg_touch" AS (
${touch('last_update_ms', '"_eg_updated"', `$${n + 3 + k}`, `$${n + 1}`)}
RETURNING 1
)`;
  const update = `${updateHead}${
    events
      ? `, ${appendAfterTouch(n + 4 + k, `$${n + 3 + k}`, `$${n + 1}`)}
SELECT ${version}, (${PostgresOutbox.ARRIVALS}) FROM "_eg_updated"`
      : `
SELECT ${version} FROM "_eg_updated"`
  }`;
  // The update of a list: the records as arrays, one element per record (`updateMany`).
  const keyInput = descriptor.key.map((_, i) => `"_k${i + 1}"`);
  const updateMany = `WITH "_eg_input" AS (
SELECT * FROM unnest(${[...columns.map((_, i) => `$${i + 1}::TEXT[]`), ...descriptor.key.map((_, i) => `$${n + 1 + i}::TEXT[]`), `$${n + k + 1}::BIGINT[]`].join(', ')})
  AS "_eg_input"(${[...input, ...keyInput, '"_v"'].join(', ')})
), "_eg_updated" AS (
UPDATE ${tableSql} AS "_eg_t" SET ${columns.map((c, i) => `${names[i]} = "_eg_input".${input[i]}::${castType(c.kind)}`).join(', ')}, ${updated} = $${n + k + 3}::BIGINT, ${version} = "_eg_t".${version} + 1
  FROM "_eg_input"
 WHERE ${keyIndexes.map((index, i) => `"_eg_t".${names[index]} = "_eg_input".${keyInput[i]}::${castType(columns[index]!.kind)}`).join(' AND ')} AND "_eg_t".${version} = "_eg_input"."_v"
RETURNING 1
), "_eg_touch" AS (
${touch('last_update_ms', `(SELECT count(*) AS "n" FROM "_eg_updated") AS "_eg_count" WHERE "_eg_count"."n" > 0`, `$${n + k + 2}`, `$${n + k + 3}`)}
RETURNING 1
)
SELECT count(*) FROM "_eg_updated"`;

  // The upsert of a list in replace mode (`replaceMany`): one statement per pair of field lists.
  const replaceStatements = new Map<string, string>();
  const replaceMany = (keep: readonly string[], stamped: readonly string[]): string => {
    const cacheKey = `${keep.join('\0')}\u0001${stamped.join('\0')}`;
    let text = replaceStatements.get(cacheKey);
    if (text !== undefined) return text;
    const keys = new Set(descriptor.key);
    const kept = new Set(keep);
    const written = columns.filter(
      (c) => !keys.has(c.name) && !kept.has(c.name) && c.fixed === undefined,
    );
    const compared = written
      .filter((c) => !stamped.includes(c.name))
      .map((c) => {
        const name = quoteIdent(c.name);
        // NUMERIC as written (`1.50` is not `1.5`), as the records compare in JavaScript.
        return c.kind === 'decimal'
          ? `"_eg_t".${name}::TEXT IS DISTINCT FROM EXCLUDED.${name}::TEXT`
          : `"_eg_t".${name} IS DISTINCT FROM EXCLUDED.${name}`;
      });
    const returned = [
      ...keyIndexes.map((index) => `"_eg_t".${names[index]}`),
      ...columns.filter((c) => kept.has(c.name)).map((c) => `"_eg_t".${quoteIdent(c.name)}`),
      `"_eg_t".${version}`,
      `"_eg_t".${created}`,
      `("_eg_t".xmax = 0) AS "_eg_new"`,
    ];
    const entity = inTransaction ? `$${n + 1}::TEXT || ${TRANSACTION_ACTIVITY}` : `$${n + 1}::TEXT`;
    const latest = (column: string): string =>
      `"${column}" = GREATEST(${activityTable}."${column}", EXCLUDED."${column}")`;
    text = `WITH "_eg_rows" AS (
INSERT INTO ${tableSql} AS "_eg_t" (${[...names, created, updated, version].join(', ')})
SELECT ${columns.map((c, i) => `"_eg_input".${input[i]}::${castType(c.kind)}`).join(', ')}, $${n + 2}::BIGINT, $${n + 2}::BIGINT, 1
  FROM unnest(${columns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${input.join(', ')})
ON CONFLICT (${descriptor.key.map(quoteIdent).join(', ')}) DO UPDATE SET ${[
      ...written.map((c) => `${quoteIdent(c.name)} = EXCLUDED.${quoteIdent(c.name)}`),
      `${updated} = EXCLUDED.${updated}`,
      `${version} = "_eg_t".${version} + 1`,
    ].join(', ')}
 WHERE ${compared.length === 0 ? 'FALSE' : compared.join(' OR ')}
RETURNING ${returned.join(', ')}
), "_eg_touch" AS (
INSERT INTO ${activityTable} ("entity", "last_create_ms", "last_update_ms")
SELECT ${entity}, CASE WHEN "_eg_count"."c" > 0 THEN $${n + 2}::BIGINT END, CASE WHEN "_eg_count"."u" > 0 THEN $${n + 2}::BIGINT END
  FROM (SELECT count(*) FILTER (WHERE "_eg_new") AS "c", count(*) FILTER (WHERE NOT "_eg_new") AS "u" FROM "_eg_rows") AS "_eg_count"
 WHERE "_eg_count"."c" + "_eg_count"."u" > 0
ON CONFLICT ("entity") DO UPDATE SET ${latest('last_create_ms')}, ${latest('last_update_ms')}
RETURNING 1
)
SELECT * FROM "_eg_rows"`;
    replaceStatements.set(cacheKey, text);
    return text;
  };

  // With history: the version kept only when the update happened, the event only once kept.
  const kept = {
    entity: `$${n + 3 + k}`,
    now: `$${n + 1}`,
    id: `$${n + 4 + k}`,
    op: `$${n + 5 + k}`,
  };
  const keptUpdate = (withEvents: boolean): string => `${updateHead}, ${history.keptCte(
    '"_eg_updated"',
    {
      ...kept,
      by: `$${n + 6 + k}`,
      record: `$${n + 7 + k}`,
    },
  )}${withEvents ? `, ${outbox.keptCte({ ...kept, record: `$${n + 7 + k}` }, '"_eg_kept"')}` : ''}
SELECT ${version}, ${withEvents ? `(${PostgresOutbox.ARRIVALS})` : 'NULL'}, (SELECT "version" FROM "_eg_kept") FROM "_eg_updated"`;
  const updateKept =
    descriptor.history === true
      ? { quiet: keptUpdate(false), events: keptUpdate(true) }
      : undefined;
  const lockVersion = `SELECT ${select} FROM ${tableSql} WHERE ${keyWhere(1)} AND ${version} = $${k + 1} FOR UPDATE`;

  // $1…$k: the key; [$k+1: expected version]; then entity and now (and, marking, by).
  const remove = (withVersion: boolean, how: 'delete' | 'mark' | 'purge'): string => {
    const next = k + 1 + (withVersion ? 1 : 0);
    const versionWhere = withVersion ? ` AND ${version} = $${k + 1}` : '';
    const change =
      how === 'mark'
        ? `UPDATE ${tableSql} SET ${deletedAt} = $${next + 1}::BIGINT, ${deletedBy} = $${next + 2}::TEXT, ${updated} = $${next + 1}::BIGINT, ${version} = ${version} + 1
 WHERE ${keyWhere(1)}${versionWhere}${live}`
        : `DELETE FROM ${tableSql} WHERE ${keyWhere(1)}${versionWhere}`;
    const returned = how === 'purge' && soft ? `${select}, ${deletedAt}` : select;
    return `WITH "_eg_deleted" AS (
${change}
RETURNING ${returned}
), "_eg_touch" AS (
${touch('last_delete_ms', '"_eg_deleted"', `$${next}`, `$${next + 1}`)}
RETURNING 1
)
SELECT ${returned} FROM "_eg_deleted"`;
  };
  const deleteMany = soft
    ? undefined
    : `WITH "_eg_input" AS (
SELECT * FROM unnest(${[...descriptor.key.map((_, i) => `$${i + 1}::TEXT[]`), `$${k + 1}::BIGINT[]`].join(', ')}) WITH ORDINALITY
  AS "_eg_input"(${[...keyInput, '"_v"', '"_eg_n"'].join(', ')})
), "_eg_deleted" AS (
DELETE FROM ${tableSql} AS "_eg_t" USING "_eg_input"
 WHERE ${keyIndexes.map((index, i) => `"_eg_t".${names[index]} = "_eg_input".${keyInput[i]}::${castType(columns[index]!.kind)}`).join(' AND ')} AND "_eg_t".${version} = "_eg_input"."_v"
RETURNING "_eg_input"."_eg_n", ${[...names, version, created, updated].map((c) => `"_eg_t".${c}`).join(', ')}
), "_eg_touch" AS (
${touch('last_delete_ms', `(SELECT count(*) AS "n" FROM "_eg_deleted") AS "_eg_count" WHERE "_eg_count"."n" > 0`, `$${k + 2}`, `$${k + 3}`)}
RETURNING 1
)
SELECT ${select} FROM "_eg_deleted" ORDER BY "_eg_n"`;
  const restore = soft
    ? `WITH "_eg_restored" AS (
UPDATE ${tableSql} SET ${deletedAt} = NULL, ${deletedBy} = NULL, ${updated} = $${k + 2}::BIGINT, ${version} = ${version} + 1
 WHERE ${keyWhere(1)} AND ${deletedAt} IS NOT NULL
RETURNING ${select}
), "_eg_touch" AS (
${touch('last_update_ms', '"_eg_restored"', `$${k + 1}`, `$${k + 2}`)}
RETURNING 1
)
SELECT ${select} FROM "_eg_restored"`
    : undefined;
  const getDeleted = soft
    ? `SELECT ${select}, ${deletedAt}, ${deletedBy} FROM ${tableSql} WHERE ${keyWhere(1)} AND ${deletedAt} IS NOT NULL`
    : undefined;

  const keyColumns = keyIndexes.map((i) => columns[i]!);
  const existing = `SELECT ${keyColumns.map((c) => `"_eg_t".${quoteIdent(c.name)}`).join(', ')}
FROM ${tableSql} AS "_eg_t"
JOIN unnest(${keyColumns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${keyColumns
    .map((_, i) => `"_${i + 1}"`)
    .join(', ')})
  ON ${keyColumns.map((c, i) => `"_eg_t".${quoteIdent(c.name)} = "_eg_input"."_${i + 1}"::${castType(c.kind)}`).join(' AND ')}`;

  const getMany = `SELECT ${[...names, version, created, updated].map((c) => `"_eg_t".${c}`).join(', ')}
FROM ${tableSql} AS "_eg_t"
JOIN unnest(${keyColumns.map((_, i) => `$${i + 1}::TEXT[]`).join(', ')}) AS "_eg_input"(${keyColumns
    .map((_, i) => `"_${i + 1}"`)
    .join(', ')})
  ON ${keyColumns.map((c, i) => `"_eg_t".${quoteIdent(c.name)} = "_eg_input"."_${i + 1}"::${castType(c.kind)}`).join(' AND ')}${
    soft ? `\nWHERE "_eg_t".${deletedAt} IS NULL` : ''
  }`;

  return {
    inTransaction,
    descriptor,
    tableSql,
    columns,
    keyIndexes,
    dialect: postgresDialect(descriptor, schema),
    listSelect,
    get,
    insert,
    insertNumbered,
    update,
    updateMany,
    replaceMany,
    updateKept,
    delete: remove(false, soft ? 'mark' : 'delete'),
    deleteVersion: remove(true, soft ? 'mark' : 'delete'),
    deleteMany,
    purge: remove(false, 'purge'),
    purgeVersion: remove(true, 'purge'),
    getDeleted,
    restore,
    existing,
    getMany,
    lockVersion,
    drafter: events ? recorder : undefined,
    recorder,
  };
}

/** Statement names are derived from the text, so a name never meets two different texts. */
const names = new Map<string, string>();
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `eg_${shortHash(text, 24)}`;
    if (names.size > 10_000) names.clear();
    names.set(text, name);
  }
  return name;
}

/**
 * Replaces the unqualified table of the shared builder's `FROM` with the schema-qualified one;
 * column references stay `"table"."column"`, which PostgreSQL resolves against the FROM item.
 */
export function qualifyFrom(sql: string, head: string, table: string, tableSql: string): string {
  const bare = `${head} FROM ${quoteIdent(table)}`;
  if (!sql.startsWith(bare)) {
    throw new Error(`PostgreSQL driver: unexpected list SQL shape: ${sql.slice(0, 120)}`);
  }
  if (tableSql === quoteIdent(table)) return sql;
  return `${head} FROM ${tableSql}${sql.slice(bare.length)}`;
}
