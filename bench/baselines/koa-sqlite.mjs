// Hand-written baseline (a): Koa + @koa/router + better-sqlite3 serving PRODUCT of the shop fixture
// with the generated service's envelope, table layout and SQLite settings.
// Env: PORT, HOST (127.0.0.1), DATABASE_FILE, SQLITE_SYNCHRONOUS (FULL).
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import {
  BODY_LIMIT,
  dataOf,
  decodeRow,
  errorEnvelope,
  HttpError,
  openSqlite,
  readBody,
  recordEnvelope,
  SQLITE_SQL,
  toRecord,
  UPDATED_INDEX,
  validateProduct,
  VERSION_INDEX,
  writeParams,
} from './common.mjs';

const db = openSqlite(Database, process.env.DATABASE_FILE ?? 'koa.db');
const get = db.prepare(SQLITE_SQL.get).raw(true);
const insert = db.prepare(SQLITE_SQL.insert);
const update = db.prepare(SQLITE_SQL.update);
const page = db.prepare(SQLITE_SQL.page).raw(true);
const count = db.prepare(SQLITE_SQL.count).pluck();
const touchCreate = db.prepare(SQLITE_SQL.touch('last_create_ms'));
const touchUpdate = db.prepare(SQLITE_SQL.touch('last_update_ms'));

const insertAll = db.transaction((records, now) => {
  for (let i = 0; i < records.length; i++) {
    try {
      insert.run(...writeParams(records[i]), now, now);
    } catch (error) {
      if (error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new HttpError(
          400,
          `Logical key ${records[i].code} for Entity PRODUCT already exists`,
          [{ path: [i], code: 'duplicate_key', message: 'exists' }],
        );
      }
      throw error;
    }
  }
  touchCreate.run(now);
});

const patchOne = db.transaction((id, changes, now) => {
  const row = get.get(id);
  if (row === undefined)
    throw new HttpError(404, `EntityRecord with id ${id} not found for PRODUCT`);
  const merged = decodeRow(row);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  const issues = validateProduct(merged);
  if (issues.length > 0)
    throw new HttpError(400, `EntityRecord of PRODUCT with id ${id} invalid`, issues);
  const record = toRecord(merged);
  const version = row[VERSION_INDEX];
  update.run(...writeParams(record), now, id, version);
  touchUpdate.run(now);
  return { record, version: version + 1 };
});

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
router.get('/health', (ctx) => {
  ctx.body = { status: 'success', data: { storage: 'ok' } };
});
router.get('/data/product/:id', (ctx) => {
  const row = get.get(ctx.params.id);
  if (row === undefined)
    throw new HttpError(404, `EntityRecord with id ${ctx.params.id} not found for PRODUCT`);
  ctx.set('ETag', `"${row[VERSION_INDEX]}"`);
  ctx.body = recordEnvelope(decodeRow(row), row[UPDATED_INDEX]);
});
router.post('/data/product', async (ctx) => {
  const payload = dataOf(await readBody(ctx.req, BODY_LIMIT));
  const now = Date.now();
  if (Array.isArray(payload)) {
    const issues = [];
    const records = [];
    const seen = new Set();
    payload.forEach((item, index) => {
      const own = validateProduct(item);
      for (const issue of own) issues.push({ ...issue, path: [index, ...issue.path] });
      if (own.length > 0) return;
      if (seen.has(item.code))
        issues.push({
          path: [index],
          code: 'duplicate_key',
          message: `Logical key ${item.code} appears twice`,
        });
      seen.add(item.code);
      records.push(toRecord(item));
    });
    if (issues.length > 0) throw new HttpError(400, 'EntityRecords are invalid', issues);
    if (records.length > 0) insertAll.immediate(records, now);
    ctx.body = { status: 'success', data: records, meta: recordEnvelope(null, now).meta };
    return;
  }
  const issues = validateProduct(payload);
  if (issues.length > 0)
    throw new HttpError(400, `EntityRecord of PRODUCT with id ${payload?.code} invalid`, issues);
  const record = toRecord(payload);
  insertAll.immediate([record], now);
  ctx.set('ETag', '"1"');
  ctx.body = recordEnvelope(record, now);
});
router.patch('/data/product/:id', async (ctx) => {
  const changes = dataOf(await readBody(ctx.req, BODY_LIMIT));
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
    throw new HttpError(400, '"data" must be an object holding the fields to change');
  }
  const now = Date.now();
  const { record, version } = patchOne.immediate(ctx.params.id, changes, now);
  ctx.set('ETag', `"${version}"`);
  ctx.body = recordEnvelope(record, now);
});
router.get('/data/product', (ctx) => {
  const { category, orderBy, limit, start } = ctx.query;
  if (typeof category !== 'string' || orderBy !== '-price' || start !== undefined) {
    throw new HttpError(400, 'This baseline serves only ?category=..&orderBy=-price&limit=..');
  }
  const n = Number(limit);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new HttpError(400, 'Parameter limit must be an integer of at least 1');
  const rows = page.all(category, n);
  ctx.body = { status: 'success', data: rows.map(decodeRow), meta: { start: 0, limit: n } };
});
router.get('/entity/product/recordCounts', (ctx) => {
  const { category } = ctx.query;
  if (typeof category !== 'string')
    throw new HttpError(400, 'This baseline counts only by ?category=..');
  ctx.body = { status: 'success', data: { count: count.get(category) } };
});
app.use(router.routes());
app.use(router.allowedMethods());

const server = app.listen(Number(process.env.PORT ?? 8081), process.env.HOST ?? '127.0.0.1');
const stop = () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
