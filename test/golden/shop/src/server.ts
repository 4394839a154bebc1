// This file is yours: entity-gen created it once and never changes it again. It starts the
// service; adapt it freely (configuration, logging, work to do before listening).
import { fileURLToPath } from 'node:url';
import { startServer } from '@entity-gen/runtime';
import { createApp } from './app.js';
import { tables } from './service.js';

// Configuration comes from the environment; see README.md for every variable.
const env = process.env;

startServer({
  createApp,
  tables,
  port: Number(env['PORT'] ?? 8080),
  host: env['HOST'] ?? '0.0.0.0',
  databaseUrl: env['DATABASE_URL'] ?? 'sqlite:./data/service.db',
  logLevel: env['LOG_LEVEL'] ?? 'info',
  bodyLimit: Number(env['BODY_LIMIT_BYTES'] ?? 10 * 1024 * 1024),
  // Pending migrations (written by entity-gen generate) are applied before the service listens.
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
}).catch((error: unknown) => {
  console.error(
    `The service could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
