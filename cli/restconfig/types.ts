/**
 * The effective REST configuration of an entity, as the CLI reads and checks it, with the method
 * and strategy names as lists to validate against. It is assignable to the runtime's
 * `RestConfig`, and the generator bakes it into the service with `JSON.stringify`, so its key
 * order is fixed.
 */
import type { FieldType } from '../schema/types.js';

/** The switchable operations, in canonical order (the order `allowedMethods` is emitted in). */
export const REST_METHODS = ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'] as const;

export type RestMethod = (typeof REST_METHODS)[number];

export const GET_LIST_STRATEGIES = ['ALL', 'START_LIMIT'] as const;

export type GetListStrategy = (typeof GET_LIST_STRATEGIES)[number];

/** Top-level field types a list can be sorted by (the runtime's filterable scalar types). */
export const SORTABLE_FIELD_TYPES: readonly FieldType[] = [
  'STRING',
  'INTEGER',
  'DOUBLE',
  'DECIMAL',
  'BOOL',
  'DATE',
  'DATE_TIME',
  'ENUM',
  'SELECT',
  'ENTITY_REF',
];

/**
 * `defaultLimit` of a START_LIMIT entity whose config gives none (capped at `maxWindow` when that
 * is smaller). It is written into the effective config, so the generated service and `/entity`
 * show the limit actually applied.
 */
export const DEFAULT_START_LIMIT = 100;

export interface EntityRestConfig {
  /** Allowed operations, in the canonical order of REST_METHODS. */
  readonly allowedMethods: readonly RestMethod[];
  readonly getListStrategy: GetListStrategy;
  /** Only with START_LIMIT: page size when the request gives no `limit`. */
  readonly defaultLimit?: number;
  /** Only with START_LIMIT: `start + limit` may not exceed it. */
  readonly maxWindow?: number;
  /** Applied when the request has no `orderBy`; `-name` sorts descending. Never empty. */
  readonly defaultOrder?: readonly string[];
  /** When present, `orderBy` may name only these fields (an empty list forbids `orderBy`). */
  readonly allowedOrderingFields?: readonly string[];
}

/** The configuration of an entity the REST config does not mention. */
export const DEFAULT_ENTITY_REST_CONFIG: EntityRestConfig = Object.freeze({
  allowedMethods: Object.freeze([...REST_METHODS]),
  getListStrategy: 'ALL',
});
