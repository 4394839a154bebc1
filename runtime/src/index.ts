/**
 * @entity-gen/runtime: what every generated service shares. Generated code imports from here;
 * drivers live on the `./sqlite` and `./postgres` subpaths so a service loads only its client.
 */
export {
  ACCESS_METHODS,
  ADMIN_ROLE,
  AUTHENTICATED_ROLE,
  AuthenticationRequiredError,
  authorize,
  mayCall,
  PUBLIC_ROLE,
  RoleRequiredError,
  type AccessMethod,
  type AccessRules,
  type OwnerScope,
  type Principal,
} from './auth/access.js';
export {
  authFromEnv,
  Authenticator,
  readApiKeys,
  type ApiKey,
  type AuthSettings,
  type JwtKey,
  type JwtSettings,
} from './auth/credentials.js';
export { OwnerRuleError } from './auth/owner.js';
export * from './convert.js';
export {
  defineEntity,
  type Converter,
  type EntityDefinition,
  type EntitySpec,
  type FieldInfo,
} from './definition.js';
export type * from './driver.js';
export * from './envelope.js';
export { envInteger, envString, type Environment } from './env.js';
export * from './errors.js';
export type { ChangeEvent } from './events/change.js';
export { EventHub, type EventHubOptions } from './events/hub.js';
export {
  DEFAULT_EVENT_SETTINGS,
  eventSettingsFromEnv,
  parseDuration,
  type EventSettings,
} from './events/settings.js';
export type {
  EntityHooks,
  EntityMiddleware,
  EntityRouter,
  EntityStore,
  HookContext,
} from './hooks.js';
export { DEFAULT_BODY_LIMIT, readJsonBody } from './http/body.js';
export { corsMiddleware, parseCorsOrigins } from './http/cors.js';
export { errorMiddleware, type RequestState } from './http/errors.js';
export { formatPath, type Issue, type IssueCode, type IssuePath } from './issues.js';
export {
  countRecords,
  DEFAULT_MAX_PAGE_SIZE,
  DEFAULT_REST_CONFIG,
  listRecords,
  parseListRequest,
  type ListRequest,
} from './listing.js';
export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export {
  compareMigrationIds,
  isMigrationError,
  loadMigrations,
  migrationChecksum,
  MigrationError,
  MIGRATIONS_TABLE,
  type MigrationErrorCode,
} from './migrations.js';
export {
  DEFAULT_HISTORY_LIMIT,
  getRecordHistory,
  MAX_HISTORY_LIMIT,
} from './history-routes.js';
export { historyRetentionFromEnv } from './history-retention.js';
export { createDriver, redactUrl } from './open.js';
export {
  type ConflictMode,
  deleteRecord,
  entityTag,
  getRecord,
  insertRecords,
  patchRecord,
  replaceRecord,
  restoreRecord,
} from './operations.js';
export { MAX_BATCH_OPERATIONS } from './batch.js';
export {
  DEFAULT_MAX_AFFECTED,
  deleteRecords,
  MAX_AFFECTED_LIMIT,
  patchRecords,
} from './bulk.js';
export type { DataContext } from './data-context.js';
export {
  checkKeyPart,
  parseKey,
  parseSingleRecordId,
  readRecordBody,
  RECORD_ROOT,
  toRefInteger,
  toRefText,
} from './record.js';
export { ReferencedRecordError, ReferenceMissingError } from './references.js';
export type { RestConfig } from './rest-config.js';
export { entityRouter, recordId, type DataRoutes } from './routes.js';
export type {
  EntityDocument,
  EntitySchema,
  FieldSchema,
  FieldType,
  JsonValue,
  SelectElemSchema,
  TypeSchema,
} from './schema.js';
export { adminEnabledFromEnv, callerRights, ADMIN_POLICY, type CallerRights } from './admin.js';
export { documentFor, readOpenApiDocument, type OpenApiDocument } from './openapi.js';
export { startServer, type RunningService, type StartOptions } from './server.js';
export {
  createService,
  tablesOf,
  type EntityInfo,
  type ServiceApp,
  type ServiceDefinition,
  type ServiceOptions,
} from './service.js';
