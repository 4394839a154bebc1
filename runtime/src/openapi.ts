/**
 * The service's description of itself (SPEC §7): `GET /openapi.json` answers the OpenAPI document
 * that `entity-gen generate` wrote next to the service (`openapi.json`), with `servers` set to
 * where the service was reached and without the entities the caller may not list; `GET /docs`
 * is an interactive reference of it, Swagger UI from the service's own dependencies (no CDN).
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { HttpError } from './errors.js';
import type { RequestState } from './http/errors.js';

/** An OpenAPI document as JSON. */
export type OpenApiDocument = { readonly [key: string]: unknown };

/**
 * Reads the document a generated service carries (`new URL('../openapi.json', import.meta.url)`
 * in its `service.ts`); `undefined` when the file is missing (a service generated before entity-gen
 * wrote one), and then `/openapi.json` and `/docs` answer 404.
 */
export function readOpenApiDocument(url: URL): OpenApiDocument | undefined {
  const path = fileURLToPath(url);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The document as one caller sees it: without the paths, schemas, responses, parameters and tags
 * of the entities it may not list (each says its entity in `x-entity`), and with `servers`
 * naming `origin`.
 */
export function documentFor(
  document: OpenApiDocument,
  visible: (entity: string) => boolean,
  origin: string,
): OpenApiDocument {
  const shown = (item: unknown): boolean =>
    !isObject(item) || typeof item['x-entity'] !== 'string' || visible(item['x-entity']);
  const keep = (object: unknown): JsonObject =>
    Object.fromEntries(
      Object.entries(isObject(object) ? object : {}).filter(([, item]) => shown(item)),
    );
  const components = isObject(document['components']) ? document['components'] : {};
  const tags = Array.isArray(document['tags']) ? document['tags'] : [];
  const schemas = keep(components['schemas']);
  // A shown schema may embed a record of a hidden entity (`<Type>Expanded`, SPEC §11): its
  // reference becomes an opaque object instead of pointing at nothing.
  const removed =
    Object.keys(isObject(components['schemas']) ? components['schemas'] : {}).length !==
    Object.keys(schemas).length;
  const hidden = (ref: string): boolean =>
    ref.startsWith(SCHEMA_PREFIX) && !Object.hasOwn(schemas, ref.slice(SCHEMA_PREFIX.length));
  const shownDocument: OpenApiDocument = {
    ...document,
    servers: [{ url: origin }],
    tags: tags.filter(
      (tag) =>
        !isObject(tag) ||
        typeof tag['name'] !== 'string' ||
        !isEntityTag(document, tag['name']) ||
        visible(tag['name']),
    ),
    paths: keep(document['paths']),
    components: {
      ...components,
      schemas,
      responses: keep(components['responses']),
      parameters: keep(components['parameters']),
    },
  };
  return removed ? (withoutRefs(shownDocument, hidden) as OpenApiDocument) : shownDocument;
}

const SCHEMA_PREFIX = '#/components/schemas/';

/** `value` with every `$ref` that `hidden` names replaced by an opaque object schema. */
function withoutRefs(value: unknown, hidden: (ref: string) => boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutRefs(item, hidden));
  if (!isObject(value)) return value;
  const ref = value['$ref'];
  if (typeof ref === 'string' && hidden(ref)) {
    return { type: 'object', description: 'A record of an entity the caller may not read.' };
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, withoutRefs(item, hidden)]),
  );
}

/** Whether a tag names an entity (the others, like `service`, are always shown). */
function isEntityTag(document: OpenApiDocument, name: string): boolean {
  const paths = isObject(document['paths']) ? document['paths'] : {};
  return Object.values(paths).some((item) => isObject(item) && item['x-entity'] === name);
}

/** The folder of the Swagger UI package the page is served from. */
function swaggerUiFolder(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** The files of `/docs/…`: Swagger UI's, and the page's own start script. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>API reference</title>
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" />
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/start.js"></script>
  </body>
</html>
`;

/** Starts Swagger UI on the service's own document; no validator badge (it calls out). */
const START = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: true,
});
`;

/** Only the service's own origin: the page makes no request anywhere else. */
const PAGE_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/**
 * Adds `GET /openapi.json` and `GET /docs` (with its files) to `router`. `visible` tells whether
 * the caller may list an entity.
 */
export function addOpenApiRoutes(
  router: Router<RequestState>,
  document: OpenApiDocument | undefined,
  visible: (ctx: Context, entity: string) => boolean,
): void {
  const missing = (): never => {
    throw new HttpError(
      404,
      'This service has no OpenAPI document (openapi.json); regenerate it with entity-gen',
    );
  };
  router.get('/openapi.json', (ctx) => {
    if (document === undefined) missing();
    // Where the caller reached the service (behind a trusted proxy: the host it asked for).
    const origin = `${ctx.protocol}://${ctx.host}`;
    ctx.body = documentFor(document!, (entity) => visible(ctx, entity), origin);
  });
  router.get(['/docs', '/docs/'], (ctx) => {
    if (document === undefined) missing();
    ctx.set('Content-Security-Policy', PAGE_POLICY);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/start.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = START;
  });
  router.get('/docs/:file', async (ctx) => {
    const file = ctx.params['file'] ?? '';
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (type === undefined) throw new HttpError(404, `No route for GET ${ctx.path}`);
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await readFile(join(swaggerUiFolder(), file));
  });
}
