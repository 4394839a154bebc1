/**
 * `POST /batch` (SPEC §12): up to 1 000 data operations, across entities, in one transaction.
 *
 * Each operation is served as the request it describes would be on its own: it passes through
 * the same entity router — access rules, REST configuration, the entity's hook middleware, the
 * route's validation, hooks and conditional headers (`ifMatch`) — as a sub-request that shares
 * the batch's caller, inside the transaction of the batch (transaction.ts). The first operation
 * that fails rolls every one back; the answer then has that operation's status, its reason
 * prefixed with `Operation <i> (<METHOD> <path>): ` and `error.operation` = i.
 *
 * Decisions where the spec leaves room:
 * - An operation is `{method, path, body?, ifMatch?}`; `method` is GET, POST, PUT, PATCH or DELETE
 *   (any case), `path` a path under `/data/` with its query string (filters, `onConflict`,
 *   `maxAffected`, `expand`). Reads see the writes of the operations before them.
 * - Each result is `{status, data}`, with the operation's `meta` and `etag` when it has them.
 * - The batch's body has the service's body limit (BODY_LIMIT_BYTES), as a list insert.
 * - An empty list of operations is answered with `data: []`.
 * - The hooks' after-hooks run when their operation is done, inside the transaction; the
 *   `afterCommit` hooks and the change events follow the commit, with consecutive seqs.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type Koa from 'koa';
import type { Context, Middleware } from 'koa';
import type { DataContext } from './data-context.js';
import { successBody } from './envelope.js';
import { BadRequestError, HttpError, isHttpError, quoteInput } from './errors.js';
import { readJsonBody } from './http/body.js';
import type { RequestState } from './http/errors.js';
import { DATA_PREFIX } from './http/paths.js';
import { atomically } from './transaction.js';

/** The most operations one batch may hold. */
export const MAX_BATCH_OPERATIONS = 1000;

const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const OPERATION_PROPERTIES: ReadonlySet<string> = new Set(['method', 'path', 'body', 'ifMatch']);

/** One operation of a batch, as checked. */
interface Operation {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly ifMatch: string | undefined;
}

/** One operation's result in the answer. */
interface OperationResult {
  readonly status: number;
  readonly data: unknown;
  readonly meta?: unknown;
  readonly etag?: string;
}

/**
 * The handler of `POST /batch`: `app` makes the operations' contexts, `serveData` is the
 * middleware that serves `/data/...` requests (the entity routers).
 */
export function batchRoute(
  app: Koa<RequestState>,
  data: DataContext,
  serveData: Middleware<RequestState>,
): Middleware<RequestState> {
  return async (ctx) => {
    const operations = readOperations(await readJsonBody(ctx, data.bodyLimit, 3));
    const results = await atomically(data.driver, async () => {
      const done: OperationResult[] = [];
      for (const [index, operation] of operations.entries()) {
        try {
          done.push(await runOperation(app, ctx, serveData, operation));
        } catch (error) {
          throw failed(index, operation, error);
        }
      }
      return done;
    });
    ctx.body = successBody(results);
  };
}

/** Serves one operation as a sub-request of the batch's caller. */
async function runOperation(
  app: Koa<RequestState>,
  batch: Context,
  serveData: Middleware<RequestState>,
  operation: Operation,
): Promise<OperationResult> {
  const req = new IncomingMessage(new Socket());
  req.method = operation.method;
  req.url = operation.path;
  req.headers = {
    'content-type': 'application/json',
    ...(operation.ifMatch === undefined ? {} : { 'if-match': operation.ifMatch }),
  };
  const sub = app.createContext(req, new ServerResponse(req));
  const state = batch.state as RequestState;
  sub.state.requestId = state.requestId;
  if (state.principal !== undefined) sub.state.principal = state.principal;
  sub.state.operationBody = { value: operation.body };
  await serveData(sub as Context & { state: RequestState }, () => {
    throw new HttpError(404, `No route for ${operation.method} ${quoteInput(operation.path)}`);
  });
  const body = typeof sub.body === 'string' ? (JSON.parse(sub.body) as unknown) : sub.body;
  const { data, meta } = (body ?? {}) as { data?: unknown; meta?: unknown };
  const etag = sub.response.get('ETag');
  return {
    status: sub.status,
    data: data ?? null,
    ...(meta === undefined ? {} : { meta }),
    ...(etag === '' ? {} : { etag }),
  };
}

/** The batch's answer when operation `index` failed: its status and reason, named. */
function failed(index: number, operation: Operation, error: unknown): HttpError {
  const name = `Operation ${index} (${operation.method} ${quoteInput(operation.path)})`;
  if (isHttpError(error) && error.expose) {
    return new HttpError(error.status, `${name}: ${error.reason}`, {
      ...(error.issues === undefined ? {} : { issues: error.issues }),
      headers: { ...error.headers },
      operation: index,
      cause: error,
    });
  }
  // An internal error is logged with its cause; the client learns only which operation failed.
  const status = isHttpError(error) ? error.status : 500;
  return new HttpError(status, `${name}: Internal server error`, {
    operation: index,
    cause: error,
    expose: true,
  });
}

/** Checks the body of a batch: `{"operations": [{method, path, body?, ifMatch?}, …]}`. */
function readOperations(body: unknown): Operation[] {
  if (!isPlainObject(body) || !Array.isArray(body.operations))
    throw new BadRequestError(
      'Request body must be a JSON object of the form {"operations": [{"method": …, "path": …, "body": …}, …]}',
    );
  for (const name of Object.keys(body)) {
    if (name !== 'operations')
      throw new BadRequestError(
        `Unknown property "${quoteInput(name)}" in request body; only "operations" is allowed`,
      );
  }
  const list: unknown[] = body.operations;
  if (list.length > MAX_BATCH_OPERATIONS) {
    throw new BadRequestError(
      `A batch holds at most ${MAX_BATCH_OPERATIONS} operations, not ${list.length}`,
    );
  }
  return list.map((item, index) => readOperation(item, index));
}

function readOperation(item: unknown, index: number): Operation {
  const where = `Operation ${index}`;
  if (!isPlainObject(item))
    throw new BadRequestError(`${where} must be an object with method, path and body`);
  for (const name of Object.keys(item)) {
    if (!OPERATION_PROPERTIES.has(name))
      throw new BadRequestError(
        `${where} has an unknown property "${quoteInput(name)}"; allowed: method, path, body, ifMatch`,
      );
  }
  const method = typeof item.method === 'string' ? item.method.toUpperCase() : '';
  if (!METHODS.has(method))
    throw new BadRequestError(`${where} needs a method: GET, POST, PUT, PATCH or DELETE`);
  const path = item.path;
  if (typeof path !== 'string' || !path.startsWith(DATA_PREFIX))
    throw new BadRequestError(`${where} needs a path under ${DATA_PREFIX}, like /data/product/p1`);
  if (item.ifMatch !== undefined && typeof item.ifMatch !== 'string')
    throw new BadRequestError(`${where} has an ifMatch that is not a text (an ETag)`);
  if (item.body !== undefined && !isPlainObject(item.body))
    throw new BadRequestError(`${where} has a body that is not a JSON object`);
  return { method, path, body: item.body, ifMatch: item.ifMatch };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
