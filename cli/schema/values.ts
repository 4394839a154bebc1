/**
 * Typed reads of positioned nodes for the value rules. A value of the wrong JSON type reads as
 * `undefined`: the structure check (structure.ts, schemas/entity-schema.json) has reported it, and
 * the rules skip it and go on checking everything else.
 */
import type { MapEntry, MapNode, SchemaNode, SeqNode } from './node.js';
import type { Position } from './report.js';

/** A string read from a list, with where it was written. */
export interface PositionedString {
  readonly value: string;
  readonly position: Position;
}

/** The entry for `key`, if the mapping has one. */
export function entryOf(map: MapNode, key: string): MapEntry | undefined {
  return map.entries.find((entry) => entry.key === key);
}

/** Names a node's value for a message: `the string "yes"`, `the number 3`, `a list`, … */
export function describeNode(node: SchemaNode): string {
  if (node.kind === 'map') return 'a mapping';
  if (node.kind === 'seq') return 'a list';
  const value = node.value;
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return String(value);
}

/** Upper-cases the first letter, for labels that start a message. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `entry.value` as a string, if it is one (a value of another type is a structure problem). */
export function readString(entry: MapEntry): string | undefined {
  const node = entry.value;
  return node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
}

/** `entry.value` as a boolean, if it is one; strings such as "yes" or "true" are not guessed. */
export function readBoolean(entry: MapEntry): boolean | undefined {
  const node = entry.value;
  return node.kind === 'scalar' && typeof node.value === 'boolean' ? node.value : undefined;
}

/** `entry.value` as a mapping, if it is one. */
export function readMap(entry: MapEntry): MapNode | undefined {
  return entry.value.kind === 'map' ? entry.value : undefined;
}

/** `entry.value` as a list, if it is one. */
export function readSeq(entry: MapEntry): SeqNode | undefined {
  return entry.value.kind === 'seq' ? entry.value : undefined;
}

/** The string items of `entry.value`, if it is a list; other items are skipped. */
export function readStringList(entry: MapEntry): PositionedString[] | undefined {
  const seq = readSeq(entry);
  if (seq === undefined) return undefined;
  return seq.items.flatMap((item) =>
    item.kind === 'scalar' && typeof item.value === 'string'
      ? [{ value: item.value, position: item.position }]
      : [],
  );
}
