/**
 * The record id of a stored record: its key values as text, joined by the entity's key separator
 * (used by change events and entity definitions).
 */
import type { StoredFields, TableDescriptor } from './driver.js';
import { DEFAULT_KEY_SEPARATOR } from './schema.js';

/**
 * How records of `table` are named: the key values as text, joined by the key separator (the
 * fixed value for an entity whose key column is fixed). The one definition of a record id, shared
 * by the entity definitions (URLs, messages) and the drivers (the change events they write).
 */
export function recordIdFunction(table: TableDescriptor): (record: StoredFields) => string {
  const parts = table.key.map((name) => {
    const fixed = table.columns.find((column) => column.name === name)?.fixed;
    return fixed === undefined ? (record: StoredFields) => String(record[name]) : () => fixed;
  });
  if (parts.length === 1) return parts[0]!;
  const separator = table.keySeparator ?? DEFAULT_KEY_SEPARATOR;
  return (record) => parts.map((part) => part(record)).join(separator);
}
