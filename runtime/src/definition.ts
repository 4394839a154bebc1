import type { KeyValues, TableDescriptor } from './driver.js';
import type { Issue, IssuePath } from './issues.js';

/**
 * Converts one value of a request body. Called only for values that are present (not `undefined`
 * and not `null`); returns the canonical value, or `undefined` after pushing an issue at
 * `[...parent, key]`.
 */
export type Converter<T> = (
  value: unknown,
  parent: IssuePath,
  key: string | number,
  issues: Issue[],
) => T | undefined;

/** The schema type of a field and, for OBJECT and ARRAY fields, what lies inside. */
export interface FieldInfo {
  readonly type: string;
  /** Inner fields of an OBJECT field. */
  readonly fields?: Readonly<Record<string, FieldInfo>>;
  /** Element of an ARRAY field. */
  readonly element?: FieldInfo;
  /** ENTITY_REF to an entity keyed by one INTEGER field: ids are numbers. */
  readonly integerRef?: true;
  /** Allowed values of an ENUM or SELECT field. */
  readonly values?: readonly string[];
}

/** Everything the generic record operations need to know about one entity; generated per entity. */
export interface EntityDefinition<TRecord extends object = object> {
  /** Entity name as written in the schema, e.g. `PRODUCT`. */
  readonly name: string;
  readonly table: TableDescriptor;
  /** Joins the key values of a composite key into the record id. */
  readonly keySeparator: string;
  /** For a single-record entity, the id of its one record. */
  readonly singleRecordId: string | undefined;
  /** Every top-level field by name, for filters and sorting. */
  readonly fields: Readonly<Record<string, FieldInfo>>;
  /**
   * Converts and validates one record of a request body (every field, required fields, unknown
   * fields). Issue paths are relative to the record. Returns `undefined` when any issue was pushed.
   */
  read(input: unknown, issues: Issue[]): TRecord | undefined;
  /** The key field values of a valid record, in `lk` order. */
  keyOf(record: TRecord): KeyValues;
  /** The record id: the key values as text joined by the key separator. */
  idOf(record: TRecord): string;
  /** Splits and converts an id from a URL; `undefined` when no record can have that id. */
  parseId(id: string): KeyValues | undefined;
}
