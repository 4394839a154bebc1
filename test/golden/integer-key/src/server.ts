// This file is yours: entity-gen created it once and never changes it again. It starts the
// service; adapt it freely (configuration, logging, work to do before listening).
import { fileURLToPath } from 'node:url';
import {
  authFromEnv,
  envInteger,
  envString,
  parseCorsOrigins,
  startServer,
} from '@entity-gen/runtime';
import { createApp } from './app.js';
import { tables } from './service.js';

/** Reads the configuration from the environment (see README.md) and starts the service. */
async function main(env: NodeJS.ProcessEnv): Promise<void> {
  await startServer({
    createApp,
    tables,
    port: envInteger(env, 'PORT', 8080, { min: 0, max: 65535 }),
    host: envString(env, 'HOST', '0.0.0.0'),
    databaseUrl: envString(env, 'DATABASE_URL', 'sqlite:./data/service.db'),
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

main(process.env).catch((error: unknown) => {
  // Start-up problems (bad configuration, storage refusing migrations) end the process clearly.
  console.error(
    `The service could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
