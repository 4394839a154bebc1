/**
 * Filter parameters of a list or count request (`field=v`, `field[OP]=v`, dotted paths into
 * OBJECT fields): each is checked against the schema, its value converted like the field's values
 * in a request body, and repeated parameters grouped (the rules are in listing.ts's header).
 */
import {
  enumConverter,
  selectConverter,
  toBoolean,
  toDate,
  toDateTime,
  toDecimal,
  toDouble,
  toInteger,
  toText,
} from '../convert.js';
import type { Converter, EntityDefinition, FieldInfo } from '../definition.js';
import type {
  ColumnKind,
  FilterCondition,
  FilterGroup,
  FilterOperator,
  KeyValue,
} from '../driver.js';
import { BadRequestError, quoteInput } from '../errors.js';
import type { Issue } from '../issues.js';
import { filterOperatorsOf, MEMBERSHIP_OPERATORS } from '../schema.js';

/** Query parameters with a meaning of their own; every other parameter is a filter. */
export const RESERVED: ReadonlySet<string> = new Set([
  'orderBy',
  'start',
  'limit',
  'cursor',
  'expand',
  'expandLimit',
  'fields',
  'filter',
  'count',
]);

/** The parameter that lists soft-deleted records too (`include`) or only them (`only`). */
export const DELETED_PARAMETER = 'deleted';

/** The parameter of a full-text search (`q=hammer`, search.ts). */
export const SEARCH_PARAMETER = 'q';

/**
 * Whether `q` is the search parameter for this entity: always when it is searchable, and when it
 * has no field named `q` (which `q=` then filters, as before search existed).
 */
export function isSearchParameter(definition: EntityDefinition<object>): boolean {
  return (
    definition.table.search !== undefined || !Object.hasOwn(definition.fields, SEARCH_PARAMETER)
  );
}

/** Most filter values (conditions) one request may carry. */
export const MAX_FILTER_VALUES = 200;

/** Operators and their aliases as written in `field[OP]=value`, matched case-insensitively. */
const OPERATORS: Readonly<Record<string, FilterOperator>> = {
  EQUALS: 'EQUALS',
  NOT_EQUALS: 'NOT_EQUALS',
  '!': 'NOT_EQUALS',
  NOT: 'NOT_EQUALS',
  CONTAINS: 'CONTAINS',
  NOT_CONTAINS: 'NOT_CONTAINS',
  STARTS_WITH: 'STARTS_WITH',
  ENDS_WITH: 'ENDS_WITH',
  IEQUALS: 'IEQUALS',
  ICONTAINS: 'ICONTAINS',
  ISTARTS_WITH: 'ISTARTS_WITH',
  IENDS_WITH: 'IENDS_WITH',
  GT: 'GT',
  GTE: 'GTE',
  LT: 'LT',
  LTE: 'LTE',
};

const NEGATED: readonly FilterOperator[] = ['NOT_EQUALS', 'NOT_CONTAINS'];
const TEXT_MATCH: readonly FilterOperator[] = [
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
  'IEQUALS',
  'ICONTAINS',
  'ISTARTS_WITH',
  'IENDS_WITH',
];

const KIND_BY_TYPE: Readonly<Record<string, ColumnKind>> = {
  STRING: 'text',
  ENUM: 'text',
  SELECT: 'text',
  ENTITY_REF: 'text',
  INTEGER: 'integer',
  DOUBLE: 'double',
  DECIMAL: 'decimal',
  DATE: 'date',
  DATE_TIME: 'datetime',
  BOOL: 'boolean',
};

/** A parsed filter parameter, before grouping. */
export interface ParsedCondition {
  readonly condition: FilterCondition;
  /** Conditions with equal group keys are repeated parameters: one OR group. */
  readonly groupKey: string;
}

/** The entity a reference field of the filtered entity names (filtering through a reference). */
export type ReferenceTargets = (field: string) => EntityDefinition<object> | undefined;

export function parseFilters(
  definition: EntityDefinition<object>,
  params: URLSearchParams,
  targets?: ReferenceTargets,
): FilterGroup[] {
  const groups = new Map<string, FilterCondition[]>();
  let values = 0;
  for (const [name, value] of params) {
    if (RESERVED.has(name)) continue;
    // `deleted=include|only` (SPEC §13) on an entity that keeps deleted records.
    if (name === DELETED_PARAMETER && definition.table.softDelete === true) continue;
    // `q=`, full-text search (search.ts), unless it filters a field of that name.
    if (name === SEARCH_PARAMETER && isSearchParameter(definition)) continue;
    if (++values > MAX_FILTER_VALUES) {
      throw new BadRequestError(
        `Too many filter parameters: at most ${MAX_FILTER_VALUES} filter values per request (parameter ${quoteInput(name)})`,
      );
    }
    const { condition, groupKey } = parseCondition(definition, name, value, targets);
    const group = groups.get(groupKey);
    if (group === undefined) groups.set(groupKey, [condition]);
    else group.push(condition);
  }
  const result: FilterGroup[] = [];
  for (const conditions of groups.values()) {
    const operator = conditions[0]!.operator;
    if (NEGATED.includes(operator)) {
      // NOT (a OR b) = NOT a AND NOT b: one group per value.
      for (const condition of conditions) result.push({ anyOf: [condition] });
    } else {
      result.push({ anyOf: conditions });
    }
  }
  return result;
}

const FILTER_PARAMETER = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[([^\]]*)\])?$/;

export function parseCondition(
  definition: EntityDefinition<object>,
  name: string,
  raw: string,
  targets?: ReferenceTargets,
): ParsedCondition {
  // The parameter name as reasons quote it: a client may send 8 KB of it.
  const parameter = quoteInput(name);
  const match = FILTER_PARAMETER.exec(name);
  if (match === null) {
    throw new BadRequestError(
      `Query parameter ${JSON.stringify(parameter)} is not a filter: use field=value, field[OPERATOR]=value or a dotted path into an OBJECT field`,
    );
  }
  const path = match[1]!.split('.');
  const operatorText = match[2];
  const operatorKey = operatorText?.toUpperCase();
  const operator =
    operatorKey === undefined
      ? 'EQUALS'
      : Object.hasOwn(OPERATORS, operatorKey)
        ? OPERATORS[operatorKey]
        : undefined;
  if (operator === undefined) {
    throw new BadRequestError(
      `Unknown operator ${JSON.stringify(quoteInput(operatorText ?? ''))} in query parameter ${parameter}; use one of ${Object.keys(OPERATORS).join(', ')}`,
    );
  }
  const first = Object.hasOwn(definition.fields, path[0]!)
    ? definition.fields[path[0]!]
    : undefined;
  if (path.length > 1 && first?.type === 'ENTITY_REF') {
    return throughReference(definition, path, operatorText, raw, parameter, targets);
  }
  const field = resolvePath(definition, path, parameter);
  const dotted = path.join('.');
  const groupKey = JSON.stringify([path, operator]);
  if (field.type === 'ARRAY') {
    const element = field.element;
    if (element === undefined || filterOperatorsOf(element) === undefined) {
      throw new BadRequestError(
        `Field ${dotted} is an ARRAY of ${element?.type ?? 'unknown'} values, which cannot be filtered (parameter ${parameter})`,
      );
    }
    if (!MEMBERSHIP_OPERATORS.includes(operator)) {
      throw new BadRequestError(
        `Operator ${operator} does not apply to the ARRAY field ${dotted} (parameter ${parameter}); use CONTAINS or NOT_CONTAINS to test membership`,
      );
    }
    const condition: FilterCondition = {
      path,
      operator,
      kind: kindOf(element),
      value: convertValue(element, 'EQUALS', raw, parameter),
      arrayMembership: true,
    };
    return { condition, groupKey };
  }
  const allowed = filterOperatorsOf(field);
  if (allowed === undefined) {
    throw new BadRequestError(
      `Field ${dotted} of type ${field.type} cannot be filtered (parameter ${parameter})${field.type === 'OBJECT' ? '; filter one of its fields with a dotted path' : ''}`,
    );
  }
  if (!allowed.includes(operator)) {
    throw new BadRequestError(
      `Operator ${operator} does not apply to field ${dotted} of type ${field.type} (parameter ${parameter}); use one of ${allowed.join(', ')}`,
    );
  }
  const condition: FilterCondition = {
    path,
    operator,
    kind: kindOf(field),
    value: convertValue(field, operator, raw, parameter),
  };
  return { condition, groupKey };
}

/**
 * `category.name=tools`: a condition on a field of the record the reference names, one level
 * deep (the path after the reference may go into the target's OBJECT fields, not through another
 * reference).
 */
function throughReference(
  definition: EntityDefinition<object>,
  path: readonly string[],
  operatorText: string | undefined,
  raw: string,
  parameter: string,
  targets: ReferenceTargets | undefined,
): ParsedCondition {
  const field = path[0]!;
  const target = targets?.(field);
  if (target === undefined) {
    throw new BadRequestError(
      `Field ${field} of Entity ${definition.name} is a reference; its target's fields cannot be filtered here (parameter ${parameter})`,
    );
  }
  if (target.table.key.length !== 1) {
    throw new BadRequestError(
      `Field ${field} references ${target.name}, whose key has several fields; filter by ${field} itself (parameter ${parameter})`,
    );
  }
  const rest = path.slice(1);
  const restFirst = Object.hasOwn(target.fields, rest[0]!) ? target.fields[rest[0]!] : undefined;
  if (rest.length > 1 && restFirst?.type === 'ENTITY_REF') {
    throw new BadRequestError(
      `Filtering goes through one reference only: ${quoteInput(path.join('.'))} goes through two (parameter ${parameter})`,
    );
  }
  const innerName = `${rest.join('.')}${operatorText === undefined ? '' : `[${operatorText}]`}`;
  let inner: ParsedCondition;
  try {
    inner = parseCondition(target, innerName, raw);
  } catch (error) {
    if (error instanceof BadRequestError) {
      throw new BadRequestError(
        `${error.reason.replace(/ \(parameter [^)]*\)$/, '')} (through reference ${field} of Entity ${definition.name}, parameter ${parameter})`,
        error.issues,
      );
    }
    throw error;
  }
  return {
    condition: { ...inner.condition, through: { field, target: target.table } },
    groupKey: JSON.stringify([path, inner.condition.operator]),
  };
}

function resolvePath(
  definition: EntityDefinition<object>,
  path: readonly string[],
  parameter: string,
): FieldInfo {
  let fields: Readonly<Record<string, FieldInfo>> | undefined = definition.fields;
  let field: FieldInfo | undefined;
  for (let index = 0; index < path.length; index++) {
    const name = path[index]!;
    if (index > 0 && field?.type !== 'OBJECT') {
      throw new BadRequestError(
        `Field ${path.slice(0, index).join('.')} is not an OBJECT, so ${quoteInput(path.join('.'))} does not exist (parameter ${parameter})`,
      );
    }
    field = fields !== undefined && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field === undefined) {
      const where =
        index === 0 ? `Entity ${definition.name}` : `field ${path.slice(0, index).join('.')}`;
      throw new BadRequestError(
        `Unknown field ${quoteInput(path.slice(0, index + 1).join('.'))} in ${where} (parameter ${parameter})`,
      );
    }
    fields = field.fields;
  }
  if (field === undefined) throw new BadRequestError(`Empty field name in parameter ${parameter}`);
  return field;
}

function kindOf(field: FieldInfo): ColumnKind {
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return 'integer';
  return KIND_BY_TYPE[field.type] ?? 'json';
}

/** Converts a filter value as the field's type would convert it in a request body. */
function convertValue(
  field: FieldInfo,
  operator: FilterOperator,
  raw: string,
  parameter: string,
): KeyValue {
  if (raw.includes('\u0000')) {
    throw new BadRequestError(
      `Value of query parameter ${parameter} contains the character U+0000, which stored values cannot hold`,
    );
  }
  // Substring tests look for the text as written.
  if (TEXT_MATCH.includes(operator)) return raw;
  const value = convertScalar(field, raw);
  if (value === undefined) {
    throw new BadRequestError(
      `Value ${JSON.stringify(quoteInput(raw))} of query parameter ${parameter} is not a valid ${typeLabel(field)}`,
    );
  }
  return value;
}

function typeLabel(field: FieldInfo): string {
  if (field.type === 'ENTITY_REF' && field.integerRef === true) return 'ENTITY_REF (an INTEGER id)';
  if (field.values !== undefined) return `${field.type} (one of ${field.values.join(', ')})`;
  return field.type;
}

/** The canonical value of a scalar of `field`'s type, or `undefined` when it does not convert. */
export function convertScalar(field: FieldInfo, raw: unknown): KeyValue | undefined {
  const issues: Issue[] = [];
  return converterFor(field)(raw, [], 'value', issues);
}

function converterFor(field: FieldInfo): Converter<KeyValue> {
  switch (field.type) {
    case 'INTEGER':
      return toInteger;
    case 'DOUBLE':
      return toDouble;
    case 'DECIMAL':
      return toDecimal;
    case 'BOOL':
      return toBoolean;
    case 'DATE':
      return toDate;
    case 'DATE_TIME':
      return toDateTime;
    case 'ENUM':
      return enumConverter(field.values ?? []);
    case 'SELECT':
      return selectConverter(field.values ?? []);
    case 'ENTITY_REF':
      return field.integerRef === true ? toInteger : toText;
    default:
      return toText;
  }
}
