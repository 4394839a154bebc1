/**
 * CORS for browsers on other origins (`CORS_ORIGINS`): the listed origins get the
 * `Access-Control-*` headers and their preflight requests are answered; every other origin gets
 * none, so browsers keep it out. Credentials travel in headers (Authorization, X-API-Key), never
 * in cookies, so `Access-Control-Allow-Credentials` is not sent.
 */
import type { Middleware } from 'koa';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS =
  'Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-API-Key, X-Read-After, X-Request-Id';
/** The headers a browser script may read on an allowed origin's (non-preflight) answer. */
export const EXPOSED_HEADERS = 'ETag, X-Request-Id, Allow, X-Read-After';
/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600';

/** Which origins may call the service: exact origins (`https://app.example.com`), or `*` for any. */
export class CorsPolicy {
  private readonly any: boolean;
  private readonly allowed: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.allowed = new Set(origins.map((origin) => origin.replace(/\/+$/, '')));
  }

  /** The `Access-Control-Allow-Origin` of a request from `origin`; `undefined` for none. */
  allowOrigin(origin: string): string | undefined {
    if (origin === '' || (!this.any && !this.allowed.has(origin))) return undefined;
    return this.any ? '*' : origin;
  }
}

/** `origins`: exact origins (`https://app.example.com`), or `*` for any. */
export function corsMiddleware(origins: readonly string[]): Middleware {
  const policy = new CorsPolicy(origins);
  return async (ctx, next) => {
    ctx.vary('Origin');
    const allowOrigin = policy.allowOrigin(ctx.get('Origin'));
    if (allowOrigin === undefined) return next();
    ctx.set('Access-Control-Allow-Origin', allowOrigin);
    const preflight = ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method') !== '';
    if (!preflight) {
      ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return next();
    }
    ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
    ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
    ctx.status = 204;
  };
}

/** `CORS_ORIGINS`: a comma-separated list of origins, or `*`; unset means none. */
export function parseCorsOrigins(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const origins = value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new Error(
        `CORS_ORIGINS holds ${JSON.stringify(origin)}, which is not an origin like https://app.example.com`,
      );
    }
    if (url.origin !== origin.replace(/\/+$/, ''))
      throw new Error(
        `CORS_ORIGINS holds ${JSON.stringify(origin)}; give the origin only (scheme, host and port), e.g. ${url.origin}`,
      );
  }
  return origins;
}
