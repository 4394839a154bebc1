/** The methods of an access rule, in canonical order (the REST configuration's names). */
export const ACCESS_METHODS = ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'] as const;
export type AccessMethod = (typeof ACCESS_METHODS)[number];

/** The resolved rules of one entity: roles for every method, and its owner field. */
export interface EntityAccess {
  readonly methods: Readonly<Record<AccessMethod, readonly string[]>>;
  readonly owner?: string;
}
