/**
 * The owner rule of the access file (`owner: <field>`): a caller without the `admin` role only
 * sees, counts, changes and deletes records whose owner field holds its subject, and every record
 * it writes gets its subject there. Lists and counts are filtered in the query (paging and counts
 * stay exact); someone else's record reads as 404; writing another owner is a 403.
 */
import type { Context } from 'koa';
import type { EntityDefinition } from '../definition.js';
import type { FilterGroup, KeyValue } from '../driver.js';
import { HttpError, quoteInput } from '../errors.js';
import type { OwnerScope } from './access.js';

/** The owner restriction of the current request, set by the service before the handler runs. */
export function ownerScopeOf(ctx: Context): OwnerScope | undefined {
  return (ctx.state as { owner?: OwnerScope } | undefined)?.owner;
}

/**
 * 403 for a write that would give a record another owner than the caller. `unfitSubject`: the
 * caller's subject, when the owner field's type cannot hold it (not an integer for an INTEGER
 * field), so that the caller can own no record at all.
 */
export class OwnerRuleError extends HttpError {
  constructor(entity: string, field: string, anonymous: boolean, unfitSubject?: string) {
    super(
      403,
      anonymous
        ? `Records of Entity ${entity} belong to their ${field}: sign in to write one`
        : unfitSubject !== undefined
          ? `Field ${field} of Entity ${entity} holds integer ids: your subject ${quoteInput(unfitSubject)} cannot own a record`
          : `Field ${field} of Entity ${entity} must be your own subject: you may not write records of another owner`,
    );
  }
}

/** The caller's subject as a value of the owner field, or `undefined` when no record can hold it. */
export function ownerValue(
  definition: EntityDefinition<object>,
  scope: OwnerScope,
): KeyValue | undefined {
  const subject = scope.subject;
  if (subject === undefined) return undefined;
  const field = definition.fields[scope.field];
  const numeric = field?.type === 'INTEGER' || field?.integerRef === true;
  if (!numeric) return subject;
  const value = Number(subject);
  return /^-?\d+$/.test(subject) && Number.isSafeInteger(value) ? value : undefined;
}

/**
 * The filter a list or count gets: the owner field equals the caller's subject. `'nothing'` when
 * the caller can own no record (anonymous, or a subject the field's type cannot hold).
 */
export function ownerFilter(
  definition: EntityDefinition<object>,
  scope: OwnerScope | undefined,
): FilterGroup | 'nothing' | undefined {
  if (scope === undefined) return undefined;
  const value = ownerValue(definition, scope);
  if (value === undefined) return 'nothing';
  return {
    anyOf: [
      {
        path: [scope.field],
        operator: 'EQUALS',
        kind: typeof value === 'number' ? 'integer' : 'text',
        value,
      },
    ],
  };
}

/** Whether a stored record belongs to the caller (always true without an owner restriction). */
export function owns(
  definition: EntityDefinition<object>,
  scope: OwnerScope | undefined,
  record: object,
): boolean {
  if (scope === undefined) return true;
  const value = ownerValue(definition, scope);
  const stored = (record as Record<string, unknown>)[scope.field];
  return value !== undefined && stored === value;
}

/**
 * A request body record with the owner field filled in with the caller's subject when it is
 * absent (the body is not changed otherwise; validation follows).
 */
export function withOwner(
  definition: EntityDefinition<object>,
  scope: OwnerScope | undefined,
  payload: unknown,
): unknown {
  if (scope === undefined || typeof payload !== 'object' || payload === null) return payload;
  if (Array.isArray(payload)) return payload;
  const body = payload as Record<string, unknown>;
  if (body[scope.field] !== undefined && body[scope.field] !== null) return payload;
  const value = ownerValue(definition, scope);
  if (value === undefined) throw ownerRuleError(definition, scope);
  return { ...body, [scope.field]: value };
}

/** Throws the 403 when a record about to be written does not belong to the caller. */
export function requireOwned(
  definition: EntityDefinition<object>,
  scope: OwnerScope | undefined,
  record: object,
): void {
  if (scope === undefined || owns(definition, scope, record)) return;
  throw ownerRuleError(definition, scope);
}

/** The 403 of a write that breaks the owner rule, saying why the caller cannot own the record. */
function ownerRuleError(definition: EntityDefinition<object>, scope: OwnerScope): OwnerRuleError {
  const { subject } = scope;
  if (subject === undefined) return new OwnerRuleError(definition.name, scope.field, true);
  const unfit = ownerValue(definition, scope) === undefined ? subject : undefined;
  return new OwnerRuleError(definition.name, scope.field, false, unfit);
}
