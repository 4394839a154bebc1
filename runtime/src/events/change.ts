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
  /** The record after the change; before it, for `deleted`. */
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
  /** The record as JSON text. */
  readonly record: string;
}

/** Builds the drafts of one table's writes; one per table, kept by the driver. */
export class ChangeDrafter {
  private readonly idOf: (record: StoredFields) => string;
  private readonly separator: string;

  constructor(private readonly table: TableDescriptor) {
    this.idOf = recordIdFunction(table);
    this.separator = table.keySeparator ?? DEFAULT_KEY_SEPARATOR;
  }

  /** The draft of `op` on `record` (for `deleted`, the record as it was). */
  draft(op: ChangeOp, record: StoredFields): ChangeDraft {
    return { entity: this.table.entity, id: this.idOf(record), op, record: JSON.stringify(record) };
  }

  /** Whether storing `record` under `key` renames it: its own key is another one. */
  renames(key: KeyValues, record: StoredFields): boolean {
    const id = key.length === 1 ? String(key[0]) : key.map(String).join(this.separator);
    return id !== this.idOf(record);
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
    const { entity, id, op, record } = drafts[index]!;
    changes[index] = { entity, id, op, record, seq: firstSeq + index, timeUnix };
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
