/**
 * The access file (`--access access.yaml`, SPEC §8): which roles may call each method of each
 * entity, and the owner rule of an entity. Parsed with the schema parser (YAML or JSON, with
 * positions), validated against the schema model with `file:line:col` diagnostics, and resolved
 * into explicit rules for every entity, which the generator bakes into each entity's routes.
 *
 * Decisions:
 * - A method an entity does not list, and every method of an entity the file does not list, gets
 *   the `default` roles; without `default` that is `[admin]` (an access file protects by default).
 * - `public` needs no credentials, `authenticated` any valid principal; other names are roles.
 * - `owner` names a top-level STRING, INTEGER or ENTITY_REF field; a single-record entity cannot
 *   have one (its one record has no owner).
 * - The file's structure is schemas/access.json, checked by json-schema.ts; only the rules between
 *   the file and the schema model are code here.
 */
import { sortDiagnostics, type Diagnostic } from '../diagnostics.js';
import type { EntityModel, SchemaModel } from '../model/types.js';
import type { MapEntry, SchemaNode } from '../schema/node.js';
import { parseSchemaText } from '../schema/parse.js';
import { Reporter, type Position } from '../schema/report.js';
import type { SchemaDiagnosticCode } from '../schema/codes.js';
import { suggestionSuffix } from '../schema/suggest.js';
import { structureProblems, type StructureProblem } from '../schema/json-schema.js';
import { describeNode, entryOf } from '../schema/values.js';
import { SCHEMA_KEY } from '../schema/validate.js';

import { ACCESS_METHODS, type AccessMethod, type EntityAccess } from './types.js';

export { ACCESS_METHODS, type AccessMethod, type EntityAccess } from './types.js';

/** The roles used when the file gives no `default`. */
export const DEFAULT_ROLES: readonly string[] = ['admin'];

/** Field types an owner field may have: they hold a principal's subject. */
const OWNER_TYPES: readonly string[] = ['STRING', 'INTEGER', 'ENTITY_REF'];

/** The text of an access file; `file` is used in diagnostics and picks the format. */
export interface AccessSource {
  readonly file: string;
  readonly text: string;
}

/** The diagnostic codes of the access file, and what each means (part of the CLI's contract). */
export const ACCESS_DIAGNOSTIC_CODES = {
  ACCESS_PARSE_ERROR: 'The access file is not valid JSON or YAML.',
  ACCESS_DUPLICATE_KEY: 'A mapping sets the same key twice.',
  ACCESS_INVALID_VALUE:
    'A value has the wrong shape: the file or an entity is not a mapping, a role list is not a list.',
  ACCESS_UNKNOWN_KEY: 'The file holds a top-level key other than `entities` and `default`.',
  ACCESS_UNKNOWN_ENTITY: 'An entity the schema does not define.',
  ACCESS_DUPLICATE_ENTITY: 'An entity is listed twice (names compare case-insensitively).',
  ACCESS_UNKNOWN_METHOD:
    'An entity lists a key that is not a method (GET_LIST, GET_BYID, NEW, UPDATE, DELETE) or owner.',
  ACCESS_INVALID_ROLE: 'A role is not a non-empty string.',
  ACCESS_INVALID_OWNER:
    'owner names no top-level field of the entity, a field that is not STRING, INTEGER or ENTITY_REF, or a single-record entity.',
} as const;

export type AccessDiagnosticCode = keyof typeof ACCESS_DIAGNOSTIC_CODES;

/** Parser codes and their access-file counterparts. */
const PARSER_CODES: Partial<Record<SchemaDiagnosticCode, AccessDiagnosticCode>> = {
  PARSE_ERROR: 'ACCESS_PARSE_ERROR',
  DUPLICATE_KEY: 'ACCESS_DUPLICATE_KEY',
  INVALID_VALUE: 'ACCESS_INVALID_VALUE',
};

class AccessReporter extends Reporter {
  override report(at: Position, code: SchemaDiagnosticCode, message: string): void {
    this.add(at, PARSER_CODES[code] ?? 'ACCESS_PARSE_ERROR', message);
  }

  add(at: Position, code: AccessDiagnosticCode, message: string): void {
    this.diagnostics.push({ file: this.file, line: at.line, column: at.column, message, code });
  }
}

/**
 * The access rules of every entity of `model` (keyed by the schema's spelling, in name order), or
 * `undefined` without an access file. Every problem is collected; with any, no rules are returned.
 *
 * @example loadAccess({ file: 'access.yaml', text }, model).access?.get('ORDER')?.owner
 */
export function loadAccess(
  source: AccessSource | undefined,
  model: SchemaModel,
): { access: ReadonlyMap<string, EntityAccess> | undefined; diagnostics: Diagnostic[] } {
  if (source === undefined) return { access: undefined, diagnostics: [] };
  const reporter = new AccessReporter(source.file);
  const { roots } = parseSchemaText(source.file, source.text, reporter);
  if (reporter.diagnostics.length > 0)
    return { access: undefined, diagnostics: sortDiagnostics(reporter.diagnostics) };
  const root = roots[0];
  if (roots.length > 1) {
    reporter.add(
      roots[1]!.position,
      'ACCESS_INVALID_VALUE',
      'The access file holds more than one document; put every rule into one mapping',
    );
  }
  if (root === undefined) {
    reporter.add({ line: 1, column: 1 }, 'ACCESS_INVALID_VALUE', NOT_A_MAPPING);
    return { access: undefined, diagnostics: sortDiagnostics(reporter.diagnostics) };
  }
  const { given, defaults } = readRules(root, model, reporter);
  if (reporter.diagnostics.length > 0)
    return { access: undefined, diagnostics: sortDiagnostics(reporter.diagnostics) };
  const access = new Map<string, EntityAccess>();
  for (const entity of [...model.entities].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rules = given.get(entity.name);
    const methods = Object.fromEntries(
      ACCESS_METHODS.map((method) => [method, rules?.methods[method] ?? defaults]),
    ) as Record<AccessMethod, readonly string[]>;
    access.set(entity.name, {
      methods,
      ...(rules?.owner === undefined ? {} : { owner: rules.owner }),
    });
  }
  return { access, diagnostics: [] };
}

const NOT_A_MAPPING =
  'The access file must be a mapping with entities (rules per entity) and default (roles)';

interface EntityRules {
  methods: Partial<Record<AccessMethod, string[]>>;
  owner?: string;
}

/**
 * The rules the file gives, after its structure (schemas/access.json) is checked: what has the
 * wrong shape is reported from there and skipped here, where only names are resolved against the
 * schema model. Rules of an entity that is unknown or listed twice are not checked at all.
 */
function readRules(
  root: SchemaNode,
  model: SchemaModel,
  reporter: AccessReporter,
): { given: Map<string, EntityRules>; defaults: readonly string[] } {
  const given = new Map<string, EntityRules>();
  /** The entities' keys as written, with the entity they name, for the structure messages. */
  const checked = new Map<string, EntityModel>();
  const entities = root.kind === 'map' ? entryOf(root, 'entities')?.value : undefined;
  if (entities?.kind === 'map') {
    const byName = new Map(model.entities.map((entity) => [entity.name.toUpperCase(), entity]));
    const names = model.entities.map((entity) => entity.name);
    for (const entry of entities.entries) {
      const entity = byName.get(entry.key.toUpperCase());
      if (entity === undefined) {
        reporter.add(
          entry.keyPosition,
          'ACCESS_UNKNOWN_ENTITY',
          `Entity ${entry.key} is not defined in the schema${suggestionSuffix(entry.key, names)}`,
        );
      } else if (given.has(entity.name)) {
        reporter.add(
          entry.keyPosition,
          'ACCESS_DUPLICATE_ENTITY',
          `Entity ${entity.name} is listed twice in the access file (names compare case-insensitively)`,
        );
      } else {
        checked.set(entry.key, entity);
        given.set(entity.name, readEntityRules(entry.value, entity, reporter));
      }
    }
  }
  for (const problem of structureProblems(root, 'access')) {
    reportStructure(problem, checked, reporter);
  }
  const defaultsNode = root.kind === 'map' ? entryOf(root, 'default')?.value : undefined;
  return { given, defaults: (defaultsNode && roles(defaultsNode)) ?? DEFAULT_ROLES };
}

/** Words one structure problem of the access file (its path: /default/…, /entities/NAME/…). */
function reportStructure(
  { error, path, node, unknownKey }: StructureProblem,
  checked: ReadonlyMap<string, EntityModel>,
  reporter: AccessReporter,
): void {
  const [top, entityKey, method, index] = path;
  const entity = entityKey === undefined ? undefined : checked.get(entityKey);
  if (top === 'entities' && entityKey !== undefined && entity === undefined) return;
  if (error.keyword === 'additionalProperties' && unknownKey !== undefined) {
    const key = unknownKey.key;
    if (entity === undefined) {
      reporter.add(
        unknownKey.keyPosition,
        'ACCESS_UNKNOWN_KEY',
        `Unknown key '${key}' in the access file; it holds entities and default${suggestionSuffix(key, ['entities', 'default'])}`,
      );
    } else {
      reporter.add(
        unknownKey.keyPosition,
        'ACCESS_UNKNOWN_METHOD',
        `Unknown method '${key}' for entity ${entity.name}; use ${ACCESS_METHODS.join(', ')} or owner${suggestionSuffix(key, [...ACCESS_METHODS, 'owner'])}`,
      );
    }
    return;
  }
  const label = entity === undefined ? 'default' : `${method} of entity ${entity.name}`;
  const roleIndex = entity === undefined ? entityKey : index;
  if (top === undefined) {
    reporter.add(node.position, 'ACCESS_INVALID_VALUE', NOT_A_MAPPING);
  } else if (top === SCHEMA_KEY) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_VALUE',
      `'${SCHEMA_KEY}' of the access file must be a string, not ${describeNode(node)}`,
    );
  } else if (top === 'entities' && entity === undefined) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_VALUE',
      "'entities' must be a mapping from entity names to their rules",
    );
  } else if (entity !== undefined && method === undefined) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_VALUE',
      `The rules of entity ${entity.name} must be a mapping of methods to roles, e.g. GET_LIST: [public]`,
    );
  } else if (entity !== undefined && method === 'owner') {
    reporter.add(
      node.position,
      'ACCESS_INVALID_OWNER',
      `owner of entity ${entity.name} must name one of its fields, not ${describeNode(node)}`,
    );
  } else if (roleIndex === undefined) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_VALUE',
      `${capitalize(label)} must be a list of roles, e.g. [public] or [editor, admin]`,
    );
  } else {
    reporter.add(
      node.position,
      'ACCESS_INVALID_ROLE',
      `A role of ${label} must be a non-empty string, not ${describeNode(node)}`,
    );
  }
}

/** The rules of one known entity; values of the wrong shape are skipped (reported above). */
function readEntityRules(
  node: SchemaNode,
  entity: EntityModel,
  reporter: AccessReporter,
): EntityRules {
  const rules: EntityRules = { methods: {} };
  if (node.kind !== 'map') return rules;
  for (const entry of node.entries) {
    if (entry.key === 'owner') {
      const owner = readOwner(entry, entity, reporter);
      if (owner !== undefined) rules.owner = owner;
      continue;
    }
    const method = ACCESS_METHODS.find((candidate) => candidate === entry.key);
    const list = method === undefined ? undefined : roles(entry.value);
    if (method !== undefined && list !== undefined) rules.methods[method] = list;
  }
  return rules;
}

/** The distinct roles of a list (items that are not a role are skipped: reported above). */
function roles(node: SchemaNode): string[] | undefined {
  if (node.kind !== 'seq') return undefined;
  const names: string[] = [];
  for (const item of node.items) {
    if (item.kind !== 'scalar' || typeof item.value !== 'string' || item.value.trim() === '')
      continue;
    if (!names.includes(item.value)) names.push(item.value);
  }
  return names;
}

/** The owner field: a top-level field that can hold a subject, of an entity with several records. */
function readOwner(
  entry: MapEntry,
  entity: EntityModel,
  reporter: AccessReporter,
): string | undefined {
  const node = entry.value;
  if (node.kind !== 'scalar' || typeof node.value !== 'string') return undefined;
  const name = node.value;
  if (entity.singleRecord) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_OWNER',
      `Single-record entity ${entity.name} cannot have an owner: its one record belongs to nobody in particular`,
    );
    return undefined;
  }
  const field = entity.fields.find((candidate) => candidate.name === name);
  if (field === undefined) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_OWNER',
      `owner '${name}' is not a field of entity ${entity.name}${suggestionSuffix(
        name,
        entity.fields.map((candidate) => candidate.name),
      )}`,
    );
    return undefined;
  }
  if (!OWNER_TYPES.includes(field.type)) {
    reporter.add(
      node.position,
      'ACCESS_INVALID_OWNER',
      `owner '${name}' of entity ${entity.name} is a ${field.type} field; an owner field holds a subject, so it must be STRING, INTEGER or ENTITY_REF`,
    );
    return undefined;
  }
  return name;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
