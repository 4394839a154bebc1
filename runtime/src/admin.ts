/**
 * The admin web app (SPEC §14) as the service serves it: `GET /admin` (the page), `GET /admin/<file>`
 * (its script and style sheet, built into `dist/admin/` when the runtime package is built), and
 * `GET /me`, what the caller may do, which the app reads to offer only the allowed actions.
 * `ADMIN=off` leaves out `/admin`; `/me` stays (any client may use it).
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ACCESS_METHODS, mayCall, type AccessMethod, type Principal } from './auth/access.js';
import { successBody } from './envelope.js';
import type { Environment } from './env.js';
import { HttpError } from './errors.js';
import type { RequestState } from './http/errors.js';
import type { DataRoutes } from './routes.js';

/** What `GET /me` answers: who the caller is and what it may do per entity. */
export interface CallerRights {
  /** The caller's subject (JWT `sub`, API key name), `null` when it sent no credentials. */
  readonly subject: string | null;
  readonly roles: readonly string[];
  /** Whether the service has access rules; without them every method is public. */
  readonly accessRules: boolean;
  /**
   * Per entity the caller may list (as in `/entity`), the methods it may call: allowed by the
   * REST configuration and, with access rules, by the caller's roles.
   */
  readonly entities: Readonly<Record<string, readonly AccessMethod[]>>;
}

/** `ADMIN` of the environment: `on` (the default) or `off`. */
export function adminEnabledFromEnv(env: Environment): boolean {
  const flag = (env['ADMIN'] ?? '').trim().toLowerCase();
  if (flag !== '' && flag !== 'on' && flag !== 'off')
    throw new Error(`ADMIN must be on or off, not ${JSON.stringify(env['ADMIN'])}`);
  return flag !== 'off';
}

/** The folder of the built app: `dist/admin` of the runtime package (from `src/` or `dist/`). */
const APP_FOLDER = fileURLToPath(new URL('../dist/admin/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/**
 * Only the service's own origin, no inline script; images may be `data:` and `blob:` URLs (the
 * previews of B64_IMAGE fields).
 */
export const ADMIN_POLICY =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The rights of the caller of `ctx`. */
export function callerRights(
  entities: readonly DataRoutes[],
  principal: Principal | undefined,
): CallerRights {
  const accessRules = entities.some((routes) => routes.access !== undefined);
  const rights: Record<string, readonly AccessMethod[]> = {};
  for (const routes of entities) {
    const access = routes.access;
    if (access !== undefined && !mayCall(access.GET_LIST, principal)) continue;
    rights[routes.definition.name] = ACCESS_METHODS.filter(
      (method) =>
        routes.restConfig.allowedMethods.includes(method) &&
        (access === undefined || mayCall(access[method], principal)),
    );
  }
  return {
    subject: principal?.subject ?? null,
    roles: principal?.roles ?? [],
    accessRules,
    entities: rights,
  };
}

/**
 * Adds `GET /me` and, when `enabled`, `GET /admin` with its files to `router`. The page is never
 * cached (it names the current files); the files have content hashes in their names and are
 * cached for a year (gzip-compressed when the browser accepts it).
 */
export function addAdminRoutes(
  router: Router<RequestState>,
  entities: readonly DataRoutes[],
  enabled: boolean,
): void {
  router.get('/me', (ctx: Context) => {
    ctx.body = successBody(callerRights(entities, (ctx.state as RequestState).principal));
  });
  if (!enabled) return;
  const files = existsSync(APP_FOLDER) ? new Set(readdirSync(APP_FOLDER)) : new Set<string>();
  const missing = (): never => {
    throw new HttpError(
      404,
      'The admin app is not built in this copy of @entity-gen/runtime (npm run build in runtime/)',
    );
  };
  router.get(['/admin', '/admin/'], async (ctx) => {
    if (!files.has('index.html')) missing();
    ctx.set('Content-Security-Policy', ADMIN_POLICY);
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = await readFile(`${APP_FOLDER}index.html`);
  });
  router.get('/admin/:file', async (ctx) => {
    const file = ctx.params['file'] ?? '';
    const type = TYPES[file.slice(file.lastIndexOf('.') + 1)];
    if (!files.has(file) || type === undefined)
      throw new HttpError(404, `No route for GET ${ctx.path}`);
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.vary('Accept-Encoding');
    // The build keeps a gzip-compressed copy of each file; most browsers take it.
    if (files.has(`${file}.gz`) && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = await readFile(`${APP_FOLDER}${file}.gz`);
    } else ctx.body = await readFile(`${APP_FOLDER}${file}`);
  });
}
