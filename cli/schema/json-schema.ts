/**
 * Structure checks through the JSON Schemas the package ships (schemas/*.json, the same files
 * editors complete from): ajv validates a document's plain value, and each of its errors is tied
 * to the positioned node it concerns, for the caller to word as a `file:line:col` diagnostic.
 *
 * The validators are compiled at build time into dist/cli/validators.cjs (ajv's standalone code,
 * by scripts/precompile-schemas.mjs), so the CLI neither loads ajv's compiler nor compiles a
 * schema on start; run from the sources (tests), they are compiled from the schema files.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import { toJsonValue, type MapEntry, type SchemaNode } from './node.js';

/** The validators, by name: the three files' documents (see STRUCTURE_VALIDATORS). */
export type StructureName = keyof typeof STRUCTURE_VALIDATORS;

/**
 * What each validator checks: a schema file and the definition in it (one document of a file
 * that may hold several). scripts/precompile-schemas.mjs reads this table from the built module.
 */
export const STRUCTURE_VALIDATORS = {
  entityDocument: { file: 'entity-schema.json', pointer: '#/definitions/document' },
  restDocument: { file: 'rest-config.json', pointer: '#/definitions/document' },
  access: { file: 'access.json', pointer: '' },
} as const;

/** The options the validators are compiled with (shared with the build script). */
export const AJV_OPTIONS = {
  allErrors: true,
  // Errors carry their schema, whose `properties` name the keys a did-you-mean chooses from.
  verbose: true,
  // `if`/`then` and a required key's presence are checked together by design.
  strictRequired: false,
  strictTypes: false,
  // Smaller code, which matters for start-up: one function per definition, no message texts
  // (structure.ts and the access loader word every error themselves).
  inlineRefs: false,
  messages: false,
} as const;

/** A compiled validator: true when `data` fits, else its errors in `errors`. */
interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const require = createRequire(import.meta.url);
const loaded = new Map<StructureName, Validator>();

function validator(name: StructureName): Validator {
  const known = loaded.get(name);
  if (known !== undefined) return known;
  const validate = precompiled()?.[name] ?? compile(name);
  loaded.set(name, validate);
  return validate;
}

let precompiledModule: Partial<Record<StructureName, Validator>> | null | undefined;

/** dist/cli/validators.cjs, next to the built cli/ folders; null when running from the sources. */
function precompiled(): Partial<Record<StructureName, Validator>> | null {
  if (precompiledModule === undefined) {
    try {
      precompiledModule = require('../validators.cjs') as Partial<Record<StructureName, Validator>>;
    } catch {
      precompiledModule = null;
    }
  }
  return precompiledModule;
}

/** Compiles a validator from the schema files of the repository (tests run from the sources). */
function compile(name: StructureName): Validator {
  const { Ajv } = require('ajv') as typeof import('ajv');
  const ajv = new Ajv(AJV_OPTIONS);
  for (const { file } of Object.values(STRUCTURE_VALIDATORS)) {
    if (ajv.getSchema(schemaId(file)) !== undefined) continue;
    const text = readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8');
    ajv.addSchema(JSON.parse(text) as object);
  }
  const { file, pointer } = STRUCTURE_VALIDATORS[name];
  const validate = ajv.getSchema(`${schemaId(file)}${pointer}`);
  if (validate === undefined) throw new Error(`internal error: no JSON Schema ${file}${pointer}`);
  return validate;
}

/** The `$id` of a shipped schema file. */
export function schemaId(file: string): string {
  return `https://unpkg.com/@entity-gen/cli/schemas/${file}`;
}

/** One structure problem, at the node it concerns. */
export interface StructureProblem {
  /** ajv's error; `keyword` and `params` say what is wrong. */
  readonly error: ErrorObject;
  /** The path to the node: mapping keys and list indexes. */
  readonly path: readonly string[];
  /** The node the error is about (for `required`: the mapping that lacks the key). */
  readonly node: SchemaNode;
  /** The entry whose value `node` is, when it is a mapping's value. */
  readonly entry: MapEntry | undefined;
  /** For `additionalProperties`: the unknown key's entry. */
  readonly unknownKey: MapEntry | undefined;
}

/** Keywords whose errors only repeat those of their subschemas. */
const WRAPPER_KEYWORDS: ReadonlySet<string> = new Set(['if', 'anyOf', 'allOf', 'oneOf']);

/**
 * The structure problems of one document. Errors of wrapper keywords (`if`, `anyOf`…) are left
 * out: the errors of their subschemas say what is wrong.
 */
export function structureProblems(root: SchemaNode, name: StructureName): StructureProblem[] {
  const validate = validator(name);
  if (validate(toJsonValue(root))) return [];
  return (validate.errors ?? []).flatMap((error) => {
    if (WRAPPER_KEYWORDS.has(error.keyword)) return [];
    const path = parsePointer(error.instancePath);
    const found = nodeAt(root, path);
    if (found === undefined) return [];
    const key = (error.params as { additionalProperty?: unknown }).additionalProperty;
    const unknownKey =
      error.keyword === 'additionalProperties' && found.node.kind === 'map'
        ? found.node.entries.find((entry) => entry.key === key)
        : undefined;
    return [{ error, path, node: found.node, entry: found.entry, unknownKey }];
  });
}

/** The segments of a JSON Pointer (list indexes as digits). */
function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function nodeAt(
  root: SchemaNode,
  path: readonly string[],
): { node: SchemaNode; entry: MapEntry | undefined } | undefined {
  let node = root;
  let entry: MapEntry | undefined;
  for (const segment of path) {
    if (node.kind === 'map') {
      entry = node.entries.find((candidate) => candidate.key === segment);
      if (entry === undefined) return undefined;
      node = entry.value;
    } else if (node.kind === 'seq') {
      const item = node.items[Number(segment)];
      if (item === undefined) return undefined;
      node = item;
      entry = undefined;
    } else {
      return undefined;
    }
  }
  return { node, entry };
}

/** The keys a mapping's schema lists (for did-you-mean), without `$schema`. */
export function allowedKeys(error: ErrorObject): string[] {
  const properties = (error.parentSchema as { properties?: object } | undefined)?.properties;
  return Object.keys(properties ?? {}).filter((key) => key !== '$schema');
}
