// Hand-written baseline for PostgreSQL: Koa + @koa/router + pg serving GET by key and POST one of
// PRODUCT with the generated service's envelope and table layout (runtime/src/postgres/schema.ts),
// a pool of the same size (10) and named prepared statements, as the generated driver uses.
// Env: PORT, HOST (127.0.0.1), DATABASE_URL (postgres://...).
import Router from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import {
  BODY_LIMIT,
  COLUMNS,
  dataOf,
  errorEnvelope,
  HttpError,
  readBody,
  recordEnvelope,
  toRecord,
  validateProduct,
} from './common.mjs';

const PG_TYPES = {
  text: 'TEXT COLLATE "C"',
  integer: 'BIGINT',
  double: 'DOUBLE PRECISION',
  decimal: 'NUMERIC',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMPTZ',
  json: 'JSONB',
};
const REQUIRED = new Set(['code', 'name', 'price']);
const q = (name) => `"${name}"`;
const NAMES = COLUMNS.map(([name]) => name);
const SELECT = [...NAMES, '_eg_version', '_eg_created_ms', '_eg_updated_ms'].map(q).join(', ');
const DDL = [
  `CREATE TABLE IF NOT EXISTS "_eg_activity" (\n  "entity" TEXT COLLATE "C" NOT NULL PRIMARY KEY,\n  "last_create_ms" BIGINT,\n  "last_update_ms" BIGINT,\n  "last_delete_ms" BIGINT\n)`,
  `CREATE TABLE IF NOT EXISTS "product" (\n${[
    ...COLUMNS.map(
      ([name, kind]) => `  ${q(name)} ${PG_TYPES[kind]}${REQUIRED.has(name) ? ' NOT NULL' : ''}`,
    ),
    `  "_eg_created_ms" BIGINT NOT NULL`,
    `  "_eg_updated_ms" BIGINT NOT NULL`,
    `  "_eg_version" INTEGER NOT NULL`,
    `  PRIMARY KEY ("code")`,
  ].join(',\n')}\n)`,
  `CREATE INDEX IF NOT EXISTS "product__name__idx" ON "product" ("name" NULLS FIRST)`,
  `CREATE INDEX IF NOT EXISTS "product__category__idx" ON "product" ("category" NULLS FIRST)`,
  `CREATE INDEX IF NOT EXISTS "product__price__idx" ON "product" ("price" NULLS FIRST)`,
  // The shop fixture's indexes: [[category, -price]], as the generated service creates it.
  `CREATE INDEX IF NOT EXISTS "product__category__price_desc__idx" ON "product" ("category" NULLS FIRST, "price" DESC NULLS LAST, "code" DESC)`,
];
const GET = {
  name: 'bench_get',
  text: `SELECT ${SELECT} FROM "product" WHERE "code" = $1`,
  rowMode: 'array',
};
const n = NAMES.length;
const INSERT_TEXT = `WITH "r" AS (
  INSERT INTO "product" (${[...NAMES, '_eg_created_ms', '_eg_updated_ms', '_eg_version'].map(q).join(', ')})
  VALUES (${NAMES.map((_, i) => `$${i + 1}`).join(', ')}, $${n + 1}, $${n + 1}, 1) RETURNING 1
)
INSERT INTO "_eg_activity" ("entity", "last_create_ms") SELECT 'PRODUCT', $${n + 1}::BIGINT FROM "r"
  ON CONFLICT ("entity") DO UPDATE SET "last_create_ms" =
    GREATEST(COALESCE("_eg_activity"."last_create_ms", EXCLUDED."last_create_ms"), EXCLUDED."last_create_ms")`;

// Values as the service returns them: BIGINT as number, NUMERIC and DATE as text, TIMESTAMPTZ as
// an ISO string (UTC, milliseconds).
const types = {
  getTypeParser(oid, format) {
    if (oid === 20) return Number;
    if (oid === 1700 || oid === 1082) return (text) => text;
    if (oid === 1184)
      return (text) =>
        new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')).toISOString();
    return pg.types.getTypeParser(oid, format);
  },
};
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, types });
pool.on('error', () => undefined);
for (const statement of DDL) await pool.query(statement);

function decode(row) {
  const record = {};
  for (let i = 0; i < n; i++) if (row[i] !== null) record[NAMES[i]] = row[i];
  return record;
}

const app = new Koa();
app.silent = true;
app.use(async (ctx, next) => {
  try {
    await next();
    if (ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = errorEnvelope(`No route for ${ctx.method} ${ctx.path}`);
    }
  } catch (error) {
    if (error instanceof HttpError) {
      ctx.status = error.status;
      ctx.body = errorEnvelope(error.message, error.issues);
    } else {
      console.error(error);
      ctx.status = 500;
      ctx.body = errorEnvelope('Internal server error');
    }
  }
});
const router = new Router();
router.get('/health', async (ctx) => {
  await pool.query('SELECT 1');
  ctx.body = { status: 'success', data: { storage: 'ok' } };
});
router.get('/data/product/:id', async (ctx) => {
  const { rows } = await pool.query({ ...GET, values: [ctx.params.id] });
  const row = rows[0];
  if (row === undefined)
    throw new HttpError(404, `EntityRecord with id ${ctx.params.id} not found for PRODUCT`);
  ctx.set('ETag', `"${row[n]}"`);
  ctx.body = recordEnvelope(decode(row), row[n + 2]);
});
router.post('/data/product', async (ctx) => {
  const payload = dataOf(await readBody(ctx.req, BODY_LIMIT));
  const issues = validateProduct(payload);
  if (issues.length > 0)
    throw new HttpError(400, `EntityRecord of PRODUCT with id ${payload?.code} invalid`, issues);
  const record = toRecord(payload);
  const now = Date.now();
  const values = COLUMNS.map(([name, kind]) => {
    const value = record[name];
    return value === undefined ? null : kind === 'json' ? JSON.stringify(value) : value;
  });
  values.push(now);
  try {
    await pool.query({ name: 'bench_insert', text: INSERT_TEXT, values });
  } catch (error) {
    if (error.code === '23505')
      throw new HttpError(400, `Logical key ${record.code} for Entity PRODUCT already exists`);
    throw error;
  }
  ctx.set('ETag', '"1"');
  ctx.body = recordEnvelope(record, now);
});
app.use(router.routes());
app.use(router.allowedMethods());

const server = app.listen(Number(process.env.PORT ?? 8083), process.env.HOST ?? '127.0.0.1');
const stop = () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
