/**
 * The PostgreSQL side of record history (SPEC §13, `history.ts`): `_eg_history`, written inside
 * the write's transaction from the change drafts the outbox gets.
 */
import type pg from 'pg';
import type { HistoryEntry } from '../driver.js';
import type { ChangeDraft } from '../events/change.js';
import {
  HISTORY_TABLE,
  historyDrafts,
  historyEntry,
  historySql,
  NO_VERSION_LIMIT,
  type HistorySql,
  withVersions,
} from '../history.js';
import { qualify } from './schema.js';
import { statementName, type KeptParams } from './statements.js';

/** Where the history lives and how its statements read. */
export class PostgresHistory {
  readonly table: string;
  readonly sql: HistorySql;

  constructor(
    schema: string | undefined,
    /** The entities that keep their history. */
    readonly entities: ReadonlySet<string>,
  ) {
    this.table = qualify(schema, HISTORY_TABLE);
    this.sql = historySql(this.table, (n) => `$${n}`);
  }

  /** The DDL of the history table (idempotent). */
  static createSql(schema: string | undefined): string {
    return `CREATE TABLE IF NOT EXISTS ${qualify(schema, HISTORY_TABLE)} (
  "entity" TEXT COLLATE "C" NOT NULL,
  "record_id" TEXT COLLATE "C" NOT NULL,
  "version" BIGINT NOT NULL,
  "op" TEXT NOT NULL,
  "by" TEXT,
  "record" TEXT NOT NULL,
  "time_ms" BIGINT NOT NULL,
  PRIMARY KEY ("entity", "record_id", "version")
)`;
  }

  /**
   * A CTE `"_eg_kept"` that keeps the next version of one record for each row of `guard` (a CTE
   * with a row only when the write happened) and returns it as `"version"`: the history's `insert`
   * as part of the write's own statement, so the write, its version and its event are one round
   * trip. The last version is read from the statement's snapshot; the write's row lock (taken by
   * `guard`, whose version check fails after any other write of the record) orders writers of one
   * record. Parameters: the entity, the record's id, the op, by, the record and the time.
   */
  keptCte(guard: string, p: KeptParams): string {
    const table = this.table;
    return `"_eg_kept" AS (
  INSERT INTO ${table} ("entity", "record_id", "version", "op", "by", "record", "time_ms")
  SELECT ${p.entity}::TEXT, ${p.id}::TEXT, coalesce((SELECT "version" FROM ${table}
     WHERE "entity" = ${p.entity}::TEXT AND "record_id" = ${p.id}::TEXT ORDER BY "version" DESC LIMIT 1), 0) + 1,
         ${p.op}::TEXT, ${p.by}::TEXT, ${p.record}::TEXT, ${p.now}::BIGINT
    FROM ${guard}
  RETURNING "version"
)`;
  }

  /** Whether a write of `entity`, or a cascade of it, may keep versions. */
  get any(): boolean {
    return this.entities.size > 0;
  }

  /**
   * Keeps the versions of `drafts` written at `now` by `by`, on the write's transaction; returns
   * the drafts with their versions (for the outbox, so events carry them).
   */
  async append(
    client: pg.PoolClient,
    drafts: readonly ChangeDraft[],
    now: number,
    by: string | null,
  ): Promise<ChangeDraft[]> {
    const versions: number[] = [];
    for (const kept of historyDrafts(drafts, this.entities)) {
      if (kept.from !== undefined) {
        await client.query({
          name: statementName(this.sql.rekey),
          text: this.sql.rekey,
          values: [kept.entity, kept.id, kept.from],
        });
      }
      const result = await client.query({
        name: statementName(this.sql.insert),
        text: this.sql.insert,
        values: [kept.entity, kept.id, kept.op, by, kept.record, now],
        rowMode: 'array',
      });
      versions.push(Number((result.rows[0] as unknown[])[0]));
    }
    return versions.length === 0 ? [...drafts] : withVersions(drafts, this.entities, versions);
  }

  /** `append` of every entity's drafts of a cascade, each list replaced by its versioned one. */
  async appendCascades(
    client: pg.PoolClient,
    cascaded: Map<string, ChangeDraft[]>,
    now: number,
    by: string | null,
  ): Promise<void> {
    for (const [entity, list] of cascaded)
      if (this.entities.has(entity)) cascaded.set(entity, await this.append(client, list, now, by));
  }

  /** The query of a page of versions, newest first. */
  page(entity: string, id: string, limit: number, before = NO_VERSION_LIMIT): pg.QueryArrayConfig {
    return {
      name: statementName(this.sql.page),
      text: this.sql.page,
      values: [entity, id, before, limit],
      rowMode: 'array',
    };
  }

  /** The query of the newest version at or before `time`. */
  at(entity: string, id: string, time: number): pg.QueryArrayConfig {
    return {
      name: statementName(this.sql.at),
      text: this.sql.at,
      values: [entity, id, time],
      rowMode: 'array',
    };
  }

  static entries(rows: readonly unknown[][]): HistoryEntry[] {
    return rows.map(historyEntry);
  }
}
