/**
 * REST configuration phase (`--rest-config`): which methods each entity allows and how its lists
 * are paged and sorted. Pure: the caller reads the file.
 *
 * Decisions (see loadRestConfig and the codes for the full contract):
 * - An entity the config does not mention gets every method and getListStrategy ALL.
 * - START_LIMIT without defaultLimit is allowed: defaultLimit becomes 100 (DEFAULT_START_LIMIT),
 *   or maxWindow when that is smaller, and is written into the effective config.
 * - defaultLimit and maxWindow apply only to START_LIMIT; with ALL they are reported.
 * - allowedMethods is emitted in canonical order; an empty list switches every method off.
 * - defaultOrder entries are `name`, `-name` (descending) or `+name` (stored as `name`); every
 *   defaultOrder field must be in allowedOrderingFields when that is given.
 */
export { loadRestConfig, type RestConfigSource } from './load.js';
export { REST_DIAGNOSTIC_CODES, type RestDiagnosticCode } from './codes.js';
export {
  DEFAULT_ENTITY_REST_CONFIG,
  DEFAULT_START_LIMIT,
  GET_LIST_STRATEGIES,
  REST_METHODS,
  SORTABLE_FIELD_TYPES,
  type EntityRestConfig,
  type GetListStrategy,
  type RestMethod,
} from './types.js';
