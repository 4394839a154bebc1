/**
 * The OpenAPI document of every fixture is a valid OpenAPI 3.1 document; the service serves it at
 * `/openapi.json` exactly as written apart from `servers`, leaving out what the caller may not
 * list; `/docs` serves the reference page and its files from the service's own dependencies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, OUTPUT } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { suiteAuthenticator, token } from '../e2e/suites/access.js';

function written(folder: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(OUTPUT, folder, 'openapi.json'), 'utf8')) as Record<
    string,
    unknown
  >;
}

describe.each(FIXTURES)('the OpenAPI document of fixture $name', (fixture) => {
  const folder = `openapi-${fixture.name}`;
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture(fixture.name, {
      folder,
      ...(fixture.access === undefined ? {} : { auth: suiteAuthenticator() }),
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(written(folder));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is served at /openapi.json as written, with servers naming the service', async () => {
    const headers =
      fixture.access === undefined
        ? undefined
        : { Authorization: `Bearer ${await token('root', ['admin'])}` };
    const response = await service.request('GET', '/openapi.json', headers ? { headers } : {});
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...written(folder), servers: [{ url: service.url }] });
  });

  it('describes X-Read-After: a header of every write answer, a parameter of every read', () => {
    const document = written(folder) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { $ref?: string }[];
            responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
          }
        >
      >;
      components: { responses: Record<string, { headers?: Record<string, unknown> }> };
    };
    const readAfter = { $ref: '#/components/parameters/ReadAfter' };
    let reads = 0;
    let writes = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      if (!path.startsWith('/data/') && !path.startsWith('/entity/') && path !== '/batch') continue;
      if (path.startsWith('/entity/') && !path.endsWith('/recordCounts')) continue;
      for (const [method, operation] of Object.entries(item)) {
        const what = `${method.toUpperCase()} ${path}`;
        if (method === 'get') {
          expect(operation.parameters, what).toContainEqual(readAfter);
          reads++;
        } else if (['post', 'put', 'patch', 'delete'].includes(method)) {
          const ok = operation.responses['200']!;
          const headers =
            ok.$ref === undefined
              ? ok.headers
              : document.components.responses[ok.$ref.split('/').at(-1)!]!.headers;
          expect(Object.keys(headers ?? {}), what).toContain('X-Read-After');
          writes++;
        }
      }
    }
    expect(reads).toBeGreaterThan(0);
    if (fixture.name !== 'rest-edges') expect(writes).toBeGreaterThan(0);
  });
});

describe('the OpenAPI document under access rules', () => {
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture('access', {
      folder: 'openapi-access-rules',
      auth: suiteAuthenticator(),
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  /** The entities a caller sees in the served document. */
  async function visible(headers?: Record<string, string>): Promise<unknown> {
    const response = await service.request('GET', '/openapi.json', headers ? { headers } : {});
    expect(response.status).toBe(200);
    const paths = Object.values(response.body.paths as Record<string, Record<string, unknown>>);
    const schemas = Object.values(
      response.body.components.schemas as Record<string, Record<string, unknown>>,
    );
    const entities = (items: Record<string, unknown>[]): string[] =>
      [...new Set(items.map((item) => item['x-entity']).filter((name) => name !== undefined))]
        .map(String)
        .sort();
    return { paths: entities(paths), schemas: entities(schemas) };
  }

  it('leaves out the entities the caller may not list', async () => {
    // Anonymous: PRODUCT, NOTE and SETTINGS are listed publicly.
    expect(await visible()).toEqual({
      paths: ['NOTE', 'PRODUCT', 'SETTINGS'],
      schemas: ['NOTE', 'PRODUCT', 'SETTINGS'],
    });
    const editor = { Authorization: `Bearer ${await token('ann', ['editor'])}` };
    expect(await visible(editor)).toEqual({
      paths: ['NOTE', 'ORDER', 'PRODUCT', 'SETTINGS', 'WISHLIST'],
      schemas: ['NOTE', 'ORDER', 'PRODUCT', 'SETTINGS', 'WISHLIST'],
    });
    const admin = { Authorization: `Bearer ${await token('root', ['admin'])}` };
    expect(await visible(admin)).toEqual({
      paths: ['AUDIT', 'CUSTOMER', 'NOTE', 'ORDER', 'PRODUCT', 'SETTINGS', 'WISHLIST'],
      schemas: ['AUDIT', 'CUSTOMER', 'NOTE', 'ORDER', 'PRODUCT', 'SETTINGS', 'WISHLIST'],
    });
  });

  it('describes the security of each operation with the roles as scopes', async () => {
    const document = written('openapi-access-rules') as {
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(Object.keys(document.components.securitySchemes)).toEqual(['bearer', 'apiKey']);
    const products = document.paths['/data/product']!;
    expect(products['get']?.security).toEqual([{}, { bearer: [] }, { apiKey: [] }]);
    expect(products['post']?.security).toEqual([
      { bearer: ['editor', 'admin'] },
      { apiKey: ['editor', 'admin'] },
    ]);
    expect(document.paths['/data/order']!['get']?.security).toEqual([
      { bearer: [] },
      { apiKey: [] },
    ]);
  });
});

describe('the reference page', () => {
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture('shop', { folder: 'openapi-docs-page' });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('is an HTML page that loads only files of the service', async () => {
    const response = await service.request('GET', '/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    const sources = [...response.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source).toMatch(/^\/docs\//);
      const file = await service.request('GET', source!);
      expect(file.status, source).toBe(200);
      expect(file.text.length, source).toBeGreaterThan(0);
    }
  });

  it('answers 404 for a file it does not have', async () => {
    expect((await service.request('GET', '/docs/../package.json')).status).toBe(404);
    expect((await service.request('GET', '/docs/index.html')).status).toBe(404);
  });
});
