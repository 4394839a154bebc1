// What a careful hand-written PRODUCT service would share between its handlers: the table layout
// (the same as the generated service's SQLite layout, runtime/src/sqlite/schema.ts), a row codec,
// and a request validator. Used by the Koa baseline and by the raw node:http floor alike, so the
// only difference between those two is the HTTP layer.
import { Buffer } from 'node:buffer';

/** PRODUCT fields in declared order (fixtures/shop/shop.yaml) with their column kind. */
export const COLUMNS = [
  ['code', 'text'],
  ['name', 'text'],
  ['category', 'text'],
  ['price', 'decimal'],
  ['stock', 'integer'],
  ['weightKg', 'double'],
  ['available', 'boolean'],
  ['releaseDate', 'date'],
  ['lastRestock', 'datetime'],
  ['status', 'text'],
  ['size', 'text'],
  ['dimensions', 'json'],
  ['tags', 'json'],
  ['ratings', 'json'],
  ['variants', 'json'],
  ['sizeChart', 'json'],
  ['prices', 'json'],
  ['image', 'text'],
  ['attributes', 'json'],
  ['warehouse', 'json'],
];
const NAMES = COLUMNS.map(([name]) => name);
const KINDS = COLUMNS.map(([, kind]) => kind);
const FIELD_SET = new Set(NAMES);
const SQL_TYPES = {
  text: 'TEXT',
  integer: 'INTEGER',
  double: 'REAL',
  decimal: 'TEXT',
  boolean: 'INTEGER',
  date: 'TEXT',
  datetime: 'TEXT',
  json: 'TEXT',
};
const REQUIRED = new Set(['code', 'name', 'price']);
const q = (name) => `"${name}"`;

/** DDL identical to what the generated service creates (CREATE ... IF NOT EXISTS: no-op on a seeded copy). */
export const SQLITE_DDL = [
  `CREATE TABLE IF NOT EXISTS "_eg_activity" (\n  entity TEXT NOT NULL PRIMARY KEY,\n  last_create_ms INTEGER,\n  last_update_ms INTEGER,\n  last_delete_ms INTEGER\n) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS "product" (\n  ${[
    ...COLUMNS.map(
      ([name, kind]) => `${q(name)} ${SQL_TYPES[kind]}${REQUIRED.has(name) ? ' NOT NULL' : ''}`,
    ),
    `"_eg_dec_price" TEXT NOT NULL`,
    `"_eg_created_ms" INTEGER NOT NULL`,
    `"_eg_updated_ms" INTEGER NOT NULL`,
    `"_eg_version" INTEGER NOT NULL`,
    `PRIMARY KEY ("code")`,
  ].join(',\n  ')}\n) WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS "product__name__idx" ON "product" ("name")`,
  `CREATE INDEX IF NOT EXISTS "product__category__idx" ON "product" ("category")`,
  `CREATE INDEX IF NOT EXISTS "product__price__idx" ON "product" ("_eg_dec_price")`,
  // The shop fixture's indexes: [[category, -price]], as the generated service creates it.
  `CREATE INDEX IF NOT EXISTS "product__category__price_desc__idx" ON "product" ("category", "_eg_dec_price" DESC, "code" DESC)`,
];

export const SELECT_LIST = [...NAMES, '_eg_version', '_eg_created_ms', '_eg_updated_ms']
  .map((c) => `"product".${q(c)}`)
  .join(', ');
const WRITE_COLUMNS = [...NAMES, '_eg_dec_price'];

/** The statements of the SQLite baselines (same SQL work per request as the generated service). */
export const SQLITE_SQL = {
  get: `SELECT ${SELECT_LIST} FROM "product" WHERE "code" = ?`,
  insert: `INSERT INTO "product" (${[...WRITE_COLUMNS, '_eg_created_ms', '_eg_updated_ms', '_eg_version'].map(q).join(', ')}) VALUES (${WRITE_COLUMNS.map(() => '?').join(', ')}, ?, ?, 1)`,
  update: `UPDATE "product" SET ${WRITE_COLUMNS.map((c) => `${q(c)} = ?`).join(', ')}, "_eg_updated_ms" = ?, "_eg_version" = "_eg_version" + 1 WHERE "code" = ? AND "_eg_version" = ?`,
  touch: (column) =>
    `INSERT INTO "_eg_activity" (entity, ${column}) VALUES ('PRODUCT', ?) ON CONFLICT (entity) DO UPDATE SET ${column} = max(coalesce(${column}, excluded.${column}), excluded.${column})`,
  // The page query: same order as the generated service (the sort term, then the key in the
  // direction of the last term), read through the same price shadow column.
  page: `SELECT ${SELECT_LIST} FROM "product" WHERE "product"."category" = ? ORDER BY "product"."_eg_dec_price" DESC, "product"."code" DESC LIMIT ?`,
  count: `SELECT count(*) FROM "product" WHERE "product"."category" = ?`,
};

/** Opens better-sqlite3 with the generated service's settings (WAL, synchronous, busy timeout). */
export function openSqlite(Database, file) {
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  const sync = (process.env.SQLITE_SYNCHRONOUS || 'FULL').toUpperCase();
  db.pragma(`synchronous = ${sync === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
  for (const statement of SQLITE_DDL) db.exec(statement);
  return db;
}

/** Row (fields in declared order, then version, created, updated) → record, NULLs left out. */
export function decodeRow(row) {
  const record = {};
  for (let i = 0; i < NAMES.length; i++) {
    const value = row[i];
    if (value === null) continue;
    const kind = KINDS[i];
    record[NAMES[i]] =
      kind === 'json' ? JSON.parse(value) : kind === 'boolean' ? value !== 0 : value;
  }
  return record;
}
export const VERSION_INDEX = NAMES.length;
export const UPDATED_INDEX = NAMES.length + 2;

/** Parameters of the write columns of a valid record (fields, then the price shadow key). */
export function writeParams(record) {
  const params = new Array(WRITE_COLUMNS.length);
  for (let i = 0; i < NAMES.length; i++) {
    const value = record[NAMES[i]];
    const kind = KINDS[i];
    params[i] =
      value === undefined
        ? null
        : kind === 'json'
          ? JSON.stringify(value)
          : kind === 'boolean'
            ? value
              ? 1
              : 0
            : value;
  }
  params[NAMES.length] = decimalSortKey(record.price);
  return params;
}

/** The `{"status":"success",...}` envelope with record meta, as the generated service sends it. */
export function recordEnvelope(record, ms) {
  return {
    status: 'success',
    data: record,
    meta: { lastUpdateTimeUnix: ms, lastUpdateTimeISO: new Date(ms).toISOString() },
  };
}
export function errorEnvelope(reason, issues) {
  return { status: 'error', error: issues === undefined ? { reason } : { reason, issues } };
}

export class HttpError extends Error {
  constructor(status, reason, issues) {
    super(reason);
    this.status = status;
    this.issues = issues;
  }
}

// --- Validation --------------------------------------------------------------------------------
// A hand-written validator of the kind one writes with typeof checks: every field's JSON type,
// required fields, enum values, date shapes, decimal syntax, nested object shapes, unknown fields.
// Unlike the generated converters it does not coerce strings to numbers/booleans, does not check
// calendar validity of dates or compute geohashes, and does not canonicalize decimals and
// date-times (valid input is stored as sent).

const DECIMAL = /^-?\d+(\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const STATUS = new Set(['DRAFT', 'ACTIVE', 'RETIRED']);
const SIZE = new Set(['S', 'M', 'L']);
const UNIT = new Set(['cm', 'in']);
const B64 = /^data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/i;

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v) => typeof v === 'string';
const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isInteger = (v) => Number.isSafeInteger(v);
const isDecimal = (v) => (typeof v === 'string' && DECIMAL.test(v)) || isNumber(v);

function check(ok, field, issues, message) {
  if (!ok)
    issues.push({
      path: [field],
      code: 'conversion_failed',
      message: `Invalid value for field ${field}: ${message}`,
    });
}

/** Validates a PRODUCT (or the fields of a patch when `partial`); returns the issues found. */
export function validateProduct(body, partial = false) {
  const issues = [];
  if (!isObject(body))
    return [
      {
        path: [],
        code: 'conversion_failed',
        message: 'EntityRecord of PRODUCT must be a JSON object',
      },
    ];
  for (const name of Object.keys(body)) {
    if (!FIELD_SET.has(name))
      issues.push({ path: [name], code: 'unknown_field', message: `Field ${name} is not defined` });
  }
  for (const name of REQUIRED) {
    const v = body[name];
    if (!partial && (v === undefined || v === null || v === ''))
      issues.push({ path: [name], code: 'required', message: `Field ${name} is required` });
  }
  const {
    code,
    name,
    category,
    price,
    stock,
    weightKg,
    available,
    releaseDate,
    lastRestock,
    status,
    size,
  } = body;
  if (code != null) check(isString(code), 'code', issues, 'expected a string');
  if (name != null) check(isString(name), 'name', issues, 'expected a string');
  if (category != null) check(isString(category), 'category', issues, 'expected a string');
  if (price != null) check(isDecimal(price), 'price', issues, 'expected a decimal');
  if (stock != null) check(isInteger(stock), 'stock', issues, 'expected an integer');
  if (weightKg != null) check(isNumber(weightKg), 'weightKg', issues, 'expected a number');
  if (available != null)
    check(typeof available === 'boolean', 'available', issues, 'expected a boolean');
  if (releaseDate != null)
    check(
      isString(releaseDate) && DATE.test(releaseDate),
      'releaseDate',
      issues,
      'expected YYYY-MM-DD',
    );
  if (lastRestock != null)
    check(
      isString(lastRestock) && DATE_TIME.test(lastRestock),
      'lastRestock',
      issues,
      'expected an ISO date-time',
    );
  if (status != null)
    check(STATUS.has(status), 'status', issues, 'expected DRAFT, ACTIVE or RETIRED');
  if (size != null) check(SIZE.has(size), 'size', issues, 'expected S, M or L');
  const { dimensions, tags, ratings, variants, sizeChart, prices, image, warehouse } = body;
  if (dimensions != null) {
    check(
      isObject(dimensions) &&
        isNumber(dimensions.width) &&
        isNumber(dimensions.height) &&
        (dimensions.unit == null || UNIT.has(dimensions.unit)),
      'dimensions',
      issues,
      'expected {width, height, unit}',
    );
  }
  if (tags != null)
    check(
      Array.isArray(tags) && tags.every(isString),
      'tags',
      issues,
      'expected a list of strings',
    );
  if (ratings != null)
    check(
      Array.isArray(ratings) && ratings.every(isInteger),
      'ratings',
      issues,
      'expected a list of integers',
    );
  if (variants != null) {
    check(
      Array.isArray(variants) &&
        variants.every(
          (v) =>
            isObject(v) &&
            isString(v.sku) &&
            v.sku !== '' &&
            (v.color == null || isString(v.color)) &&
            (v.extraPrice == null || isDecimal(v.extraPrice)),
        ),
      'variants',
      issues,
      'expected a list of {sku, color, extraPrice}',
    );
  }
  if (sizeChart != null)
    check(
      Array.isArray(sizeChart) &&
        sizeChart.every((row) => Array.isArray(row) && row.every(isNumber)),
      'sizeChart',
      issues,
      'expected a list of lists of numbers',
    );
  if (prices != null) {
    check(
      isObject(prices) &&
        Object.values(prices).every(
          (p) =>
            isObject(p) &&
            isDecimal(p.amount) &&
            (p.validFrom == null || (isString(p.validFrom) && DATE.test(p.validFrom))),
        ),
      'prices',
      issues,
      'expected {currency: {amount, validFrom}}',
    );
  }
  if (image != null)
    check(
      isString(image) && B64.test(image),
      'image',
      issues,
      'expected a data:image/...;base64 URL',
    );
  if (warehouse != null)
    check(
      isObject(warehouse) && isNumber(warehouse.lat) && isNumber(warehouse.lng),
      'warehouse',
      issues,
      'expected {lat, lng}',
    );
  return issues;
}

/** The validated record, fields in declared order (as the generated service returns it). */
export function toRecord(body) {
  const record = {};
  for (const name of NAMES) {
    const value = body[name];
    if (value !== undefined && value !== null)
      record[name] = typeof value === 'number' && name === 'price' ? String(value) : value;
  }
  return record;
}

/** Reads `{"data": ...}` and returns the payload; throws HttpError 400 otherwise. */
export function dataOf(body) {
  if (!isObject(body) || body.data === undefined)
    throw new HttpError(400, 'Request body must be a JSON object of the form {"data": ...}');
  return body.data;
}

// --- The sortable key of a DECIMAL (same encoding as runtime/src/sqlite/decimal-key.ts) -----------
const DECIMAL_PARTS = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
export function decimalSortKey(value) {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = DECIMAL_PARTS.exec(text);
  if (match === null) throw new TypeError(`not a decimal: ${text}`);
  const [, sign, integerPart = '', fractionPart = '', exponentPart] = match;
  const digits = integerPart + fractionPart;
  const first = digits.search(/[1-9]/);
  if (first < 0) return '1';
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === 48) last--;
  const mantissa = digits.slice(first, last + 1);
  const exponent =
    integerPart.length - first + (exponentPart === undefined ? 0 : Number(exponentPart));
  if (sign !== '-') return `2${String(exponent + 50_000).padStart(5, '0')}${mantissa}`;
  let complement = '';
  for (let i = 0; i < mantissa.length; i++)
    complement += String.fromCharCode(105 - mantissa.charCodeAt(i));
  return `0${String(50_000 - exponent).padStart(5, '0')}${complement}~`;
}

/** Reads a request body as text with a byte limit (413), rejecting non-JSON content types (415). */
export function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('application/json')) {
      req.resume();
      reject(new HttpError(415, 'Request body must be JSON'));
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      req.resume();
      reject(new HttpError(413, `Request body is larger than the limit of ${limit} bytes`));
      return;
    }
    const chunks = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new HttpError(413, `Request body is larger than the limit of ${limit} bytes`));
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, 'Request body is not valid JSON'));
      }
    });
    req.on('error', (error) =>
      reject(new HttpError(400, `Request body could not be read: ${error.message}`)),
    );
  });
}

export const BODY_LIMIT = 10 * 1024 * 1024;
