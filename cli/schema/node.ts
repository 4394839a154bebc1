/**
 * A small positioned tree of JSON-like values, built from the `yaml` package's AST. The
 * validator walks this instead of the YAML AST so that it needs no knowledge of YAML
 * (aliases, tags, scalar styles) and every value it sees carries its source position.
 */
import type { Document, LineCounter, Node as YamlNode } from 'yaml';
import { yamlPackage } from './yaml.js';
import type { JsonValue } from './types.js';
import type { Position, Reporter } from './report.js';

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly position: Position;
  readonly value: string | number | boolean | null;
}

export interface MapEntry {
  readonly key: string;
  readonly keyPosition: Position;
  readonly value: SchemaNode;
}

export interface MapNode {
  readonly kind: 'map';
  readonly position: Position;
  /** In source order; a repeated key is reported and only its first entry is kept. */
  readonly entries: readonly MapEntry[];
  /** The value the quick parse made this node of, which `toJsonValue` gives back as it is. */
  readonly parsed?: JsonValue;
}

export interface SeqNode {
  readonly kind: 'seq';
  readonly position: Position;
  readonly items: readonly SchemaNode[];
  /** As for a map. */
  readonly parsed?: JsonValue;
}

export type SchemaNode = ScalarNode | MapNode | SeqNode;

interface ConvertContext {
  readonly document: Document;
  readonly lineCounter: LineCounter;
  readonly reporter: Reporter;
  /** Alias targets being converted, to stop recursive aliases (`&a [*a]`). */
  readonly active: Set<YamlNode>;
  /** Nodes that alias expansion may still produce (guards against "billion laughs" input). */
  aliasBudget: number;
}

/** Far above any real schema's shared definitions, far below what exhausts memory. */
const ALIAS_NODE_LIMIT = 100_000;

/**
 * Converts the contents of a parsed YAML document. Reports DUPLICATE_KEY, keys that are not
 * scalars and values JSON cannot hold (`.inf`, `.nan`, YAML 1.1 timestamps and binaries).
 */
export function fromYaml(
  node: YamlNode | null,
  document: Document,
  lineCounter: LineCounter,
  reporter: Reporter,
): SchemaNode {
  const context: ConvertContext = {
    document,
    lineCounter,
    reporter,
    active: new Set(),
    aliasBudget: ALIAS_NODE_LIMIT,
  };
  return convert(node, context, { line: 1, column: 1 });
}

function convert(
  node: YamlNode | null | undefined,
  context: ConvertContext,
  fallback: Position,
): SchemaNode {
  if (node === null || node === undefined) {
    return { kind: 'scalar', position: fallback, value: null };
  }
  const position = positionOf(node, context, fallback);
  if (context.active.size > 0 && --context.aliasBudget < 0) {
    if (context.aliasBudget === -1) {
      context.reporter.report(
        position,
        'PARSE_ERROR',
        'Invalid YAML: aliases expand to too many nodes',
      );
    }
    return { kind: 'scalar', position, value: null };
  }
  const { isAlias, isMap, isScalar, isSeq } = yamlPackage();
  if (isAlias(node)) return convertAlias(node.resolve(context.document), position, context);
  if (isMap(node)) return convertMap(node.items, position, context);
  if (isSeq(node)) {
    return {
      kind: 'seq',
      position,
      items: node.items.map((item) => convert(asNode(item), context, position)),
    };
  }
  if (isScalar(node)) return convertScalar(node.value, position, context);
  return { kind: 'scalar', position, value: null };
}

/** An alias stands for its anchor's value; positions inside point at the anchor's text. */
function convertAlias(
  target: YamlNode | undefined,
  position: Position,
  context: ConvertContext,
): SchemaNode {
  if (target === undefined) return { kind: 'scalar', position, value: null }; // yaml reports it
  if (context.active.has(target)) {
    context.reporter.report(
      position,
      'PARSE_ERROR',
      'Invalid YAML: an alias refers to the node that contains it',
    );
    return { kind: 'scalar', position, value: null };
  }
  context.active.add(target);
  const converted = convert(target, context, position);
  context.active.delete(target);
  return { ...converted, position };
}

function convertMap(
  pairs: readonly { key: unknown; value: unknown }[],
  position: Position,
  context: ConvertContext,
): MapNode {
  const entries: MapEntry[] = [];
  const seen = new Map<string, Position>();
  for (const pair of pairs) {
    const keyNode = convert(asNode(pair.key), context, position);
    const key = keyText(keyNode, context);
    if (key === undefined) continue;
    const first = seen.get(key);
    if (first !== undefined) {
      context.reporter.report(
        keyNode.position,
        'DUPLICATE_KEY',
        `Duplicate key '${key}'; it is already set at line ${first.line}, column ${first.column}`,
      );
      continue;
    }
    seen.set(key, keyNode.position);
    entries.push({
      key,
      keyPosition: keyNode.position,
      value: convert(asNode(pair.value), context, keyNode.position),
    });
  }
  return { kind: 'map', position, entries };
}

function keyText(keyNode: SchemaNode, context: ConvertContext): string | undefined {
  if (keyNode.kind === 'scalar' && keyNode.value !== null) return String(keyNode.value);
  context.reporter.report(keyNode.position, 'INVALID_VALUE', 'Mapping keys must be plain strings');
  return undefined;
}

function convertScalar(value: unknown, position: Position, context: ConvertContext): ScalarNode {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) {
    return { kind: 'scalar', position, value };
  }
  if (typeof value === 'number' && Number.isFinite(value)) {
    return { kind: 'scalar', position, value };
  }
  context.reporter.report(
    position,
    'INVALID_VALUE',
    `${typeof value === 'number' ? String(value) : 'This value'} is not a JSON value; write a string, number, boolean or null`,
  );
  return { kind: 'scalar', position, value: null };
}

/** Collection items of a parsed document are nodes or null (an empty value). */
function asNode(value: unknown): YamlNode | null {
  return yamlPackage().isNode(value) ? value : null;
}

function positionOf(node: YamlNode, context: ConvertContext, fallback: Position): Position {
  const offset = node.range?.[0];
  if (offset === undefined) return fallback;
  const { line, col } = context.lineCounter.linePos(offset);
  return { line, column: col };
}

/** The plain JSON value of a node (objects get own properties even for keys like `__proto__`). */
export function toJsonValue(node: SchemaNode): JsonValue {
  if (node.kind === 'scalar') return node.value;
  if (node.parsed !== undefined) return node.parsed;
  if (node.kind === 'seq') return node.items.map(toJsonValue);
  const object: { [key: string]: JsonValue } = {};
  for (const entry of node.entries) {
    Object.defineProperty(object, entry.key, {
      value: toJsonValue(entry.value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}
