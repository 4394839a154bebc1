/**
 * Validation of REST config documents against the schema model. Every problem is reported at
 * the node it concerns and checking goes on, so one run shows all of them.
 */
import type { EntityModel } from '../model/types.js';
import type { MapEntry, MapNode, SchemaNode } from '../schema/node.js';
import type { Position } from '../schema/report.js';
import { suggestionSuffix } from '../schema/suggest.js';
import { allowedKeys, structureProblems, type StructureProblem } from '../schema/json-schema.js';
import { describeNode } from '../schema/values.js';
import { SCHEMA_KEY } from '../schema/validate.js';
import type { RestDiagnosticCode } from './codes.js';
import type { RestReporter } from './report.js';
import {
  DEFAULT_START_LIMIT,
  GET_LIST_STRATEGIES,
  REST_METHODS,
  SORTABLE_FIELD_TYPES,
  type EntityRestConfig,
  type GetListStrategy,
  type RestMethod,
} from './types.js';

const DOCUMENT_TYPES = ['ENTITY', 'MULTIPLE_ENTITIES'] as const;

type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** State shared by all documents of one REST config file. */
export interface ValidationContext {
  readonly reporter: RestReporter;
  /** Schema entities by upper-case name. */
  readonly entities: ReadonlyMap<string, EntityModel>;
  /** Schema entity names, sorted, for suggestions and messages. */
  readonly entityNames: readonly string[];
  /** Where each entity (schema spelling) was first configured. */
  readonly configuredAt: Map<string, Position>;
  /** The configs found so far, by schema entity name (first document wins). */
  readonly configs: Map<string, EntityRestConfig>;
}

/** An entity named by a document, resolved against the schema. */
interface Target {
  readonly entity: EntityModel;
  /** False when an earlier document already configures it (reported; config not stored). */
  readonly first: boolean;
}

/**
 * Validates one document and records the configs it gives. The structure (schemas/rest-config.json)
 * is checked by ajv and worded by `reportStructure`; the rules against the schema model, and the
 * document type's inference, are the code below, which skips values of the wrong shape.
 */
export function validateDocument(node: SchemaNode, context: ValidationContext): void {
  const { reporter } = context;
  const problems = structureProblems(node, 'restDocument');
  if (node.kind !== 'map') {
    reportStructure(problems, { type: 'ENTITY', label: '' }, reporter);
    return;
  }
  const type = readDocumentType(node);
  // The document's own keys first: at the document's position, a missing type is reported before
  // a missing entity (below) and a missing config.
  const own = problems.filter(isAboutDocumentKeys);
  reportStructure(own, { type, label: 'the document' }, reporter);
  checkDocumentKeys(node, type, reporter);
  const { targets, label } =
    type === 'ENTITY' ? readEntity(node, context) : readEntities(node, context);
  const rest = problems.filter((problem) => !own.includes(problem));
  reportStructure(rest, { type, label }, reporter);
  const configMap = entryOf(node, 'config')?.value;
  if (configMap?.kind !== 'map') return;
  const config = validateConfig(configMap, label, targets, reporter);
  for (const target of targets) {
    if (target.first) context.configs.set(target.entity.name, config);
  }
}

/** A problem with the document's type, `$schema` or unknown keys (none needs the label). */
function isAboutDocumentKeys({ error, path }: StructureProblem): boolean {
  if (path.length > 0) return path[0] === 'type' || path[0] === SCHEMA_KEY;
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  return missing === 'type' || error.keyword === 'additionalProperties';
}

/** What the structure messages of one document need to know. */
interface DocumentPlace {
  /** The document's type, inferred when it is missing or wrong. */
  readonly type: DocumentType;
  /** `entity PRODUCT`, `entities CATEGORY, PRODUCT`… */
  readonly label: string;
}

/** Words the structure problems of one document. */
function reportStructure(
  problems: readonly StructureProblem[],
  place: DocumentPlace,
  reporter: RestReporter,
): void {
  for (const problem of problems) {
    const worded = wordStructure(problem, place);
    if (worded !== undefined) reporter.add(worded.at, worded.code, worded.message);
  }
}

function wordStructure(
  { error, path, node, unknownKey }: StructureProblem,
  { type, label }: DocumentPlace,
): { at: Position; code: RestDiagnosticCode; message: string } | undefined {
  const at = node.position;
  const [top, key, index] = path;
  // Which of entity and entities a document needs is decided by its (inferred) type, below.
  if (error.schemaPath.includes('/allOf/')) return undefined;
  if (error.keyword === 'additionalProperties' && unknownKey !== undefined) {
    const allowed = allowedKeys(error);
    const owner = top === 'config' ? `the REST config of ${label}` : 'a REST config document';
    const message =
      `Unknown key '${unknownKey.key}' in ${owner}` +
      suggestionSuffix(unknownKey.key, allowed, `; allowed keys are ${allowed.join(', ')}`);
    return { at: unknownKey.keyPosition, code: 'REST_UNKNOWN_KEY', message };
  }
  if (top === undefined) {
    if (error.keyword === 'type') {
      const message = `A REST config document must be a mapping with type, entity (or entities) and config, not ${describeNode(node)}`;
      return { at, code: 'REST_INVALID_TYPE', message };
    }
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    if (missing === 'type') {
      const message =
        "The REST config document has no 'type'; start it with type: ENTITY (one entity) or type: MULTIPLE_ENTITIES (several)";
      return { at, code: 'REST_MISSING_KEY', message };
    }
    if (missing === 'config') {
      const message = `The REST config document for ${label} has no 'config'; add e.g. config: {allowedMethods: [GET_LIST, GET_BYID]}`;
      return { at, code: 'REST_MISSING_KEY', message };
    }
    return undefined;
  }
  const wrong = describeWrong(node);
  if (top === 'type') {
    const written =
      node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
    const hint = written === undefined ? '' : typeSuggestion(written);
    const message = `'type' of a REST config document must be ENTITY or MULTIPLE_ENTITIES, not ${wrong}${hint}`;
    return { at, code: 'REST_INVALID_TYPE', message };
  }
  if (top === SCHEMA_KEY) {
    const message = `'${SCHEMA_KEY}' of a REST config document must be a string, not ${wrong}`;
    return { at, code: 'REST_INVALID_VALUE', message };
  }
  if (top === 'entity') {
    // Under type MULTIPLE_ENTITIES the key itself is misplaced (checkDocumentKeys).
    if (type !== 'ENTITY') return undefined;
    const hint =
      node.kind === 'seq'
        ? '; to configure several entities alike, use type: MULTIPLE_ENTITIES with entities: [A, B]'
        : '';
    const message = `'entity' of a REST config document must be an entity name, not ${wrong}${hint}`;
    return { at, code: 'REST_INVALID_VALUE', message };
  }
  if (top === 'entities') {
    if (type !== 'MULTIPLE_ENTITIES') return undefined;
    const message =
      key !== undefined
        ? `Each entry of 'entities' of a REST config document must be an entity name, not ${wrong}`
        : error.keyword === 'minItems'
          ? "'entities' of a REST config document lists no entity; name at least one"
          : `'entities' of a REST config document must be a list of entity names, not ${wrong}`;
    return { at, code: 'REST_INVALID_VALUE', message };
  }
  // Under config.
  if (key === undefined) {
    // Limits under getListStrategy ALL: worded by validateConfig, which names the strategy.
    if (error.keyword !== 'type') return undefined;
    const message = `'config' of ${label} must be a mapping, not ${wrong}`;
    return { at, code: 'REST_INVALID_VALUE', message };
  }
  const message = wordConfigValue(error, key, index, node, label);
  return message === undefined ? undefined : { at, code: 'REST_INVALID_VALUE', message };
}

/** The message for a value of `config` (`index` set for an item of a list). */
function wordConfigValue(
  error: StructureProblem['error'],
  key: string,
  index: string | undefined,
  node: SchemaNode,
  label: string,
): string | undefined {
  const wrong = describeWrong(node);
  const written = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
  if (key === 'getListStrategy') {
    const hint = written === undefined ? '' : suggestionSuffix(written, GET_LIST_STRATEGIES);
    return `'getListStrategy' of ${label} must be ALL or START_LIMIT, not ${wrong}${hint}`;
  }
  if (key === 'defaultLimit' || key === 'maxWindow') {
    return `'${key}' of ${label} must be a positive integer, not ${wrong}`;
  }
  if (index === undefined) {
    return error.keyword === 'type'
      ? `'${key}' of ${label} must be a list, not ${wrong}`
      : undefined;
  }
  if (key === 'allowedMethods' && error.keyword === 'enum' && written !== undefined) {
    return (
      `Unknown method '${written}' in 'allowedMethods' of ${label}` +
      suggestionSuffix(written, REST_METHODS, `; methods are ${REST_METHODS.join(', ')}`)
    );
  }
  // Empty names and repeated methods: worded by the rules below, which know more.
  if (error.keyword !== 'type' && error.keyword !== 'enum') return undefined;
  return `Each entry of '${key}' of ${label} must be a string, not ${wrong}`;
}

// Document ------------------------------------------------------------------------------------

/**
 * The document's type. When it is missing or wrong (a structure problem), it is inferred from the
 * keys present so that the rest of the document is still checked.
 */
function readDocumentType(map: MapNode): DocumentType {
  const node = entryOf(map, 'type')?.value;
  const written =
    node?.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
  if (written === 'ENTITY' || written === 'MULTIPLE_ENTITIES') return written;
  return entryOf(map, 'entities') !== undefined && entryOf(map, 'entity') === undefined
    ? 'MULTIPLE_ENTITIES'
    : 'ENTITY';
}

/** A did-you-mean for `type`, also for near misses like MULTIPLE_ENTITY or ENTITIES. */
function typeSuggestion(written: string): string {
  const close = suggestionSuffix(written, DOCUMENT_TYPES);
  if (close !== '') return close;
  const upper = written.toUpperCase();
  if (upper.startsWith('MULTIPLE')) return "; did you mean 'MULTIPLE_ENTITIES'?";
  if (upper.startsWith('ENTIT'))
    return "; did you mean 'ENTITY' (one entity) or 'MULTIPLE_ENTITIES' (several)?";
  return '';
}

function checkDocumentKeys(map: MapNode, type: DocumentType, reporter: RestReporter): void {
  for (const entry of map.entries) {
    if (entry.key === 'entities' && type === 'ENTITY') {
      reporter.add(
        entry.keyPosition,
        'REST_UNKNOWN_KEY',
        "'entities' belongs to documents of type MULTIPLE_ENTITIES; a document of type ENTITY names its entity with 'entity'",
      );
    } else if (entry.key === 'entity' && type === 'MULTIPLE_ENTITIES') {
      reporter.add(
        entry.keyPosition,
        'REST_UNKNOWN_KEY',
        "'entity' belongs to documents of type ENTITY; a document of type MULTIPLE_ENTITIES lists its entities with 'entities'",
      );
    }
  }
}

/** `entity: NAME` of an ENTITY document. */
function readEntity(
  map: MapNode,
  context: ValidationContext,
): { targets: Target[]; label: string } {
  const entry = entryOf(map, 'entity');
  if (entry === undefined) {
    // With `entities` present, the misplaced key has been reported already.
    if (entryOf(map, 'entities') === undefined) {
      context.reporter.add(
        map.position,
        'REST_MISSING_KEY',
        "The REST config document of type ENTITY has no 'entity'; name the entity it configures, e.g. entity: PRODUCT",
      );
    }
    return { targets: [], label: 'the ENTITY document' };
  }
  const node = entry.value;
  if (node.kind !== 'scalar' || typeof node.value !== 'string') {
    return { targets: [], label: 'the ENTITY document' };
  }
  const target = resolveEntity(node.value, node.position, context);
  return {
    targets: target === undefined ? [] : [target],
    label: `entity ${target?.entity.name ?? node.value}`,
  };
}

/** `entities: [A, B]` of a MULTIPLE_ENTITIES document. */
function readEntities(
  map: MapNode,
  context: ValidationContext,
): { targets: Target[]; label: string } {
  const { reporter } = context;
  const label = 'the MULTIPLE_ENTITIES document';
  const entry = entryOf(map, 'entities');
  if (entry === undefined) {
    if (entryOf(map, 'entity') === undefined) {
      reporter.add(
        map.position,
        'REST_MISSING_KEY',
        "The REST config document of type MULTIPLE_ENTITIES has no 'entities'; list the entities it configures, e.g. entities: [CATEGORY, PRODUCT]",
      );
    }
    return { targets: [], label };
  }
  const node = entry.value;
  if (node.kind !== 'seq') return { targets: [], label };
  const targets: Target[] = [];
  const names: string[] = [];
  for (const item of node.items) {
    if (item.kind !== 'scalar' || typeof item.value !== 'string') continue;
    const target = resolveEntity(item.value, item.position, context);
    if (target !== undefined) targets.push(target);
    names.push(target?.entity.name ?? item.value);
  }
  return { targets, label: names.length === 0 ? label : `entities ${names.join(', ')}` };
}

/** Looks an entity name up case-insensitively and registers it as configured here. */
function resolveEntity(
  name: string,
  position: Position,
  context: ValidationContext,
): Target | undefined {
  const entity = context.entities.get(name.toUpperCase());
  if (entity === undefined) {
    context.reporter.add(
      position,
      'REST_UNKNOWN_ENTITY',
      `Unknown entity '${name}' in the REST config` +
        suggestionSuffix(
          name,
          context.entityNames,
          `; the schema defines ${context.entityNames.join(', ')}`,
        ),
    );
    return undefined;
  }
  const earlier = context.configuredAt.get(entity.name);
  if (earlier !== undefined) {
    context.reporter.add(
      position,
      'REST_DUPLICATE_ENTITY',
      `Entity ${entity.name} is already configured at line ${earlier.line}, column ${earlier.column}; configure each entity once`,
    );
    return { entity, first: false };
  }
  context.configuredAt.set(entity.name, position);
  return { entity, first: true };
}

// Config --------------------------------------------------------------------------------------

/**
 * Validates a `config` mapping for the given entities and returns the effective config (only
 * meaningful when nothing was reported).
 */
function validateConfig(
  map: MapNode,
  label: string,
  targets: readonly Target[],
  reporter: RestReporter,
): EntityRestConfig {
  const methodsEntry = entryOf(map, 'allowedMethods');
  const allowedMethods =
    methodsEntry === undefined ? [...REST_METHODS] : readMethods(methodsEntry, label, reporter);
  const strategyEntry = entryOf(map, 'getListStrategy');
  const strategy = strategyEntry === undefined ? 'ALL' : readStrategy(strategyEntry);
  const limitEntry = entryOf(map, 'defaultLimit');
  const windowEntry = entryOf(map, 'maxWindow');
  const defaultLimit = limitEntry && readPositiveInteger(limitEntry);
  const maxWindow = windowEntry && readPositiveInteger(windowEntry);
  if (strategy === 'ALL') {
    const given = strategyEntry === undefined ? 'ALL (the default)' : 'ALL';
    for (const entry of [limitEntry, windowEntry]) {
      if (entry === undefined) continue;
      reporter.add(
        entry.keyPosition,
        'REST_INVALID_VALUE',
        `'${entry.key}' of ${label} applies only to paged lists, but its getListStrategy is ${given}; set getListStrategy: START_LIMIT or remove '${entry.key}'`,
      );
    }
  }
  if (defaultLimit !== undefined && maxWindow !== undefined && defaultLimit > maxWindow) {
    reporter.add(
      limitEntry!.value.position,
      'REST_INVALID_VALUE',
      `'defaultLimit' of ${label} is ${defaultLimit}, more than its 'maxWindow' of ${maxWindow}; every request without a limit would fail`,
    );
  }
  const allowedEntry = entryOf(map, 'allowedOrderingFields');
  const allowed = allowedEntry && readOrderingFields(allowedEntry, label, targets, reporter);
  const orderEntry = entryOf(map, 'defaultOrder');
  const defaultOrder =
    orderEntry && readDefaultOrder(orderEntry, label, targets, allowed, reporter);

  const effectiveLimit =
    strategy === 'START_LIMIT'
      ? (defaultLimit ?? Math.min(DEFAULT_START_LIMIT, maxWindow ?? DEFAULT_START_LIMIT))
      : undefined;
  const config: EntityRestConfig = {
    allowedMethods: Object.freeze(allowedMethods ?? []),
    getListStrategy: strategy ?? 'ALL',
    ...(effectiveLimit === undefined ? {} : { defaultLimit: effectiveLimit }),
    ...(maxWindow === undefined ? {} : { maxWindow }),
    ...(defaultOrder === undefined || defaultOrder.length === 0
      ? {}
      : { defaultOrder: Object.freeze(defaultOrder) }),
    ...(allowed === undefined ? {} : { allowedOrderingFields: Object.freeze(allowed.names) }),
  };
  return Object.freeze(config);
}

/** `allowedMethods`, in canonical order; repeated methods are reported (unknown ones: the structure). */
function readMethods(
  entry: MapEntry,
  label: string,
  reporter: RestReporter,
): RestMethod[] | undefined {
  const items = readStringItems(entry);
  if (items === undefined) return undefined;
  const seen = new Set<string>();
  for (const item of items) {
    if (isOneOf(item.value, REST_METHODS) && seen.has(item.value)) {
      reporter.add(
        item.position,
        'REST_DUPLICATE_VALUE',
        `Method ${item.value} is listed twice in 'allowedMethods' of ${label}`,
      );
    }
    seen.add(item.value);
  }
  return REST_METHODS.filter((method) => seen.has(method));
}

function readStrategy(entry: MapEntry): GetListStrategy | undefined {
  const node = entry.value;
  const written = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
  return written !== undefined && isOneOf(written, GET_LIST_STRATEGIES) ? written : undefined;
}

function readPositiveInteger(entry: MapEntry): number | undefined {
  const node = entry.value;
  return node.kind === 'scalar' &&
    typeof node.value === 'number' &&
    Number.isSafeInteger(node.value) &&
    node.value > 0
    ? node.value
    : undefined;
}

/** The checked `allowedOrderingFields`: field names as written (valid or not, for later checks). */
interface AllowedFields {
  readonly names: string[];
  readonly set: ReadonlySet<string>;
}

function readOrderingFields(
  entry: MapEntry,
  label: string,
  targets: readonly Target[],
  reporter: RestReporter,
): AllowedFields | undefined {
  const items = readStringItems(entry);
  if (items === undefined) return undefined;
  const names: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const { direction, name } = splitDirection(item.value);
    if (direction !== '') {
      reporter.add(
        item.position,
        'REST_INVALID_VALUE',
        `Entry "${item.value}" of 'allowedOrderingFields' of ${label} has a sort direction; list the plain field name${name === '' ? '' : ` '${name}'`} (clients choose the direction)`,
      );
    } else if (
      checkOrderName(item.value, item.position, 'allowedOrderingFields', label, reporter)
    ) {
      for (const target of targets) {
        checkOrderField(name, item.position, 'allowedOrderingFields', target.entity, reporter);
      }
    }
    if (name === '') continue;
    if (seen.has(name)) {
      reporter.add(
        item.position,
        'REST_DUPLICATE_VALUE',
        `'allowedOrderingFields' of ${label} lists field '${name}' twice`,
      );
      continue;
    }
    seen.add(name);
    names.push(name);
  }
  return { names, set: seen };
}

function readDefaultOrder(
  entry: MapEntry,
  label: string,
  targets: readonly Target[],
  allowed: AllowedFields | undefined,
  reporter: RestReporter,
): string[] | undefined {
  const items = readStringItems(entry);
  if (items === undefined) return undefined;
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const { direction, name } = splitDirection(item.value);
    if (!checkOrderName(name, item.position, 'defaultOrder', label, reporter, item.value)) continue;
    // Every target is checked (no short-circuit), so each entity's problem is reported.
    const known = targets
      .map((target) =>
        checkOrderField(name, item.position, 'defaultOrder', target.entity, reporter),
      )
      .every(Boolean);
    if (seen.has(name)) {
      reporter.add(
        item.position,
        'REST_DUPLICATE_VALUE',
        `'defaultOrder' of ${label} sorts by field '${name}' twice`,
      );
      continue;
    }
    seen.add(name);
    if (known && allowed !== undefined && !allowed.set.has(name)) {
      const list =
        allowed.names.length === 0 ? 'it is empty' : `it lists ${allowed.names.join(', ')}`;
      reporter.add(
        item.position,
        'REST_ORDER_NOT_ALLOWED',
        `'defaultOrder' of ${label} sorts by '${name}', which its 'allowedOrderingFields' does not allow (${list})`,
      );
    }
    terms.push(direction === '-' ? `-${name}` : name);
  }
  return terms;
}

/** `-name` → descending; `+name` (accepted by the runtime too) → ascending. */
function splitDirection(term: string): { direction: '' | '-' | '+'; name: string } {
  const first = term.charAt(0);
  return first === '-' || first === '+'
    ? { direction: first, name: term.slice(1) }
    : { direction: '', name: term };
}

/** Shape checks on a field name in an ordering list, before looking it up. */
function checkOrderName(
  name: string,
  position: Position,
  key: string,
  label: string,
  reporter: RestReporter,
  written = name,
): boolean {
  if (name.trim() === '') {
    const hint = key === 'defaultOrder' ? ', or -name for descending order' : '';
    reporter.add(
      position,
      'REST_INVALID_VALUE',
      `Entry ${JSON.stringify(written)} of '${key}' of ${label} names no field; write a field name${hint}`,
    );
    return false;
  }
  if (name.includes(',')) {
    reporter.add(
      position,
      'REST_INVALID_VALUE',
      `Entry ${JSON.stringify(written)} of '${key}' of ${label} holds a comma; write each field as its own list entry, e.g. [${written
        .split(',')
        .map((part) => part.trim())
        .join(', ')}]`,
    );
    return false;
  }
  return true;
}

/** Reports a name that is not a sortable top-level field of `entity`; false when reported. */
function checkOrderField(
  name: string,
  position: Position,
  key: string,
  entity: EntityModel,
  reporter: RestReporter,
): boolean {
  const field = entity.fields.find((candidate) => candidate.name === name);
  const sortable = entity.fields
    .filter((candidate) => SORTABLE_FIELD_TYPES.includes(candidate.type))
    .map((candidate) => candidate.name);
  if (field === undefined) {
    const dot = name.indexOf('.');
    const parent = dot > 0 ? entity.fields.find((f) => f.name === name.slice(0, dot)) : undefined;
    if (parent !== undefined) {
      reporter.add(
        position,
        'REST_UNSORTABLE_FIELD',
        `'${key}' of entity ${entity.name} names '${name}', a path inside ${parent.type} field '${parent.name}'; only top-level fields can be sorted`,
      );
    } else {
      const names = entity.fields.map((candidate) => candidate.name);
      reporter.add(
        position,
        'REST_UNKNOWN_FIELD',
        `'${key}' of entity ${entity.name} names '${name}', which is not a field of ${entity.name}` +
          suggestionSuffix(name, names, `; sortable fields are ${sortable.join(', ')}`),
      );
    }
    return false;
  }
  if (!SORTABLE_FIELD_TYPES.includes(field.type)) {
    reporter.add(
      position,
      'REST_UNSORTABLE_FIELD',
      `'${key}' of entity ${entity.name} names field '${name}' of type ${field.type}, which cannot be sorted; sortable fields are ${sortable.join(', ')}`,
    );
    return false;
  }
  return true;
}

// Helpers -------------------------------------------------------------------------------------

interface PositionedString {
  readonly value: string;
  readonly position: Position;
}

/** The string items of a list value (undefined for a value that is no list; other items skipped). */
function readStringItems(entry: MapEntry): PositionedString[] | undefined {
  const node = entry.value;
  if (node.kind !== 'seq') return undefined;
  return node.items.flatMap((item) =>
    item.kind === 'scalar' && typeof item.value === 'string'
      ? [{ value: item.value, position: item.position }]
      : [],
  );
}

function entryOf(map: MapNode, key: string): MapEntry | undefined {
  return map.entries.find((entry) => entry.key === key);
}

function isOneOf<T extends string>(value: string, options: readonly T[]): value is T {
  return (options as readonly string[]).includes(value);
}

/** `describeNode`, plus advice for `null` (YAML's `key:` with nothing after it). */
function describeWrong(node: SchemaNode): string {
  const isNull = node.kind === 'scalar' && node.value === null;
  return isNull ? 'null (leave the key out instead)' : describeNode(node);
}
