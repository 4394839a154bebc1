/**
 * The shared SQL builder of both drivers: dialect interface, list/count/filter SQL, keyset paging.
 */
export { SqlParams, quoteIdentifier, type OperandMode, type SqlDialect } from './dialect.js';
export {
  buildConditionSql,
  buildCountSql,
  buildFilterSql,
  buildKeysetSql,
  buildListSql,
  resolveSortTerms,
  type BuiltSql,
  type SortTerm,
} from './query.js';
