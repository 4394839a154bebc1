/**
 * Access rules (SPEC §8): who may call each method of an entity, generated from the access file
 * (`entity-gen generate --access access.yaml`) into each entity's routes, and checked by the
 * service before a handler runs.
 */
import { HttpError } from '../errors.js';

/** The methods an access rule (and the REST configuration) names. */
export type AccessMethod = 'GET_LIST' | 'GET_BYID' | 'NEW' | 'UPDATE' | 'DELETE';

/** Every method, in the canonical order. */
export const ACCESS_METHODS: readonly AccessMethod[] = [
  'GET_LIST',
  'GET_BYID',
  'NEW',
  'UPDATE',
  'DELETE',
];

/** Anyone, with or without credentials. */
export const PUBLIC_ROLE = 'public';
/** Any caller with valid credentials. */
export const AUTHENTICATED_ROLE = 'authenticated';
/** A principal with this role is not restricted by owner rules. */
export const ADMIN_ROLE = 'admin';

/** The roles that may call each method of one entity, and its row rule. */
export type AccessRules = {
  readonly [M in AccessMethod]: readonly string[];
} & {
  /**
   * The owner rule: a principal without the `admin` role sees, counts, changes and deletes only
   * records whose field of this name equals its subject, and inserts only such records.
   */
  readonly owner?: string;
};

/** Who is calling: from a verified JWT or an API key. */
export interface Principal {
  /** The JWT's `sub`, or the API key's name. */
  readonly subject: string;
  readonly roles: readonly string[];
  /** How the caller authenticated. */
  readonly via: 'jwt' | 'api-key';
}

/** 401 for a request without valid credentials on a method that needs them. */
export class AuthenticationRequiredError extends HttpError {
  constructor(invalid: boolean) {
    super(401, 'Authentication required', {
      headers: {
        'WWW-Authenticate': invalid
          ? 'Bearer error="invalid_token"'
          : 'Bearer realm="entity-gen", X-API-Key',
      },
    });
  }
}

/** 403 for a valid principal that has none of the roles a method needs. */
export class RoleRequiredError extends HttpError {
  constructor(method: AccessMethod, entity: string) {
    super(403, `Role required for ${method} on Entity ${entity}`);
  }
}

/** Whether `principal` (undefined: anonymous) may call a method allowed to `roles`. */
export function mayCall(roles: readonly string[], principal: Principal | undefined): boolean {
  if (roles.includes(PUBLIC_ROLE)) return true;
  if (principal === undefined) return false;
  if (roles.includes(AUTHENTICATED_ROLE)) return true;
  return principal.roles.some((role) => roles.includes(role));
}

/**
 * Checks that the caller may call `method` of `entity`; throws the 401 or 403 otherwise. `rules`
 * undefined means the service has no access rules: everything is public.
 */
export function authorize(
  rules: AccessRules | undefined,
  method: AccessMethod,
  entity: string,
  principal: Principal | undefined,
): void {
  if (rules === undefined || mayCall(rules[method], principal)) return;
  if (principal === undefined) throw new AuthenticationRequiredError(false);
  throw new RoleRequiredError(method, entity);
}

/**
 * The owner restriction that applies to a caller: the owner field and the subject its records
 * must hold, or `undefined` when the entity has no owner rule or the caller is an admin.
 * An anonymous caller (a public method on an owned entity) has no subject: it owns nothing.
 */
export interface OwnerScope {
  readonly field: string;
  readonly subject: string | undefined;
}

export function ownerScope(
  rules: AccessRules | undefined,
  principal: Principal | undefined,
): OwnerScope | undefined {
  if (rules?.owner === undefined) return undefined;
  if (principal?.roles.includes(ADMIN_ROLE) === true) return undefined;
  return { field: rules.owner, subject: principal?.subject };
}
