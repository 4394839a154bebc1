/**
 * Turns one schema file's text into positioned documents: JSON or YAML by extension, else by
 * content. Syntax problems become PARSE_ERROR diagnostics; no schema rules are checked here.
 */
import { LineCounter, isScalar, parseAllDocuments, type Document, type YAMLError } from 'yaml';
import { findJsonSyntaxError } from './json-syntax.js';
import { fromYaml, type SchemaNode } from './node.js';
import { positionAt, type Reporter } from './report.js';

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
 */
export function parseSchemaText(file: string, rawText: string, reporter: Reporter): SchemaNode[] {
  // Editors do not count a byte-order mark as a column, so neither do we.
  const text = rawText.startsWith('\uFEFF') ? rawText.slice(1) : rawText;
  const format = detectFormat(file, text);
  if (format === 'json') {
    const error = findJsonSyntaxError(text);
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

/** Valid JSON is valid YAML, so both formats get their source positions from the `yaml` package. */
function parseYamlDocuments(text: string, format: SchemaFormat, reporter: Reporter): SchemaNode[] {
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
    isScalar(contents) &&
    contents.value === null &&
    range !== undefined &&
    range !== null &&
    range[0] === range[1]
  );
}
