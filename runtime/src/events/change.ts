/**
 * Change events (SPEC §9): what a driver appends to its outbox with each write, and the event
 * object `/events` sends and `afterCommit` hooks receive. Drivers import this module, so it holds
 * no HTTP code.
 */
import type {
  ChangeOp,
  KeyValues,
  StoredChange,
  StoredFields,
  TableDescriptor,
} from '../driver.js';
import { recordIdFunction } from '../record-id.js';
import { DEFAULT_KEY_SEPARATOR } from '../schema.js';

/** A committed change of a record of one entity: the `data` of an SSE event, an `afterCommit` argument. */
export interface ChangeEvent<TRecord extends object = Record<string, unknown>> {
  /** Position in the outbox: strictly increasing in commit order across the whole service. */
  readonly seq: number;
  /** Entity name as written in the schema, e.g. `PRODUCT`. */
  readonly entity: string;
  /** The record id, as in `/data/{entity}/{id}`. */
  readonly id: string;
  /** A rename is a `deleted` of the old id, then a `created` of the new one. */
  readonly op: ChangeOp;
  /** Present (true) on the `deleted` of a soft delete: the record was kept, marked deleted. */
  readonly soft?: true;
  /**
   * The version of the record this change made in its history: present on entities with
   * `history: true` (SPEC §13), as in `GET /data/{entity}/{id}/history`. Both events of a rename
   * carry the version of the rename.
   */
  readonly version?: number;
  /** The record after the change; before it, for `deleted` and `purged`. */
  readonly record: TRecord;
  /** Unix time in milliseconds of the write. */
  readonly timeUnix: number;
  /** The same instant, `new Date(timeUnix).toISOString()`. */
  readonly timeISO: string;
}

/** A change a driver is about to append, everything but its seq. */
export interface ChangeDraft {
  readonly entity: string;
  readonly id: string;
  readonly op: ChangeOp;
  /** A soft delete (`deleted` only). */
  readonly soft?: boolean;
  /** One of the `deleted` and `created` pair of a rename (the history keeps it as one version). */
  readonly renamed?: boolean;
  /** The version the history gave the change (entities with `history`). */
  readonly version?: number;
  /** The record as JSON text. */
  readonly record: string;
}

/** How the outbox stores the op of a soft delete: one text column holds op and mark. */
const SOFT_DELETED = 'deleted.soft';

/**
 * The op text the outbox stores for a change: the op, `deleted.soft` for a soft delete, and
 * `#<version>` after it when the change has a history version (`updated#3`), so the outbox keeps
 * its columns.
 */
export function storedOp(change: {
  readonly op: ChangeOp;
  readonly soft?: boolean;
  readonly version?: number;
}): string {
  const op = change.soft === true ? SOFT_DELETED : change.op;
  return change.version === undefined ? op : `${op}#${change.version}`;
}

/** The op, soft mark and version of an op text the outbox stored (`storedOp`). */
export function opOfStored(text: string): { op: ChangeOp; soft?: boolean; version?: number } {
  const hash = text.indexOf('#');
  const op = hash < 0 ? text : text.slice(0, hash);
  const base: { op: ChangeOp; soft?: boolean } =
    op === SOFT_DELETED ? { op: 'deleted', soft: true } : { op: op as ChangeOp };
  return hash < 0 ? base : { ...base, version: Number(text.slice(hash + 1)) };
}

/** Builds the drafts of one table's writes; one per table, kept by the driver. */
export class ChangeDrafter {
  private readonly idOf: (record: StoredFields) => string;
  private readonly separator: string;

  constructor(private readonly table: TableDescriptor) {
    this.idOf = recordIdFunction(table);
    this.separator = table.keySeparator ?? DEFAULT_KEY_SEPARATOR;
  }

  /** The draft of `op` on `record` (for `deleted`, the record as it was); `soft` marks a soft delete. */
  draft(op: ChangeOp, record: StoredFields, soft = false): ChangeDraft {
    const draft = {
      entity: this.table.entity,
      id: this.idOf(record),
      op,
      record: JSON.stringify(record),
    };
    return soft ? { ...draft, soft: true } : draft;
  }

  /** The drafts of a rename: the `deleted` of the record as it was, the `created` of the new one. */
  rename(before: StoredFields, after: StoredFields): [ChangeDraft, ChangeDraft] {
    return [
      { ...this.draft('deleted', before), renamed: true },
      { ...this.draft('created', after), renamed: true },
    ];
  }

  /** The record id of `key`. */
  idOfKey(key: KeyValues): string {
    return key.length === 1 ? String(key[0]) : key.map(String).join(this.separator);
  }

  /** Whether storing `record` under `key` renames it: its own key is another one. */
  renames(key: KeyValues, record: StoredFields): boolean {
    return this.idOfKey(key) !== this.idOf(record);
  }
}

/** The changes `drafts` became once the outbox gave the first of them `firstSeq`. */
export function committedChanges(
  drafts: readonly ChangeDraft[],
  firstSeq: number,
  timeUnix: number,
): StoredChange[] {
  // An explicit literal, not a spread: this runs once per record of a bulk insert.
  const changes = new Array<StoredChange>(drafts.length);
  for (let index = 0; index < drafts.length; index++) {
    const { entity, id, op, record, soft, version } = drafts[index]!;
    const change: StoredChange =
      soft === true
        ? { entity, id, op, soft, record, seq: firstSeq + index, timeUnix }
        : { entity, id, op, record, seq: firstSeq + index, timeUnix };
    changes[index] = version === undefined ? change : { ...change, version };
  }
  return changes;
}

/** The event object of a stored change (its record parsed). */
export function changeEvent<TRecord extends object>(change: StoredChange): ChangeEvent<TRecord> {
  return {
    seq: change.seq,
    entity: change.entity,
    id: change.id,
    op: change.op,
    ...(change.soft === true ? { soft: true as const } : {}),
    ...(change.version === undefined ? {} : { version: change.version }),
    record: JSON.parse(change.record) as TRecord,
    timeUnix: change.timeUnix,
    timeISO: new Date(change.timeUnix).toISOString(),
  };
}

/** The listeners of `ChangeFeed.watch`, shared by the drivers. */
export class ChangeListeners {
  private readonly listeners = new Set<(committed: readonly StoredChange[]) => void>();

  get size(): number {
    return this.listeners.size;
  }

  add(listener: (committed: readonly StoredChange[]) => void): () => void {
    // Wrapped, so the same function may watch twice and each stop ends only its own calls.
    const own = (committed: readonly StoredChange[]): void => listener(committed);
    this.listeners.add(own);
    return () => {
      this.listeners.delete(own);
    };
  }

  /** Tells every listener; a listener that throws does not keep the others from hearing. */
  emit(committed: readonly StoredChange[]): void {
    for (const listener of this.listeners) {
      try {
        listener(committed);
      } catch {
        // A listener's own failure is its business (the hub and the hooks catch their errors).
      }
    }
  }
}
