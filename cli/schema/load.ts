/**
 * The schema phase's entry points: read files (the only disk access), then parse and validate
 * every document of every file, collecting all problems before anything else runs.
 */
import { readFile } from 'node:fs/promises';
import { sortDiagnostics, type Diagnostic } from '../diagnostics.js';
import type { JsonValue, LoadedEntity, SchemaSource, SourcePosition } from './types.js';
import { toJsonValue, type SchemaNode } from './node.js';
import { parseSchemaText } from './parse.js';
import { checkEntityNames, checkEntityRefs, resolveEntityRefs } from './references.js';
import { Reporter } from './report.js';
import type { DocumentInFile } from './references.js';
import { SCHEMA_KEY, validateEntityDocument } from './validate.js';
import { describeNode } from './values.js';

/** A validated document together with the node it came from. */
interface LoadedDocument extends DocumentInFile {
  readonly node: SchemaNode;
}

/**
 * Parses and validates ENTITY documents from the given sources. Every problem in every file is
 * reported (sorted by file, line, column); `entities` is empty unless there are none. Entities
 * come in input order: file order, then document order.
 *
 * @example loadSchemas([{ file: 'schema.yaml', text }]).diagnostics.map(formatDiagnostic)
 */
export function loadSchemas(
  sources: readonly SchemaSource[],
  positions: 'exact' | 'none' = 'exact',
): {
  entities: LoadedEntity[];
  diagnostics: Diagnostic[];
  /** Whether the entities carry their real source positions (see `parseSchemaText`). */
  exactPositions: boolean;
} {
  const reporters = sources.map((source) => new Reporter(source.file));
  let exactPositions = true;
  const documents = sources.flatMap((source, index) => {
    const loaded = loadSource(source, reporters[index]!, positions);
    exactPositions &&= loaded.exact;
    return loaded.documents;
  });
  const names = checkEntityNames(documents);
  checkEntityRefs(documents, names);
  const diagnostics = sortDiagnostics(
    unique(reporters.flatMap((reporter) => reporter.diagnostics)),
  );
  if (diagnostics.length > 0) {
    // Problems are reported where they are: with positions.
    if (!exactPositions) return loadSchemas(sources, 'exact');
    return { entities: [], diagnostics, exactPositions };
  }
  const entities = documents.map((document) => toLoadedEntity(document, names));
  return { entities, diagnostics, exactPositions };
}

/** Parses one file and validates each ENTITY document in it. */
function loadSource(
  source: SchemaSource,
  reporter: Reporter,
  positions: 'exact' | 'none',
): { documents: LoadedDocument[]; exact: boolean } {
  const { roots, exact } = parseSchemaText(
    source.file,
    source.text,
    reporter,
    positions,
    source.documents,
  );
  if (roots.length === 0 && reporter.diagnostics.length === 0) {
    reporter.report(
      { line: 1, column: 1 },
      'NOT_AN_ENTITY',
      `${source.file} holds no document; expected at least one ENTITY document`,
    );
  }
  const documents = roots
    .flatMap((root) => entityNodes(root, reporter))
    .flatMap((node) => {
      const validated = validateEntityDocument(node, reporter);
      return validated === undefined ? [] : [{ reporter, validated, node }];
    });
  return { documents, exact };
}

/**
 * The ENTITY documents of one parsed document: itself, or the items of a top-level list (the
 * JSON form; accepted in YAML too, since JSON is YAML).
 */
function entityNodes(root: SchemaNode, reporter: Reporter): SchemaNode[] {
  if (root.kind !== 'seq') return [root];
  if (root.items.length === 0) {
    reporter.report(root.position, 'NOT_AN_ENTITY', 'The list of ENTITY documents is empty');
  }
  return [...root.items];
}

function toLoadedEntity(
  document: LoadedDocument,
  names: ReadonlyMap<string, string>,
): LoadedEntity {
  const { validated, reporter, node } = document;
  if (validated.entity === undefined) {
    // Every path that leaves `entity` undefined reports a diagnostic first.
    throw new Error(
      `internal error: ${describeNode(node)} in ${reporter.file} failed validation silently`,
    );
  }
  const fieldPositions: Record<string, SourcePosition> = {};
  for (const field of validated.fields) {
    // Field names are never prototype keys (RESERVED_NAME), so plain assignment is safe.
    fieldPositions[field.name] ??= { file: reporter.file, ...field.namePosition };
  }
  return {
    entity: resolveEntityRefs(validated.entity, names),
    // Built from the same tree as the validation (equal to the YAML document's toJSON()), less
    // the editor's `$schema` key, which is no part of the schema.
    document: withoutSchemaValue(toJsonValue(node)),
    position: { file: reporter.file, ...validated.entityKeyPosition },
    fieldPositions,
  };
}

/** A document's value without its `$schema` key (see `withoutSchemaKey`). */
function withoutSchemaValue(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (!Object.hasOwn(value, SCHEMA_KEY)) return value;
  // fromEntries defines own properties, so even a `__proto__` key stays data.
  const entries: [string, JsonValue][] = Object.entries(value);
  return Object.fromEntries(entries.filter(([key]) => key !== SCHEMA_KEY));
}

/** Drops repeated diagnostics (an aliased YAML node is checked once per alias). */
function unique(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((diagnostic) => {
    const key = JSON.stringify([
      diagnostic.file,
      diagnostic.line,
      diagnostic.column,
      diagnostic.code,
      diagnostic.message,
    ]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Reads schema files from disk, keeping each path as given for diagnostics. A file that cannot
 * be read gives FILE_NOT_READABLE at 1:1; the others are still read.
 */
export async function readSchemaSources(
  paths: readonly string[],
): Promise<{ sources: SchemaSource[]; diagnostics: Diagnostic[] }> {
  const results = await Promise.all(paths.map(readSource));
  const sources = results.flatMap((result) => ('text' in result ? [result] : []));
  const diagnostics = results.flatMap((result) => ('code' in result ? [result] : []));
  return { sources, diagnostics: sortDiagnostics(diagnostics) };
}

async function readSource(file: string): Promise<SchemaSource | Diagnostic> {
  try {
    return { file, text: await readFile(file, 'utf8') };
  } catch (error) {
    return {
      file,
      line: 1,
      column: 1,
      code: 'FILE_NOT_READABLE',
      message: `Cannot read schema file: ${readErrorText(error)}`,
    };
  }
}

/** A short, stable reason; Node's own messages repeat the path and vary by platform. */
function readErrorText(error: unknown): string {
  const code = error instanceof Error && 'code' in error ? String(error.code) : undefined;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
