/**
 * Turns one schema file's text into positioned documents: JSON or YAML by extension, else by
 * content. Syntax problems become PARSE_ERROR diagnostics; no schema rules are checked here.
 */
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import type { Document, LineCounter, YAMLError } from 'yaml';
import { findJsonSyntaxError } from './json-syntax.js';
import { fromYaml, type MapEntry, type SchemaNode } from './node.js';
import { positionAt, type Position, type Reporter } from './report.js';
import type { JsonValue } from './types.js';
import { yamlPackage } from './yaml.js';

export type SchemaFormat = 'json' | 'yaml';

/**
 * The format of a schema file: `.json` is JSON, `.yaml`/`.yml` YAML; any other name is JSON
 * when its text starts with `{` or `[`, else YAML.
 */
export function detectFormat(file: string, text: string): SchemaFormat {
  const lower = file.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  return /^\s*[{[]/.test(text) ? 'json' : 'yaml';
}

/**
 * Parses `text` into the root node of every non-empty document it holds (one for JSON; one per
 * `---` section for YAML). Documents with syntax errors are reported and left out.
 *
 * `positions: 'none'` asks for the quick parse (see `parseQuickly`) when the text allows it: its
 * nodes carry no real positions, so a caller that finds a problem must parse again with
 * `'exact'` to report where it is. Returns whether the positions are exact. `documents`, when
 * given, are the documents `rawText` holds, parsed already: the quick parse uses them.
 */
export function parseSchemaText(
  file: string,
  rawText: string,
  reporter: Reporter,
  positions: 'exact' | 'none' = 'exact',
  documents?: readonly unknown[],
): { roots: SchemaNode[]; exact: boolean } {
  // Editors do not count a byte-order mark as a column, so neither do we.
  const text = rawText.startsWith('\uFEFF') ? rawText.slice(1) : rawText;
  const format = detectFormat(file, text);
  // YAML accepts more than JSON (comments, trailing commas): a .json file is checked as JSON.
  const jsonError =
    format === 'json' && documents === undefined ? findJsonSyntaxError(text) : undefined;
  if (positions === 'none' && jsonError === undefined) {
    const roots = documents === undefined ? parseQuickly(text) : quickNodes(documents);
    if (roots !== undefined) return { roots, exact: false };
  }
  return { roots: parseExactly(text, format, jsonError, reporter), exact: true };
}

function parseExactly(
  text: string,
  format: SchemaFormat,
  error: ReturnType<typeof findJsonSyntaxError>,
  reporter: Reporter,
): SchemaNode[] {
  if (format === 'json') {
    if (error !== undefined) {
      reporter.report(
        positionAt(text, error.offset),
        'PARSE_ERROR',
        `Invalid JSON: ${error.message}`,
      );
      return [];
    }
  }
  return parseYamlDocuments(text, format, reporter);
}

/**
 * YAML features where js-yaml and the `yaml` package read a text differently, or that the exact
 * parse reports: anchors, aliases and tags (a `&`, `*` or `!` starting a token), explicit and
 * null keys, merge keys, directives, binary integers.
 */
const NOT_QUICK =
  /(^|[\s[{,])[&*!][^\s,\]}]|(^|\s)\?\s|(^|[\s{,])(~|null|Null|NULL)?\s*:\s|<<|^%|\b0b[01]/m;

/** Where the quick parse puts every node: at the start of the file (see `parseSchemaText`). */
const NO_POSITION: Position = { line: 1, column: 1 };

/**
 * The quick parse: js-yaml (several times faster than the `yaml` package, without source
 * positions) over a text that uses none of NOT_QUICK's features, straight to nodes. `undefined`
 * when it cannot be used: such a feature, a syntax error or duplicate key (js-yaml throws), an
 * empty document or a value JSON cannot hold — the exact parse then reports what is wrong.
 */
function parseQuickly(text: string): SchemaNode[] | undefined {
  if (NOT_QUICK.test(text)) return undefined;
  let documents: unknown[];
  try {
    documents = loadAll(text, undefined, { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  return quickNodes(documents);
}

/** The quick parse's nodes of parsed documents; `undefined` as for `parseQuickly`. */
function quickNodes(documents: readonly unknown[]): SchemaNode[] | undefined {
  const roots: SchemaNode[] = [];
  for (const document of documents) {
    const root = quickNode(document);
    if (root === undefined) return undefined;
    roots.push(root);
  }
  return roots;
}

function quickNode(value: unknown): SchemaNode | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') {
    return { kind: 'scalar', position: NO_POSITION, value };
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? { kind: 'scalar', position: NO_POSITION, value } : undefined;
  }
  if (Array.isArray(value)) {
    const items: SchemaNode[] = [];
    for (const item of value) {
      const node = item === null ? NULL_NODE : quickNode(item);
      if (node === undefined) return undefined;
      items.push(node);
    }
    return { kind: 'seq', position: NO_POSITION, items, parsed: value as JsonValue };
  }
  if (typeof value === 'object' && value !== null) {
    const entries: MapEntry[] = [];
    for (const [key, item] of Object.entries(value)) {
      const node = item === null ? NULL_NODE : quickNode(item);
      if (node === undefined) return undefined;
      entries.push({ key, keyPosition: NO_POSITION, value: node });
    }
    return { kind: 'map', position: NO_POSITION, entries, parsed: value as JsonValue };
  }
  // null (an empty document) and anything else: for the exact parse to judge.
  return undefined;
}

const NULL_NODE: SchemaNode = { kind: 'scalar', position: NO_POSITION, value: null };

/** Valid JSON is valid YAML, so both formats get their source positions from the `yaml` package. */
function parseYamlDocuments(text: string, format: SchemaFormat, reporter: Reporter): SchemaNode[] {
  const { LineCounter, parseAllDocuments } = yamlPackage();
  const lineCounter = new LineCounter();
  // Duplicate keys are detected while converting, to name the key and where it was first set.
  const documents = parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: false,
    prettyErrors: false,
  });
  const roots: SchemaNode[] = [];
  for (const document of documents) {
    const problems = [...document.errors, ...document.warnings];
    for (const problem of problems) reportYamlProblem(problem, format, lineCounter, reporter);
    if (problems.length > 0 || isEmptyDocument(document)) continue;
    const before = reporter.diagnostics.length;
    const root = fromYaml(document.contents, document, lineCounter, reporter);
    // A tree cut short (recursive or exploding aliases) would only produce follow-up noise.
    const cutShort = reporter.diagnostics
      .slice(before)
      .some((diagnostic) => diagnostic.code === 'PARSE_ERROR');
    if (!cutShort) roots.push(root);
  }
  return roots;
}

/**
 * Warnings count too: the only ones YAML gives for plain data (e.g. an unresolved `!tag`) mean
 * the value may not be what the author intended.
 */
function reportYamlProblem(
  problem: YAMLError,
  format: SchemaFormat,
  lineCounter: LineCounter,
  reporter: Reporter,
): void {
  const { line, col } = lineCounter.linePos(problem.pos[0]);
  const message = problem.message.replace(/\s+/g, ' ').trim();
  reporter.report(
    { line, column: col },
    'PARSE_ERROR',
    `Invalid ${format === 'json' ? 'JSON' : 'YAML'}: ${message}`,
  );
}

/** A document with no content at all, such as the one after a trailing `---`. */
function isEmptyDocument(document: Document): boolean {
  const contents = document.contents;
  if (contents === null) return true;
  const range = contents.range;
  return (
    yamlPackage().isScalar(contents) &&
    contents.value === null &&
    range !== undefined &&
    range !== null &&
    range[0] === range[1]
  );
}
