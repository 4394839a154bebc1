/**
 * `fields=code,name,dims.width` of a list or a GET by key (SPEC §17): only the named fields of
 * each record are returned.
 *
 * - A name is a top-level field; a dotted path goes into an OBJECT field (`dims.width`) or into a
 *   reference that `expand=` embeds (`category.name&expand=category`, and deeper along the
 *   expansion: `category.parent.name&expand=category.parent`). A path through an ARRAY of
 *   references selects in each embedded record. Naming a field selects all of it.
 * - Reverse expansions (`PRODUCT.category`) are kept whole when `fields` names them as written.
 * - An unknown path, a path into a field that is neither an OBJECT nor an expanded reference, an
 *   empty name, or more than {@link MAX_SELECTED_PATHS} paths → 400 naming it.
 * - A selected field the record does not have stays absent (as in the full record); the record
 *   keeps the order of its fields, not the order of `fields`.
 * - The key is not added: a client that needs it names it.
 */
import type { EntityDefinition } from '../definition.js';
import type { FieldInfo } from '../schema.js';
import { BadRequestError, quoteInput } from '../errors.js';
import { expandedEntity, type ExpandPlan } from '../expand.js';

/** Most paths one `fields` may name. */
export const MAX_SELECTED_PATHS = 100;

/** What to keep of a record: `true` keeps a property whole, a nested selection keeps part of it. */
export type Selection = ReadonlyMap<string, true | Selection>;

/** The selection of `fields=` in the query string, or `undefined` when absent. */
export function parseFields(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
  plan: ExpandPlan | undefined,
): Selection | undefined {
  const values = params.getAll('fields');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new BadRequestError('Parameter fields may be given only once');
  const paths = values[0]!.split(',').map((path) => path.trim());
  if (paths.length > MAX_SELECTED_PATHS) {
    throw new BadRequestError(
      `Parameter fields names ${paths.length} paths; at most ${MAX_SELECTED_PATHS} are allowed`,
    );
  }
  const root = new Map<string, true | Map<string, unknown>>();
  for (const path of paths) {
    if (path === '') throw new BadRequestError('Parameter fields has an empty field name');
    select(definition, plan, root as MutableSelection, path);
  }
  return root as Selection;
}

type MutableSelection = Map<string, true | MutableSelection>;

function select(
  definition: EntityDefinition<object>,
  plan: ExpandPlan | undefined,
  root: MutableSelection,
  path: string,
): void {
  const reverse = plan?.nodes.some((node) => node.kind === 'reverse' && node.property === path);
  if (reverse === true) {
    root.set(path, true);
    return;
  }
  const names = path.split('.');
  let fields: Readonly<Record<string, FieldInfo>> | undefined = definition.fields;
  let where = `Entity ${definition.name}`;
  let level = root;
  // The expansion path so far, across references only.
  const referencePath: string[] = [];
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!;
    const field: FieldInfo | undefined =
      fields !== undefined && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field === undefined || name === '') {
      throw new BadRequestError(
        `Parameter fields names ${JSON.stringify(quoteInput(path))}: ${quoteInput(name) === '' ? 'an empty name' : `${JSON.stringify(quoteInput(name))} is not a field`} in ${where}`,
      );
    }
    const last = index === names.length - 1;
    if (last) {
      level.set(name, true);
      return;
    }
    const existing = level.get(name);
    if (existing === true) return; // The whole field is already selected.
    let next: Readonly<Record<string, FieldInfo>> | undefined;
    const reference =
      field.type === 'ENTITY_REF' ||
      (field.type === 'ARRAY' && field.element?.type === 'ENTITY_REF');
    if (field.type === 'OBJECT') {
      next = field.fields;
      where = `field ${names.slice(0, index + 1).join('.')}`;
    } else if (reference) {
      const target = expandedEntity(plan, [...referencePath, name]);
      if (target === undefined) {
        throw new BadRequestError(
          `Parameter fields names ${JSON.stringify(quoteInput(path))}, which goes into the reference ${names.slice(0, index + 1).join('.')}: expand it (expand=${[...referencePath, name].join('.')}) to select its fields`,
        );
      }
      referencePath.push(name);
      next = target.fields;
      where = `Entity ${target.name}`;
    } else {
      throw new BadRequestError(
        `Parameter fields names ${JSON.stringify(quoteInput(path))}, but ${names.slice(0, index + 1).join('.')} is a ${field.type}, not an OBJECT or an expanded reference`,
      );
    }
    const child: MutableSelection = existing ?? new Map();
    level.set(name, child);
    level = child;
    fields = next;
  }
}

/** The part of `record` that `selection` keeps (arrays: each element; null stays null). */
export function project(value: unknown, selection: Selection): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((element) => project(element, selection));
  const record = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const name of Object.keys(record)) {
    const selected = selection.get(name);
    if (selected === undefined) continue;
    result[name] = selected === true ? record[name] : project(record[name], selected);
  }
  return result;
}
