// Baseline (c), the peer: Platformatic DB 2.61.0 (Fastify + REST + GraphQL generated from the
// database schema) serving the benchmark's ITEM table from a SQLite file. Installed on demand by
// bench/run.mjs (`npm ci --prefix bench/baselines/platformatic`), not by the root `npm ci`.
// Env: PORT, HOST (127.0.0.1), DATABASE_FILE, SQLITE_SYNCHRONOUS (NORMAL).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer } from '@platformatic/db';

const here = dirname(fileURLToPath(import.meta.url));
const file = process.env.DATABASE_FILE ?? join(here, 'platformatic.db');
// Platformatic reads a tsconfig.json of its working directory (and the repository's has no
// outDir): run from this folder, which has none.
process.chdir(here);

const app = await buildServer({
  server: {
    hostname: process.env.HOST ?? '127.0.0.1',
    port: Number(process.env.PORT ?? 8083),
    logger: { level: 'warn' },
  },
  db: {
    connectionString: `sqlite://${file}`,
    graphql: true,
    openapi: true,
    schemalock: false,
  },
  migrations: { dir: join(here, 'migrations'), autoApply: true },
  plugins: { paths: [join(here, 'plugin.cjs')] },
  watch: false,
});
await app.start();

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
