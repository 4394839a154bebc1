/**
 * The last step of the model: how the service serves each entity. The REST configuration and the
 * access file are checked against the schema model (cli/restconfig, cli/access); here they are
 * joined to it, and each entity's route table is decided — once, for the router in `routes.ts`,
 * its comments and the README alike.
 */
import type { EntityAccess } from '../access/types.js';
import { DEFAULT_ENTITY_REST_CONFIG, type EntityRestConfig } from '../restconfig/types.js';
import { filterOperatorsOf } from '@entity-gen/runtime/schema';
import type {
  EntityModel,
  FieldModel,
  FilterableModel,
  RouteModel,
  SchemaModel,
  ServedEntity,
  ServiceModel,
  TypeModel,
} from './types.js';

/** A route of the data interface before the REST configuration picks the allowed ones. */
type RouteSpec = Omit<RouteModel, 'fullPath' | 'summary'> & {
  /** What the route does; `{E}` is the entity name. */
  readonly summary: string;
  /** For a single-record entity: what it does there, or `undefined` when it has no such route. */
  readonly single: string | undefined;
  /** Only an entity with `softDelete` has the route. */
  readonly softDeleteOnly?: boolean;
  /** Only an entity with `history` has the route. */
  readonly historyOnly?: boolean;
};

/** Every route of an entity, in the order they are added to its router. */
const ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET',
    path: '/',
    rest: 'GET_LIST',
    operation: 'listRecords',
    summary: 'lists {E} records, filtered, sorted and paged',
    single: 'lists the {E} record, as a list of zero or one',
    takesId: false,
    takesRestConfig: true,
    takesHooks: false,
  },
  {
    method: 'POST',
    path: '/',
    rest: 'NEW',
    operation: 'insertRecords',
    summary:
      'inserts one {E} record, or a list of them in one transaction (upserts with onConflict)',
    single: undefined,
    takesId: false,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    method: 'PATCH',
    path: '/',
    rest: 'UPDATE',
    operation: 'patchRecords',
    summary: 'changes some fields of every {E} record the filters match, in one transaction',
    single: undefined,
    takesId: false,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    method: 'DELETE',
    path: '/',
    rest: 'DELETE',
    operation: 'deleteRecords',
    summary: 'deletes every {E} record the filters match, in one transaction',
    single: undefined,
    takesId: false,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    // Before GET '/*id', which would take `<id>/history` for an id.
    method: 'GET',
    path: '/*id/history',
    rest: 'GET_BYID',
    operation: 'getRecordHistory',
    summary: 'lists the kept versions of one {E} record, newest first',
    single: 'lists the kept versions of the {E} record, newest first',
    takesId: false,
    takesRestConfig: false,
    takesHooks: false,
    historyOnly: true,
  },
  {
    method: 'GET',
    path: '/*id',
    rest: 'GET_BYID',
    operation: 'getRecord',
    summary: 'reads one {E} record',
    single: 'reads the {E} record',
    takesId: true,
    takesRestConfig: false,
    takesHooks: false,
  },
  {
    method: 'PUT',
    path: '/*id',
    rest: 'UPDATE',
    operation: 'replaceRecord',
    summary: 'replaces one {E} record, renames it, or creates it when absent',
    single: 'replaces the {E} record, or creates it',
    takesId: true,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    method: 'PATCH',
    path: '/*id',
    rest: 'UPDATE',
    operation: 'patchRecord',
    summary: 'changes some fields of one {E} record',
    single: 'changes some fields of the {E} record, or creates it',
    takesId: true,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    method: 'DELETE',
    path: '/*id',
    rest: 'DELETE',
    operation: 'deleteRecord',
    summary: 'deletes one {E} record and returns it',
    single: undefined,
    takesId: true,
    takesRestConfig: false,
    takesHooks: true,
  },
  {
    method: 'POST',
    path: '/*id/restore',
    rest: 'DELETE',
    operation: 'restoreRecord',
    summary: 'restores one soft-deleted {E} record',
    single: undefined,
    takesId: false,
    takesRestConfig: false,
    takesHooks: false,
    softDeleteOnly: true,
  },
];

/**
 * The model of the whole generation: every entity with its REST configuration (the default when
 * the file names none), its access rules (when there is an access file) and its routes.
 */
export function serveModel(
  model: SchemaModel,
  restConfigs: ReadonlyMap<string, EntityRestConfig>,
  access: ReadonlyMap<string, EntityAccess> | undefined,
): ServiceModel {
  const entities = model.entities.map((entity): ServedEntity => {
    const restConfig = restConfigs.get(entity.name) ?? DEFAULT_ENTITY_REST_CONFIG;
    const rules = access?.get(entity.name);
    return Object.freeze({
      ...entity,
      restConfig,
      ...(rules === undefined ? {} : { access: rules }),
      routes: Object.freeze(routesOf(entity, restConfig)),
      counts: restConfig.allowedMethods.includes('GET_LIST'),
      filterable: Object.freeze(filterablePaths(entity.fields, [])),
      sortable: Object.freeze(
        restConfig.allowedOrderingFields ??
          entity.fields.filter(isSortable).map((field) => field.name),
      ),
    });
  });
  return Object.freeze({
    ...model,
    entities: Object.freeze(entities),
    accessControlled: access !== undefined,
  });
}

/** The routes an entity's router has: those its kind has, minus what the configuration switched off. */
function routesOf(entity: EntityModel, restConfig: EntityRestConfig): RouteModel[] {
  const collection = `/data/${entity.pathName}`;
  const record = `${collection}/${entity.singleRecord ? (entity.lkValue ?? '{id}') : '{id}'}`;
  const routes: RouteModel[] = [];
  for (const { single, summary, softDeleteOnly, historyOnly, ...route } of ROUTES) {
    const text = entity.singleRecord ? single : summary;
    if (text === undefined || !restConfig.allowedMethods.includes(route.rest)) continue;
    if (softDeleteOnly === true && entity.table.softDelete !== true) continue;
    if (historyOnly === true && entity.table.history !== true) continue;
    routes.push({
      ...route,
      fullPath:
        route.path === '/'
          ? collection
          : softDeleteOnly === true
            ? `${record}/restore`
            : historyOnly === true
              ? `${record}/history`
              : record,
      summary: text.replace('{E}', entity.name),
    });
  }
  return routes;
}

/** Whether a value of this type can be filtered (with operators) and sorted. */
function isSortable(model: TypeModel): boolean {
  return filterOperatorsOf({ type: model.type }) !== undefined;
}

/** The paths lists filter by: scalar fields, scalar fields inside objects, arrays of scalars. */
function filterablePaths(
  fields: readonly FieldModel[],
  parents: readonly string[],
): FilterableModel[] {
  const found: FilterableModel[] = [];
  for (const field of fields) {
    const path = [...parents, field.name];
    if (field.type === 'OBJECT' && field.fields !== undefined)
      found.push(...filterablePaths(field.fields, path));
    else if (
      field.type === 'ARRAY'
        ? field.element !== undefined && isSortable(field.element)
        : isSortable(field)
    )
      found.push({ path: path.join('.'), type: field });
  }
  return found;
}
