// This file is yours: entity-gen created it once and never changes it again. It starts the
// service; adapt it freely (configuration, logging, work to do before listening).
import { fileURLToPath } from 'node:url';
import {
  authFromEnv,
  envInteger,
  envString,
  parseCorsOrigins,
  startServer,
  type RunningService,
} from '@entity-gen/runtime';
import { createApp } from './app.js';
import { tables } from './service.js';

/** Reads the configuration from the environment (see README.md) and starts the service. */
async function start(env: NodeJS.ProcessEnv): Promise<RunningService> {
  return startServer({
    createApp,
    tables,
    port: envInteger(env, 'PORT', 8080, { min: 0, max: 65535 }),
    host: envString(env, 'HOST', '0.0.0.0'),
    databaseUrl: envString(env, 'DATABASE_URL', 'sqlite:./data/service.db'),
    // The storage driver reads its own settings (SQLITE_SYNCHRONOUS, PGPOOL_MAX, …) from here.
    env,
    logLevel: envString(env, 'LOG_LEVEL', 'info'),
    bodyLimit: envInteger(env, 'BODY_LIMIT_BYTES', 10 * 1024 * 1024, { min: 1 }),
    requestTimeoutMs: envInteger(env, 'REQUEST_TIMEOUT_MS', 30_000, { min: 1000 }),
    maxConnections: envInteger(env, 'MAX_CONNECTIONS', 1024, { min: 1 }),
    maxPageSize: envInteger(env, 'MAX_PAGE_SIZE', 1000, { min: 1 }),
    // The key that signs list cursors; unset: generated once and kept in the database.
    ...(env['CURSOR_SECRET'] ? { cursorSecret: env['CURSOR_SECRET'] } : {}),
    // Credentials for the access rules: JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL, API_KEYS_FILE.
    auth: await authFromEnv(env),
    corsOrigins: parseCorsOrigins(env['CORS_ORIGINS']),
    // Behind a proxy that sets X-Forwarded-For/-Proto/-Host, and only then: TRUST_PROXY=true.
    trustProxy: env['TRUST_PROXY'] === 'true',
    // Pending migrations (written by entity-gen generate) are applied before the service listens.
    migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  });
}

/** Ends the process with exit code 1 and one line naming the problem. */
function exitWith(what: string, error: unknown): never {
  console.error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

// Start-up problems (bad configuration, storage refusing migrations) end the process clearly.
const service = await start(process.env).catch((error: unknown) =>
  exitWith('The service could not start', error),
);
// Settles when the service has stopped: after a graceful shutdown on SIGTERM or SIGINT, or when
// its storage became unusable (logged as fatal).
await service.stopped.catch((error: unknown) => exitWith('The service stopped', error));
process.exit(0);
