/**
 * The first middleware of every service: request ids, the request log line, and the rendering of
 * every error as the envelope (4xx exposed, 5xx logged and replaced by a generic reason, storage
 * outages as 503).
 */
import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import type { OwnerScope, Principal } from '../auth/access.js';
import { errorBody, type ErrorBody } from '../envelope.js';
import { allowOf, answerOptions } from './allow.js';
import {
  isHttpError,
  isQueryTimeoutError,
  isStorageUnavailableError,
  quoteInput,
} from '../errors.js';
import type { Logger } from '../logger.js';

const INTERNAL_ERROR_REASON = 'Internal server error';
const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * The headers every answer carries after `X-Request-Id`, in this order: JSON about data that
 * changes is never sniffed as another type and never stored by caches (clients revalidate with
 * ETag / If-None-Match instead). The fast path of GET by key sends the same.
 */
export const COMMON_HEADERS: readonly (readonly [string, string])[] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Cache-Control', 'no-store'],
];
/** A client-supplied request id is echoed only when it looks like an id, not arbitrary text. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** State every request carries, set by `errorMiddleware` and the access check. */
export interface RequestState {
  requestId: string;
  /** Who is calling, when the service has access rules and the request carried credentials. */
  principal?: Principal;
  /** The owner rule that restricts this request (see auth/owner.ts). */
  owner?: OwnerScope;
  /**
   * Set on PUT and PATCH under access rules: throws the 401/403 when the caller may not create
   * records (NEW). Those methods create an absent record, so they call it once it is known absent.
   */
  authorizeCreate?: () => void;
  /**
   * Set on an operation of `POST /batch` (batch.ts): its body, already parsed with the batch
   * (`value` is `undefined` when the operation has none). `readJsonBody` answers it.
   */
  operationBody?: { readonly value: unknown };
  /**
   * False when the caller may not read records by id (GET_BYID switched off, or not allowed to it
   * by the access rules): a unique clash then does not name the record that holds the value.
   */
  readsById?: boolean;
}

/**
 * What every request of a service shares, whichever path answers it (`errorMiddleware` or the
 * fast path of GET by key, fast-get.ts): the request ids and the log of storage outages.
 */
export class RequestTracker {
  // Random per service instance: the log lines of one instance share it.
  private readonly idPrefix = randomBytes(4).toString('hex');
  private readonly outage: OutageLog;

  constructor(logger: Logger) {
    this.outage = new OutageLog(logger);
  }

  /** The id of a request: the client's `X-Request-Id` when it looks like an id, else a new one. */
  requestId(given: string | undefined): string {
    return given !== undefined && given !== '' && CLIENT_REQUEST_ID.test(given)
      ? given
      : nextRequestId(this.idPrefix);
  }

  /** A request failed because the storage is unavailable (503). */
  failed(detail: string): void {
    this.outage.failed(detail);
  }

  /** A request was answered with a status below 500. */
  answered(): void {
    this.outage.answered();
  }
}

/**
 * The first middleware of a service: gives each request an id (echoed in `X-Request-Id`), renders
 * every error and every empty 404/405/501 in the JSON envelope, hides the details of 5xx errors
 * from clients and logs them with the request id.
 */
export function errorMiddleware(
  logger: Logger,
  tracker: RequestTracker = new RequestTracker(logger),
): Middleware<RequestState> {
  return async (ctx, next) => {
    const requestId = tracker.requestId(ctx.get(REQUEST_ID_HEADER));
    ctx.state.requestId = requestId;
    ctx.set(REQUEST_ID_HEADER, requestId);
    for (const [name, value] of COMMON_HEADERS) ctx.set(name, value);
    const started = logger.isLevelEnabled('debug') ? performance.now() : 0;
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null || ctx.body === '') renderEmptyStatus(ctx);
    } catch (error: unknown) {
      const answer = errorAnswer(error, logger, tracker, {
        requestId,
        method: ctx.method,
        path: ctx.path,
      });
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = answer.body;
    }
    if (ctx.status < 500) tracker.answered();
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          ip: ctx.ip,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 1000) / 1000,
        },
        'request',
      );
    }
  };
}

/** An error as every path of a service answers it (see `errorAnswer`). */
export interface ErrorAnswer {
  readonly status: number;
  /** Headers the error asks for (`Allow` of a 405, …), set after the common ones. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ErrorBody;
}

/** The request an error belongs to, as its log line names it. */
export interface ErrorRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
}

/**
 * The answer to a request that failed with `error`, logged as `errorMiddleware` logs it: an HTTP
 * error with its status (its reason when exposed, else a generic one), anything else a 500. A
 * storage outage goes to the outage log, a query over its budget is one warning line without a
 * stack trace (the client's filter meeting the budget, not a fault of the service), other 5xx
 * errors are logged with the request id. The fast path answers the errors of what it cannot hand
 * back to the pipeline (a count already run) with it, byte for byte as the pipeline would.
 */
export function errorAnswer(
  error: unknown,
  logger: Logger,
  tracker: RequestTracker,
  request: ErrorRequest,
): ErrorAnswer {
  const { requestId } = request;
  if (!isHttpError(error)) {
    logger.error({ requestId, err: error }, 'unhandled error');
    return { status: 500, headers: {}, body: errorBody(INTERNAL_ERROR_REASON) };
  }
  if (isStorageUnavailableError(error)) tracker.failed(error.message);
  else if (isQueryTimeoutError(error))
    logger.warn({ requestId, method: request.method, path: request.path }, error.message);
  else if (error.status >= 500) logger.error({ requestId, err: error }, error.message);
  return {
    status: error.status,
    headers: error.headers,
    body: errorBody(
      error.expose ? error.reason : INTERNAL_ERROR_REASON,
      error.issues,
      error.operation,
    ),
  };
}

/** How often a continuing storage outage is logged again. */
const OUTAGE_REMINDER_MS = 30_000;

/**
 * The log of a storage outage: one warning when requests start failing with 503, a reminder with
 * the count every 30 s while it lasts, one line when requests succeed again — instead of a stack
 * trace per request, which would flood the log exactly when it is needed.
 */
class OutageLog {
  private since: number | undefined;
  private lastLogged = 0;
  private failures = 0;

  constructor(private readonly logger: Logger) {}

  failed(detail: string): void {
    const now = Date.now();
    this.failures++;
    if (this.since === undefined) {
      this.since = now;
      this.lastLogged = now;
      this.logger.warn({ detail }, 'storage unavailable: answering 503 until it is back');
    } else if (now - this.lastLogged >= OUTAGE_REMINDER_MS) {
      this.lastLogged = now;
      this.logger.warn(
        { detail, failedRequests: this.failures, seconds: Math.round((now - this.since) / 1000) },
        'storage still unavailable',
      );
    }
  }

  answered(): void {
    if (this.since === undefined) return;
    const seconds = Math.round((Date.now() - this.since) / 1000);
    this.logger.warn(
      { failedRequests: this.failures, seconds },
      `storage available again after ${seconds} s`,
    );
    this.since = undefined;
    this.failures = 0;
  }
}

/** Random bytes per request id: 96 bits, so ids of one service never repeat in practice. */
const REQUEST_ID_BYTES = 12;
/** Ids drawn from one `randomBytes` call: one system call per 512 requests, not per request. */
const REQUEST_ID_POOL = 512;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

/**
 * A request id: the service's random prefix and 16 random base64url characters. Unlike a counter,
 * it reveals neither how many requests the service answered nor the next id.
 */
function nextRequestId(prefix: string): string {
  if (idPoolOffset + REQUEST_ID_BYTES > idPool.length) {
    idPool = randomBytes(REQUEST_ID_BYTES * REQUEST_ID_POOL);
    idPoolOffset = 0;
  }
  const suffix = idPool.toString('base64url', idPoolOffset, idPoolOffset + REQUEST_ID_BYTES);
  idPoolOffset += REQUEST_ID_BYTES;
  return `${prefix}-${suffix}`;
}

type EmptyContext = Parameters<Middleware<RequestState>>[0];

/** Koa and the router leave these statuses without a body; give them the envelope. */
function renderEmptyStatus(ctx: EmptyContext): void {
  switch (ctx.status) {
    case 404:
      ctx.status = 404;
      ctx.body = errorBody(`No route for ${ctx.method} ${quoteInput(ctx.path)}`);
      return;
    case 405:
      ctx.status = 405;
      ctx.body = errorBody(
        `Method ${ctx.method} is not allowed on ${quoteInput(ctx.path)}; allowed: ${allowOf(ctx).join(', ')}`,
      );
      return;
    case 501:
      ctx.status = 501;
      ctx.body = errorBody(`Method ${ctx.method} is not implemented by this service`);
      return;
    case 200:
      // The router answers OPTIONS with an empty body and the Allow header.
      if (ctx.method === 'OPTIONS') answerOptions(ctx, allowOf(ctx));
      return;
    default:
      return;
  }
}
