/**
 * Typed reads of positioned nodes. Each reader reports INVALID_VALUE (at the value) when the
 * node has the wrong JSON type and returns `undefined`, so validators can go on checking
 * everything else instead of stopping at the first problem.
 */
import type { MapEntry, MapNode, SchemaNode, SeqNode } from './node.js';
import type { Position, Reporter } from './report.js';
import { suggestionSuffix } from './suggest.js';

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

/** `describeNode`, plus advice for `null` (YAML's `key:` with nothing after it). */
function describeWrong(node: SchemaNode): string {
  const isNull = node.kind === 'scalar' && node.value === null;
  return isNull ? 'null (leave the key out instead)' : describeNode(node);
}

/** Upper-cases the first letter, for labels that start a message. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `entry.value` as a string; `owner` names what holds the key, e.g. `field 'price' of entity PRODUCT`. */
export function readString(entry: MapEntry, owner: string, reporter: Reporter): string | undefined {
  const node = entry.value;
  if (node.kind === 'scalar' && typeof node.value === 'string') return node.value;
  reporter.report(
    node.position,
    'INVALID_VALUE',
    `'${entry.key}' of ${owner} must be a string, not ${describeWrong(node)}`,
  );
  return undefined;
}

/** `entry.value` as a boolean; strings such as "yes" or "true" are refused, not guessed. */
export function readBoolean(
  entry: MapEntry,
  owner: string,
  reporter: Reporter,
): boolean | undefined {
  const node = entry.value;
  if (node.kind === 'scalar' && typeof node.value === 'boolean') return node.value;
  reporter.report(
    node.position,
    'INVALID_VALUE',
    `'${entry.key}' of ${owner} must be true or false, not ${describeWrong(node)}`,
  );
  return undefined;
}

/** `entry.value` as a mapping. */
export function readMap(entry: MapEntry, owner: string, reporter: Reporter): MapNode | undefined {
  const node = entry.value;
  if (node.kind === 'map') return node;
  reporter.report(
    node.position,
    'INVALID_VALUE',
    `'${entry.key}' of ${owner} must be a mapping, not ${describeWrong(node)}`,
  );
  return undefined;
}

/** `entry.value` as a list. */
export function readSeq(entry: MapEntry, owner: string, reporter: Reporter): SeqNode | undefined {
  const node = entry.value;
  if (node.kind === 'seq') return node;
  reporter.report(
    node.position,
    'INVALID_VALUE',
    `'${entry.key}' of ${owner} must be a list, not ${describeWrong(node)}`,
  );
  return undefined;
}

/** The string items of `entry.value` (a list of strings); other items are reported and skipped. */
export function readStringList(
  entry: MapEntry,
  owner: string,
  reporter: Reporter,
): PositionedString[] | undefined {
  const seq = readSeq(entry, owner, reporter);
  if (seq === undefined) return undefined;
  const strings: PositionedString[] = [];
  for (const item of seq.items) {
    if (item.kind === 'scalar' && typeof item.value === 'string') {
      strings.push({ value: item.value, position: item.position });
    } else {
      const message = `Each entry of '${entry.key}' of ${owner} must be a string, not ${describeWrong(item)}`;
      reporter.report(item.position, 'INVALID_VALUE', message);
    }
  }
  return strings;
}

/**
 * Reports UNKNOWN_KEY for every key of `map` not in `allowed`, with a did-you-mean or the list of
 * allowed keys. `explain` may give a more specific message for keys known to be misplaced.
 */
export function checkKeys(
  map: MapNode,
  allowed: readonly string[],
  owner: string,
  reporter: Reporter,
  explain?: (key: string) => string | undefined,
): void {
  for (const entry of map.entries) {
    if (allowed.includes(entry.key)) continue;
    const message =
      explain?.(entry.key) ??
      `Unknown key '${entry.key}' in ${owner}` +
        suggestionSuffix(entry.key, allowed, `; allowed keys are ${allowed.join(', ')}`);
    reporter.report(entry.keyPosition, 'UNKNOWN_KEY', message);
  }
}
