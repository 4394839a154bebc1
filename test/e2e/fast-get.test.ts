/**
 * The fast path of GET by key (`suites/fast-get.ts`) on SQLite in memory, and what only a service
 * with hooks shows: a custom route on a record's path and an entity's middleware go first.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { fixtureNamed, generateFixtureInto } from '../helpers/generate.js';
import { serve, type TestServer } from '../helpers/http.js';
import { loadGenerated } from '../helpers/service.js';
import { productInput } from './suites/crud.js';
import { describeFastGetSuite } from './suites/fast-get.js';

describeFastGetSuite('sqlite', () => undefined, { synchronousReads: true });

describe('custom routes and entity middleware', () => {
  const CATEGORY_HOOKS = `import type { EntityHooks } from '@entity-gen/runtime';
import type { Category } from '../entities/category/types.js';

export const categoryHooks: EntityHooks<Category> = {
  routes(router) {
    router.get('/data/category/special', (ctx) => {
      ctx.body = { status: 'success', data: { custom: true } };
    });
  },
};
`;
  const PRODUCT_HOOKS = `import type { EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';

export const productHooks: EntityHooks<Product> = {
  middleware: [
    async (ctx, next) => {
      await next();
      ctx.set('X-Seen-By', 'middleware');
    },
  ],
};
`;
  let server: TestServer;
  let driver: SqliteDriver;
  let koaRequests: () => number;
  beforeAll(async () => {
    const dir = await generateFixtureInto(fixtureNamed('shop'), 'e2e-fast-get-custom');
    await writeFile(join(dir, 'src/hooks/category.ts'), CATEGORY_HOOKS);
    await writeFile(join(dir, 'src/hooks/product.ts'), PRODUCT_HOOKS);
    const { createApp, tables } = await loadGenerated(dir);
    driver = new SqliteDriver({ filename: ':memory:' });
    await driver.open(tables);
    const app = createApp({ driver, logger: createLogger({ level: 'silent' }) });
    const handled = vi.spyOn(app as unknown as { handleRequest: () => unknown }, 'handleRequest');
    koaRequests = () => handled.mock.calls.length;
    server = await serve(app.callback());
    for (const name of ['special', 'tools'])
      await server.request('POST', '/data/category', { body: { data: { name } } });
    await server.request('POST', '/data/product', { body: { data: productInput('p1') } });
  });
  afterAll(async () => {
    await server?.close();
    await driver?.close();
  });

  it('a custom route on the path of a record answers instead of the record', async () => {
    const before = koaRequests();
    const special = await server.request('GET', '/data/category/special');
    expect(special.body).toEqual({ status: 'success', data: { custom: true } });
    expect(koaRequests()).toBe(before + 1);
    // The records no custom route matches still come from the fast path.
    const tools = await server.request('GET', '/data/category/tools');
    // CATEGORY records carry the times the server sets (SPEC §16).
    expect(tools.body.data).toEqual({
      name: 'tools',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(koaRequests()).toBe(before + 1);
  });

  it('the middleware of an entity runs in front of its GET by key', async () => {
    const before = koaRequests();
    const response = await server.request('GET', '/data/product/p1');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-seen-by')).toBe('middleware');
    expect(koaRequests()).toBe(before + 1);
  });
});
