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
