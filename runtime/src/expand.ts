/**
 * Embedding of referenced records (SPEC §11): `expand=category,category.parent,PRODUCT.category`
 * on GET by key and on lists. A forward path replaces a reference's value by the record it names
 * (`null` when there is none, or when the owner rule hides it); an ARRAY of references becomes a
 * list of records. A reverse path `ENTITY.field` adds the property `"ENTITY.field"`: the records
 * of ENTITY whose `field` names this record, in key order, at most `expandLimit` of them.
 *
 * One query per expanded path per page, whatever the page size: the values of every record of
 * the page are looked up together, then the next level of the path for every record found.
 */
import { createHash } from 'node:crypto';
import { authorize, ownerScope, type Principal } from './auth/access.js';
import { ownerFilter, owns } from './auth/owner.js';
import type { DataContext, ExpandableEntity } from './data-context.js';
import type { EntityDefinition } from './definition.js';
import type {
  FilterCondition,
  FilterGroup,
  KeyValue,
  StorageDriver,
  StoredFields,
  TableDescriptor,
} from './driver.js';
import { BadRequestError, MethodForbiddenError, quoteInput } from './errors.js';
import { keyOfReference, referenceValueOf } from './references.js';
import type { FieldSchema } from './schema.js';

/** Depth of a path like `category.parent.parent`. */
export const MAX_EXPAND_DEPTH = 3;

/** Reverse expansions list at most this many records per record unless `expandLimit` says. */
export const DEFAULT_EXPAND_LIMIT = 100;

/** Most paths one `expand` may name. */
const MAX_EXPAND_PATHS = 20;

/** One step of an expansion: a reference field of an entity, and what to expand below it. */
interface ForwardNode {
  readonly kind: 'forward';
  readonly field: string;
  readonly array: boolean;
  readonly target: ExpandableEntity;
  readonly children: ExpandNode[];
}

/** `PRODUCT.category` on a CATEGORY record: the records whose reference names it. */
interface ReverseNode {
  readonly kind: 'reverse';
  /** The property it adds: `PRODUCT.category`. */
  readonly property: string;
  readonly field: string;
  readonly array: boolean;
  readonly source: ExpandableEntity;
  readonly children: ExpandNode[];
}

type ExpandNode = ForwardNode | ReverseNode;

/** What a request asked to expand, checked against the schema. */
export interface ExpandPlan {
  readonly nodes: readonly ExpandNode[];
  readonly limit: number;
  /**
   * Whether every path goes forward through scalar references only (`category`,
   * `category.parent`): one record's expansion is then a read by key per path, which a driver
   * that reads synchronously (`getNow`) answers in the request's tick (`expandRecordNow`).
   */
  readonly byKey: boolean;
}

/** Whether `nodes` go forward through scalar references only. */
function forwardByKey(nodes: readonly ExpandNode[]): boolean {
  return nodes.every(
    (node) => node.kind === 'forward' && !node.array && forwardByKey(node.children),
  );
}

/** A reference field of an entity: its target and whether it is an ARRAY. */
function referenceField(
  definition: EntityDefinition<object>,
  name: string,
): { entity: string; array: boolean } | undefined {
  const field: FieldSchema | undefined = definition.document.entity.fields.find(
    (candidate) => candidate.name === name,
  );
  if (field === undefined) return undefined;
  if (field.type === 'ENTITY_REF' && field.entityRef !== undefined) {
    return { entity: field.entityRef.entity, array: false };
  }
  if (field.type === 'ARRAY' && field.array?.type === 'ENTITY_REF' && field.array.entityRef) {
    return { entity: field.array.entityRef.entity, array: true };
  }
  return undefined;
}

/**
 * The expansion a request asks for (`expand`, `expandLimit` of its query), or `undefined` when it
 * asks for none. Unknown or non-reference paths, paths deeper than 3 and bad limits are a 400
 * naming them.
 */
export function parseExpand(
  definition: EntityDefinition<object>,
  query: URLSearchParams,
  data: DataContext,
): ExpandPlan | undefined {
  const written = query.getAll('expand');
  const limitText = query.getAll('expandLimit');
  if (written.length === 0) {
    if (limitText.length > 0) {
      throw new BadRequestError(
        'Parameter expandLimit needs an expand parameter with a reverse path',
      );
    }
    return undefined;
  }
  const maxPage = data.maxPageSize ?? 1000;
  let limit = Math.min(DEFAULT_EXPAND_LIMIT, maxPage);
  if (limitText.length > 0) {
    const text = limitText[limitText.length - 1]!;
    const value = Number(text);
    if (limitText.length > 1 || !/^\d+$/.test(text) || value < 1 || value > maxPage) {
      throw new BadRequestError(
        `Parameter expandLimit must be an integer from 1 to ${maxPage}, not ${JSON.stringify(quoteInput(limitText.join(',')))}`,
      );
    }
    limit = value;
  }
  const entities = data.entities;
  if (entities === undefined) throw new BadRequestError('Parameter expand is not served here');
  const paths = written.flatMap((text) => text.split(',')).map((path) => path.trim());
  if (paths.length > MAX_EXPAND_PATHS) {
    throw new BadRequestError(
      `Parameter expand names ${paths.length} paths; at most ${MAX_EXPAND_PATHS}`,
    );
  }
  const nodes: ExpandNode[] = [];
  for (const path of paths) {
    if (path === '') throw new BadRequestError('Parameter expand holds an empty path');
    addPath(nodes, definition, path, entities);
  }
  return { nodes, limit, byKey: forwardByKey(nodes) };
}

function addPath(
  nodes: ExpandNode[],
  root: EntityDefinition<object>,
  path: string,
  entities: ReadonlyMap<string, ExpandableEntity>,
): void {
  const segments = path.split('.');
  const unknown = (why: string): BadRequestError =>
    new BadRequestError(`Unknown expand path ${JSON.stringify(quoteInput(path))}: ${why}`);
  let level = nodes;
  let definition = root;
  let index = 0;
  // `PRODUCT.category`: a reverse path, when the first segment is an entity and not a field.
  const first = segments[0]!;
  if (referenceField(root, first) === undefined && entities.has(first.toUpperCase())) {
    const source = entities.get(first.toUpperCase())!;
    const fieldName = segments[1];
    const reference =
      fieldName === undefined ? undefined : referenceField(source.definition, fieldName);
    if (fieldName === undefined || reference === undefined) {
      throw unknown(
        `${source.definition.name} has no reference field ${JSON.stringify(quoteInput(fieldName ?? ''))}`,
      );
    }
    if (reference.entity.toUpperCase() !== root.name.toUpperCase()) {
      throw unknown(
        `field ${fieldName} of ${source.definition.name} references ${reference.entity}, not ${root.name}`,
      );
    }
    const property = `${source.definition.name}.${fieldName}`;
    let node = level.find(
      (candidate): candidate is ReverseNode =>
        candidate.kind === 'reverse' && candidate.property === property,
    );
    if (node === undefined) {
      node = {
        kind: 'reverse',
        property,
        field: fieldName,
        array: reference.array,
        source,
        children: [],
      };
      level.push(node);
    }
    level = node.children;
    definition = source.definition;
    index = 2;
  }
  if (segments.length - index + (index > 0 ? 1 : 0) > MAX_EXPAND_DEPTH) {
    throw unknown(`it is deeper than ${MAX_EXPAND_DEPTH} levels`);
  }
  for (; index < segments.length; index++) {
    const name = segments[index]!;
    const reference = referenceField(definition, name);
    if (reference === undefined) {
      const exists = definition.document.entity.fields.some((field) => field.name === name);
      throw unknown(
        exists
          ? `field ${name} of ${definition.name} is not a reference (ENTITY_REF)`
          : `${definition.name} has no field ${JSON.stringify(quoteInput(name))}`,
      );
    }
    const target = entities.get(reference.entity.toUpperCase());
    if (target === undefined) throw unknown(`entity ${reference.entity} is not served`);
    let node = level.find(
      (candidate): candidate is ForwardNode =>
        candidate.kind === 'forward' && candidate.field === name,
    );
    if (node === undefined) {
      node = { kind: 'forward', field: name, array: reference.array, target, children: [] };
      level.push(node);
    }
    level = node.children;
    definition = target.definition;
  }
}

/**
 * Checks that the caller may read every entity the plan expands (GET_BYID of a forward target,
 * GET_LIST of a reverse source, and the REST configuration's switches), before anything is read:
 * 401/403 for the whole request otherwise.
 */
export function authorizeExpand(plan: ExpandPlan, principal: Principal | undefined): void {
  const visit = (nodes: readonly ExpandNode[]): void => {
    for (const node of nodes) {
      const entity = node.kind === 'forward' ? node.target : node.source;
      const method = node.kind === 'forward' ? 'GET_BYID' : 'GET_LIST';
      if (!entity.restConfig.allowedMethods.includes(method)) {
        throw new MethodForbiddenError(entity.definition.name, method);
      }
      authorize(entity.access, method, entity.definition.name, principal);
      visit(node.children);
    }
  };
  visit(plan.nodes);
}

/**
 * Expands `records` in place (they are the page's own copies) as `principal` may see them: one
 * query per node of the plan for the whole page.
 */
export async function expandRecords(
  data: DataContext,
  definition: EntityDefinition<object>,
  records: Record<string, unknown>[],
  plan: ExpandPlan,
  principal: Principal | undefined,
): Promise<void> {
  await expandLevel(data, definition.table, records, plan.nodes, plan.limit, principal);
}

/** A synchronous read by key (`StorageDriver.getNow`). */
type ReadNow = NonNullable<StorageDriver['getNow']>;

/**
 * Expands one record in place with synchronous reads by key, for a plan of forward paths through
 * scalar references (`plan.byKey`): the same result as `expandRecords` on that record, without
 * leaving the tick (the fast path of GET by key, http/fast-get.ts).
 */
export function expandRecordNow(
  getNow: ReadNow,
  record: Record<string, unknown>,
  plan: ExpandPlan,
  principal: Principal | undefined,
): void {
  if (!plan.byKey) throw new Error('expandRecordNow needs a plan of forward scalar references');
  expandNow(getNow, record, plan.nodes, principal);
}

function expandNow(
  getNow: ReadNow,
  record: Record<string, unknown>,
  nodes: readonly ExpandNode[],
  principal: Principal | undefined,
): void {
  for (const node of nodes) {
    if (node.kind !== 'forward') continue; // (not in a byKey plan)
    const value = record[node.field];
    if (value === undefined || value === null) continue;
    record[node.field] = readReferencedNow(getNow, node, value, principal);
  }
}

/** The record `value` names, expanded below, as `expandForward` finds it; `null` when none. */
function readReferencedNow(
  getNow: ReadNow,
  node: ForwardNode,
  value: unknown,
  principal: Principal | undefined,
): Record<string, unknown> | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const target = node.target;
  const table = target.definition.table;
  const key = keyOfReference(table, value);
  if (key === undefined) return null;
  const stored = getNow(table, key);
  if (stored === undefined) return null;
  if (!owns(target.definition, ownerScope(target.access, principal), stored.record)) return null;
  // What `expandForward` matches on: the found record's own reference value.
  if (String(referenceValueOf(table, stored.record)) !== String(value)) return null;
  const found: Record<string, unknown> = { ...stored.record };
  expandNow(getNow, found, node.children, principal);
  return found;
}

async function expandLevel(
  data: DataContext,
  table: TableDescriptor,
  records: Record<string, unknown>[],
  nodes: readonly ExpandNode[],
  limit: number,
  principal: Principal | undefined,
): Promise<void> {
  if (records.length === 0) return;
  for (const node of nodes) {
    if (node.kind === 'forward') await expandForward(data, records, node, limit, principal);
    else await expandReverse(data, table, records, node, limit, principal);
  }
}

async function expandForward(
  data: DataContext,
  records: Record<string, unknown>[],
  node: ForwardNode,
  limit: number,
  principal: Principal | undefined,
): Promise<void> {
  const target = node.target;
  const table = target.definition.table;
  const values = new Map<string, KeyValue>();
  for (const record of records) {
    const value = record[node.field];
    const items = node.array && Array.isArray(value) ? value : [value];
    for (const item of items) {
      if (typeof item === 'string' || typeof item === 'number') values.set(String(item), item);
    }
  }
  const found = new Map<string, Record<string, unknown>>();
  if (values.size > 0) {
    const owner = ownerScope(target.access, principal);
    for (const stored of await readByReference(data, table, [...values.values()])) {
      if (!owns(target.definition, owner, stored)) continue;
      found.set(String(referenceValueOf(table, stored)), { ...stored });
    }
  }
  await expandLevel(data, table, [...found.values()], node.children, limit, principal);
  for (const record of records) {
    const value = record[node.field];
    if (value === undefined || value === null) continue;
    const embed = (item: unknown): Record<string, unknown> | null =>
      found.get(String(item)) ?? null;
    record[node.field] = node.array && Array.isArray(value) ? value.map(embed) : embed(value);
  }
}

/** The records of `table` the reference values name: one query for a single key. */
async function readByReference(
  data: DataContext,
  table: TableDescriptor,
  values: readonly KeyValue[],
): Promise<StoredFields[]> {
  const keys = values
    .map((value) => keyOfReference(table, value))
    .filter((key) => key !== undefined);
  if (keys.length === 0) return [];
  if (keys.length === 1) {
    // One record (a GET by key's reference): a read by key, the cheapest query there is.
    const stored = await data.driver.get(table, keys[0]!);
    return stored === undefined ? [] : [stored.record];
  }
  if (table.key.length === 1) {
    const column = table.columns.find((c) => c.name === table.key[0])!;
    const anyOf: FilterCondition[] = keys.map((key) => ({
      path: [column.name],
      operator: 'EQUALS',
      kind: column.kind,
      value: key[0]!,
    }));
    // At most one row per key: the limit lets a driver see the list is bounded (by the key).
    const rows = await data.driver.list(table, {
      filters: [{ anyOf }],
      orderBy: [],
      limit: anyOf.length,
    });
    return rows.map((row) => row.record);
  }
  // A composite key: the drivers' filters cannot pair the parts, so each record by its key.
  const rows = await Promise.all(keys.map((key) => data.driver.get(table, key)));
  return rows.flatMap((row) => (row === undefined ? [] : [row.record]));
}

async function expandReverse(
  data: DataContext,
  table: TableDescriptor,
  records: Record<string, unknown>[],
  node: ReverseNode,
  limit: number,
  principal: Principal | undefined,
): Promise<void> {
  const source = node.source;
  const sourceTable = source.definition.table;
  const column = sourceTable.columns.find((c) => c.name === node.field)!;
  const numeric = column.kind === 'integer' || (node.array && isIntegerKeyed(table));
  const values = records.map((record) => referenceValueOf(table, record));
  const anyOf: FilterCondition[] = [...new Set(values)].map((value) => ({
    path: [node.field],
    operator: 'EQUALS',
    kind: numeric ? 'integer' : 'text',
    value,
    ...(node.array ? { arrayMembership: true } : {}),
  }));
  const filters: FilterGroup[] = [{ anyOf }];
  const owner = ownerFilter(source.definition, ownerScope(source.access, principal));
  if (owner === 'nothing') {
    for (const record of records) record[node.property] = [];
    return;
  }
  if (owner !== undefined) filters.push(owner);
  const rows = await data.driver.list(sourceTable, { filters, orderBy: [] });
  const byValue = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const value = row.record[node.field];
    const items = node.array && Array.isArray(value) ? value : [value];
    for (const item of new Set(items.map(String))) {
      const list = byValue.get(item) ?? [];
      if (list.length < limit) list.push({ ...row.record });
      byValue.set(item, list);
    }
  }
  const embedded = [...byValue.values()].flat();
  await expandLevel(data, sourceTable, embedded, node.children, limit, principal);
  records.forEach((record, index) => {
    record[node.property] = byValue.get(String(values[index])) ?? [];
  });
}

function isIntegerKeyed(table: TableDescriptor): boolean {
  return (
    table.key.length === 1 && table.columns.find((c) => c.name === table.key[0])?.kind === 'integer'
  );
}

/**
 * The entity tag of an expanded record whose JSON text is `json`: the record's version and a short
 * hash of the representation, which the embedded records change.
 */
export function expandedEntityTag(version: number, json: string): string {
  return `"${version}.${createHash('sha256').update(json).digest('base64url').slice(0, 16)}"`;
}

/**
 * The entity a forward expansion of `plan` puts at `path` (`category`, `category.parent`), or
 * `undefined` when the plan expands nothing there (field selection into expanded records).
 */
export function expandedEntity(
  plan: ExpandPlan | undefined,
  path: readonly string[],
): EntityDefinition<object> | undefined {
  let nodes: readonly ExpandNode[] = plan?.nodes ?? [];
  let found: ForwardNode | undefined;
  for (const name of path) {
    found = nodes.find(
      (node): node is ForwardNode => node.kind === 'forward' && node.field === name,
    );
    if (found === undefined) return undefined;
    nodes = found.children;
  }
  return found?.target.definition;
}
