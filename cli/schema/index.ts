/** Schema phase: read, parse and validate ENTITY schema files into typed documents. */
export { loadSchemas, readSchemaSources } from './load.js';
export { SCHEMA_DIAGNOSTIC_CODES, type SchemaDiagnosticCode } from './codes.js';
export { didYouMean, editDistance } from './suggest.js';
export * from './types.js';
