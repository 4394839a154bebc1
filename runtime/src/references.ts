/**
 * Integrity of references between entities (SPEC §11), the part both drivers share: which tables
 * reference which, how a reference's value relates to the referenced record's key, how EMPTY and
 * a rename change a referencing record, and the errors a write ends with. Each driver runs the
 * checks and cascades in the write's own transaction (sqlite/references.ts,
 * postgres/references.ts).
 */
import type {
  KeyValue,
  KeyValues,
  ReferenceDescriptor,
  StoredFields,
  TableDescriptor,
} from './driver.js';
import { HttpError, quoteInput } from './errors.js';
import type { Issue } from './issues.js';
import { recordIdFunction } from './record-id.js';
import { DEFAULT_KEY_SEPARATOR } from './schema.js';

/** A reference seen from the referenced table: the table that holds it, and the reference. */
export interface IncomingReference {
  readonly source: TableDescriptor;
  readonly reference: ReferenceDescriptor;
}

/** A reference seen from the referencing table, with the referenced table. */
export interface OutgoingReference {
  readonly target: TableDescriptor;
  readonly reference: ReferenceDescriptor;
}

/** The references among a driver's tables, both ways, by table name. */
export class ReferenceGraph {
  private readonly outgoingByTable = new Map<string, OutgoingReference[]>();
  private readonly incomingByTable = new Map<string, IncomingReference[]>();

  constructor(tables: readonly TableDescriptor[]) {
    const byEntity = new Map(tables.map((table) => [table.entity.toUpperCase(), table]));
    for (const source of tables) {
      for (const reference of source.references ?? []) {
        const target = byEntity.get(reference.entity.toUpperCase());
        if (target === undefined) {
          throw new Error(
            `Table ${source.table}: field ${reference.field} references entity ${reference.entity}, whose table was not opened`,
          );
        }
        push(this.outgoingByTable, source.table, { target, reference });
        push(this.incomingByTable, target.table, { source, reference });
      }
    }
  }

  /** Whether any table has a reference that keeps its integrity. */
  get empty(): boolean {
    return this.outgoingByTable.size === 0;
  }

  /** The references `table` holds. */
  outgoing(table: TableDescriptor): readonly OutgoingReference[] {
    return this.outgoingByTable.get(table.table) ?? [];
  }

  /** The references to `table`. */
  incoming(table: TableDescriptor): readonly IncomingReference[] {
    return this.incomingByTable.get(table.table) ?? [];
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Whether a reference to `target` holds a number: the target is keyed by one INTEGER field. */
export function numericReference(target: TableDescriptor): boolean {
  if (target.key.length !== 1) return false;
  return target.columns.find((column) => column.name === target.key[0])?.kind === 'integer';
}

const idFunctions = new WeakMap<TableDescriptor, (record: StoredFields) => string>();

/** The value a reference to `record` of `target` holds: its record id (a number for an integer key). */
export function referenceValueOf(target: TableDescriptor, record: StoredFields): KeyValue {
  let idOf = idFunctions.get(target);
  if (idOf === undefined) {
    idOf = recordIdFunction(target);
    idFunctions.set(target, idOf);
  }
  const id = idOf(record);
  return numericReference(target) ? Number(id) : id;
}

/** The value a reference to the record of `target` under `key` holds. */
export function referenceValueOfKey(target: TableDescriptor, key: KeyValues): KeyValue {
  if (key.length === 1) return numericReference(target) ? Number(key[0]) : String(key[0]);
  return key.map(String).join(target.keySeparator ?? DEFAULT_KEY_SEPARATOR);
}

/**
 * The key of the record of `target` a reference value names, or `undefined` when no record can
 * have it (a composite id with the wrong number of parts, a number that is no integer).
 */
export function keyOfReference(target: TableDescriptor, value: unknown): KeyValues | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const parts =
    target.key.length === 1 ? [text] : text.split(target.keySeparator ?? DEFAULT_KEY_SEPARATOR);
  if (parts.length !== target.key.length) return undefined;
  const key: KeyValue[] = [];
  for (let i = 0; i < parts.length; i++) {
    const kind = target.columns.find((column) => column.name === target.key[i])?.kind;
    const part = parts[i]!;
    if (kind === 'integer') {
      const number = Number(part);
      if (!/^-?\d+$/.test(part) || !Number.isSafeInteger(number)) return undefined;
      key.push(number);
    } else if (kind === 'boolean') {
      if (part !== 'true' && part !== 'false') return undefined;
      key.push(part === 'true');
    } else {
      key.push(part);
    }
  }
  return key;
}

/** The values a record's reference holds: none, one, or an array's elements. */
export function referenceValues(record: StoredFields, reference: ReferenceDescriptor): unknown[] {
  const value = record[reference.field];
  if (value === undefined || value === null) return [];
  if (!reference.array) return [value];
  return Array.isArray(value) ? value.filter((element) => element !== null) : [];
}

/**
 * `record` with the reference to `value` cleared (EMPTY): the field removed, or every element
 * equal to `value` removed from the array.
 */
export function emptied(
  record: StoredFields,
  reference: ReferenceDescriptor,
  value: KeyValue,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...record };
  if (!reference.array) {
    if (sameValue(next[reference.field], value)) delete next[reference.field];
    return next;
  }
  const elements = next[reference.field];
  if (Array.isArray(elements)) {
    next[reference.field] = elements.filter((element) => !sameValue(element, value));
  }
  return next;
}

/** `record` with the reference to `from` pointing at `to` instead (the target was renamed). */
export function retargeted(
  record: StoredFields,
  reference: ReferenceDescriptor,
  from: KeyValue,
  to: KeyValue,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...record };
  if (!reference.array) {
    if (sameValue(next[reference.field], from)) next[reference.field] = to;
    return next;
  }
  const elements = next[reference.field];
  if (Array.isArray(elements)) {
    next[reference.field] = elements.map((element) => (sameValue(element, from) ? to : element));
  }
  return next;
}

function sameValue(a: unknown, b: KeyValue): boolean {
  return a === b || (a !== null && a !== undefined && String(a) === String(b));
}

/**
 * 400: a written record names a record that does not exist. For a list insert, `index` is the
 * record's position (0-based, as in `error.issues[].path`).
 */
export class ReferenceMissingError extends HttpError {
  constructor(
    readonly reference: ReferenceDescriptor,
    readonly value: unknown,
    readonly index: number | undefined,
    elementIndex: number | undefined,
  ) {
    const sentence =
      `Field ${reference.field} references ${reference.entity} record ` +
      `${JSON.stringify(quoteInput(String(value)))}, which does not exist`;
    const path: (string | number)[] = [reference.field];
    if (elementIndex !== undefined) path.push(elementIndex);
    if (index !== undefined) path.unshift(index);
    const issue: Issue = { path, code: 'missing_reference', message: sentence };
    super(400, index === undefined ? sentence : `Record ${index} of the list: ${sentence}`, {
      issues: [issue],
    });
    this.name = 'ReferenceMissingError';
    this.elementIndex = elementIndex;
  }

  readonly elementIndex: number | undefined;

  /** The same error for the record at `index` of a list insert. */
  at(index: number): ReferenceMissingError {
    return new ReferenceMissingError(this.reference, this.value, index, this.elementIndex);
  }
}

/** 409: a RESTRICT reference keeps the record from being deleted. */
export class ReferencedRecordError extends HttpError {
  constructor(target: TableDescriptor, id: string, source: IncomingReference, count: number) {
    super(
      409,
      `${target.entity} record ${JSON.stringify(quoteInput(id))} is referenced by ${count} ` +
        `${source.source.entity} record${count === 1 ? '' : 's'} (field ${source.reference.field})`,
    );
    this.name = 'ReferencedRecordError';
  }
}

/**
 * The first value of `records` that names no record, as the error to throw; `exists` answers for
 * one reference value (the drivers look them up, once per distinct value).
 */
export function findMissing(
  records: readonly StoredFields[],
  outgoing: readonly OutgoingReference[],
  exists: (link: OutgoingReference, value: unknown) => boolean,
): ReferenceMissingError | undefined {
  for (let index = 0; index < records.length; index++) {
    const record = records[index]!;
    for (const link of outgoing) {
      const value = record[link.reference.field];
      if (value === undefined || value === null) continue;
      const values = link.reference.array && Array.isArray(value) ? value : [value];
      for (let element = 0; element < values.length; element++) {
        const item = values[element];
        if (item === null || item === undefined || exists(link, item)) continue;
        return new ReferenceMissingError(
          link.reference,
          item,
          records.length === 1 ? undefined : index,
          link.reference.array ? element : undefined,
        );
      }
    }
  }
  return undefined;
}
