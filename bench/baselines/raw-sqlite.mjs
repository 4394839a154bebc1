// Baseline (b), the floor: node:http + better-sqlite3, no framework. Same table layout, SQLite
// settings, envelope, body limit and validator as the Koa baseline; routing is a few string tests.
// Env: PORT, HOST (127.0.0.1), DATABASE_FILE, SQLITE_SYNCHRONOUS (FULL).
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { URLSearchParams } from 'node:url';
import Database from 'better-sqlite3';
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

const db = openSqlite(Database, process.env.DATABASE_FILE ?? 'raw.db');
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

function send(res, status, body, etag) {
  const text = JSON.stringify(body);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  };
  if (etag !== undefined) headers.ETag = etag;
  res.writeHead(status, headers);
  res.end(text);
}

const RECORD_PREFIX = '/data/product/';

async function handle(req, res) {
  const url = req.url;
  const question = url.indexOf('?');
  const path = question < 0 ? url : url.slice(0, question);
  const query = new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
  const method = req.method;
  if (path.startsWith(RECORD_PREFIX)) {
    const id = decodeURIComponent(path.slice(RECORD_PREFIX.length));
    if (method === 'GET') {
      const row = get.get(id);
      if (row === undefined)
        throw new HttpError(404, `EntityRecord with id ${id} not found for PRODUCT`);
      return send(
        res,
        200,
        recordEnvelope(decodeRow(row), row[UPDATED_INDEX]),
        `"${row[VERSION_INDEX]}"`,
      );
    }
    if (method === 'PATCH') {
      const changes = dataOf(await readBody(req, BODY_LIMIT));
      if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
        throw new HttpError(400, '"data" must be an object holding the fields to change');
      }
      const now = Date.now();
      const { record, version } = patchOne.immediate(id, changes, now);
      return send(res, 200, recordEnvelope(record, now), `"${version}"`);
    }
  } else if (path === '/data/product') {
    if (method === 'POST') {
      const payload = dataOf(await readBody(req, BODY_LIMIT));
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
        return send(res, 200, {
          status: 'success',
          data: records,
          meta: recordEnvelope(null, now).meta,
        });
      }
      const issues = validateProduct(payload);
      if (issues.length > 0)
        throw new HttpError(
          400,
          `EntityRecord of PRODUCT with id ${payload?.code} invalid`,
          issues,
        );
      const record = toRecord(payload);
      insertAll.immediate([record], now);
      return send(res, 200, recordEnvelope(record, now), '"1"');
    }
    if (method === 'GET') {
      const category = query.get('category');
      const n = Number(query.get('limit'));
      if (category === null || query.get('orderBy') !== '-price' || query.has('start')) {
        throw new HttpError(400, 'This baseline serves only ?category=..&orderBy=-price&limit=..');
      }
      if (!Number.isSafeInteger(n) || n < 1)
        throw new HttpError(400, 'Parameter limit must be an integer of at least 1');
      const rows = page.all(category, n);
      return send(res, 200, {
        status: 'success',
        data: rows.map(decodeRow),
        meta: { start: 0, limit: n },
      });
    }
  } else if (path === '/entity/product/recordCounts' && method === 'GET') {
    const category = query.get('category');
    if (category === null) throw new HttpError(400, 'This baseline counts only by ?category=..');
    return send(res, 200, { status: 'success', data: { count: count.get(category) } });
  } else if (path === '/health') {
    return send(res, 200, { status: 'success', data: { storage: 'ok' } });
  }
  throw new HttpError(404, `No route for ${method} ${path}`);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (error instanceof HttpError)
      send(res, error.status, errorEnvelope(error.message, error.issues));
    else {
      console.error(error);
      send(res, 500, errorEnvelope('Internal server error'));
    }
  });
});
server.listen(Number(process.env.PORT ?? 8082), process.env.HOST ?? '127.0.0.1');
const stop = () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
