/**
 * `types.ts` of each entity, compiled from its JSON Schema (./json-schema.ts) with
 * json-schema-to-typescript: the record, input and patch types are exactly what the OpenAPI
 * document says. One compile call covers every entity that needs it (the library's cost is mostly
 * per call).
 *
 * The calls run where `run` says: the CLI runs them in the generator's worker thread (../worker),
 * where the library loads while the main thread reads the schema, and compiles while the main
 * thread renders the other files.
 */
import { runTask, type TaskRunner } from '../worker/tasks.js';
import type { JsonSchema } from './json-schema.js';
import { TYPES_ROOT } from './types-compiler.js';

/** The schemas of one entity to compile, by type name; the names are unique across entities. */
export interface TypesRequest {
  readonly entity: string;
  readonly schemas: ReadonlyMap<string, JsonSchema>;
}

/**
 * The declarations of each entity's types, by entity name, in the order of its schemas. Each
 * declaration carries its doc comment.
 */
export async function compileRecordTypes(
  requests: readonly TypesRequest[],
  run: TaskRunner = runTask,
): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  if (requests.length === 0) return result;
  const groups = batches(requests);
  const texts = await Promise.all(
    groups.map((batch) => {
      const $defs: Record<string, JsonSchema> = {};
      for (const request of batch)
        for (const [name, schema] of request.schemas) $defs[name] = schema;
      return run({ kind: 'types', $defs });
    }),
  );
  groups.forEach((batch, index) => {
    const owner = new Map<string, string>();
    for (const request of batch)
      for (const name of request.schemas.keys()) owner.set(name, request.entity);
    const blocks = new Map<string, string[]>();
    for (const block of declarations(texts[index]!)) {
      if (block.name === TYPES_ROOT) continue;
      const entity = owner.get(block.name);
      // A type of its own making (it names one when two schemas share a title): a bug of ours.
      if (entity === undefined)
        throw new Error(`json-schema-to-typescript declared ${block.name}, which no schema names`);
      const list = blocks.get(entity) ?? [];
      list.push(block.text);
      blocks.set(entity, list);
    }
    for (const request of batch) {
      const order = [...request.schemas.keys()];
      const own = blocks.get(request.entity) ?? [];
      const byName = new Map(own.map((block) => [declaredName(block), block]));
      const missing = order.filter((name) => !byName.has(name));
      if (missing.length > 0)
        throw new Error(`json-schema-to-typescript gave no declaration of ${missing.join(', ')}`);
      result.set(request.entity, order.map((name) => byName.get(name)!).join('\n\n'));
    }
  });
  return result;
}

/**
 * The requests in as few compile calls as can be: the types of one call need distinct names, and
 * two entities' may clash (`ISSUE`'s input type and `ISSUE_INPUT`'s record are both `IssueInput`,
 * each in its own `types.ts`).
 */
function batches(requests: readonly TypesRequest[]): TypesRequest[][] {
  const found: { requests: TypesRequest[]; names: Set<string> }[] = [];
  for (const request of requests) {
    const names = [...request.schemas.keys()];
    let batch = found.find((candidate) => !names.some((name) => candidate.names.has(name)));
    if (batch === undefined) {
      batch = { requests: [], names: new Set() };
      found.push(batch);
    }
    batch.requests.push(request);
    for (const name of names) batch.names.add(name);
  }
  return found.map((batch) => batch.requests);
}

/**
 * The top-level declarations of the compiled text, each with the doc comment before it. The
 * library notes under each referenced definition where it was referenced from ("This interface
 * was referenced by `X`'s JSON-Schema via the `definition` …"): about our wrapper schema, not
 * about the record, so that note is dropped.
 */
function declarations(text: string): { name: string; text: string }[] {
  const found: { name: string; text: string }[] = [];
  const lines = text.split('\n');
  const scanner = new BraceScanner();
  let start = 0;
  for (let index = 0; index < lines.length; index++) {
    if (!lines[index]!.startsWith('export ')) continue;
    // The declaration runs to the end of the line where its braces are closed again.
    let end = index;
    scanner.scan(lines[end]!);
    while (scanner.depth > 0 && end + 1 < lines.length) scanner.scan(lines[++end]!);
    const comment = cleanComment(lines.slice(start, index).join('\n').trim());
    const body = lines.slice(index, end + 1).join('\n');
    found.push({ name: declaredName(body), text: comment === '' ? body : `${comment}\n${body}` });
    start = end + 1;
    index = end;
  }
  return found;
}

/**
 * Brace depth over lines of TypeScript type declarations, not counting braces inside string
 * literals (`'a{'`) or comments (a description may hold any text).
 */
class BraceScanner {
  depth = 0;
  private inComment = false;

  scan(line: string): void {
    let quote: string | undefined;
    for (let index = 0; index < line.length; index++) {
      const char = line[index]!;
      if (this.inComment) {
        if (char === '*' && line[index + 1] === '/') {
          this.inComment = false;
          index++;
        }
      } else if (quote !== undefined) {
        if (char === '\\') index++;
        else if (char === quote) quote = undefined;
      } else if (char === '/' && line[index + 1] === '*') {
        this.inComment = true;
        index++;
      } else if (char === '/' && line[index + 1] === '/') {
        return;
      } else if (char === '"' || char === "'") {
        quote = char;
      } else if (char === '{') {
        this.depth++;
      } else if (char === '}') {
        this.depth--;
      }
    }
  }
}

/** `export interface Product {` → `Product`. */
function declaredName(text: string): string {
  const match = /^export (?:interface|type) ([A-Za-z_$][\w$]*)/m.exec(text);
  if (match === null) throw new Error(`not a declaration: ${text.slice(0, 80)}`);
  return match[1]!;
}

/** A doc comment without the library's "referenced by" note; empty when nothing else is left. */
function cleanComment(comment: string): string {
  if (comment === '') return '';
  const lines = comment
    .split('\n')
    .filter(
      (line) =>
        !/This (interface|type) was referenced by `.*`'s JSON-Schema/.test(line) &&
        !/via the `definition` "/.test(line),
    );
  const inner = lines.filter((line) => !/^\s*\/\*\*\s*$|^\s*\*\/\s*$/.test(line));
  if (inner.every((line) => /^\s*\*\s*$/.test(line))) return '';
  // Trailing empty ` *` lines left where the note was.
  while (inner.length > 0 && /^\s*\*\s*$/.test(inner[inner.length - 1]!)) inner.pop();
  return ['/**', ...inner, ' */'].join('\n');
}
