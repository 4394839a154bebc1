import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureNamed, generateFixtureInto, ROOT } from '../helpers/generate.js';
import { serve, type TestServer } from '../helpers/http.js';
import { loadGenerated } from '../helpers/service.js';

const exec = promisify(execFile);

/**
 * The hooks of PRODUCT used here are the worked example of docs/customizing.md: a hook that
 * rejects, one that fills fields, middleware, and custom routes. `/product-hook-calls` lets the
 * test see which hooks ran.
 */
const PRODUCT_HOOKS = `import { HttpError, type EntityHooks } from '@entity-gen/runtime';
import type { Product } from '../entities/product/types.js';

const calls: string[] = [];
const commits: string[] = [];

export const productHooks: EntityHooks<Product> = {
  beforeInsert(record, ctx) {
    calls.push(\`beforeInsert \${record.code}\`);
    if (record.status === 'RETIRED') {
      throw new HttpError(422, \`Product \${record.code} cannot be created as RETIRED\`);
    }
    if (ctx.get('x-test-break-record') === 'yes') {
      return { ...record, stock: 'many' as unknown as number };
    }
    // Fills fields: a trimmed name, and products are available unless said otherwise.
    return { ...record, name: record.name.trim(), available: record.available ?? true };
  },
  afterInsert(record) {
    calls.push(\`afterInsert \${record.code}\`);
  },
  beforeUpdate(record, previous) {
    calls.push(\`beforeUpdate \${previous.code}>\${record.code}\`);
    if (previous.status === 'RETIRED' && record.status !== 'RETIRED') {
      throw new HttpError(409, \`Product \${previous.code} is retired and cannot come back\`);
    }
  },
  afterUpdate(record, previous) {
    calls.push(\`afterUpdate \${previous.code}>\${record.code}\`);
  },
  beforeDelete(record) {
    calls.push(\`beforeDelete \${record.code}\`);
    if (record.status === 'ACTIVE') {
      throw new HttpError(409, \`Product \${record.code} is ACTIVE; retire it before deleting it\`);
    }
  },
  afterDelete(record) {
    calls.push(\`afterDelete \${record.code}\`);
  },
  afterCommit(event) {
    commits.push(\`\${event.seq} \${event.op} \${event.id} \${event.record.name} \${event.timeISO}\`);
    if (event.record.code === 'boom') throw new Error('afterCommit failed on purpose');
  },
  middleware: [
    async (ctx, next) => {
      if (ctx.get('x-role') === 'guest' && ctx.method !== 'GET' && ctx.method !== 'HEAD') {
        throw new HttpError(403, 'Guests may only read products');
      }
      await next();
    },
  ],
  routes(router, store) {
    router.get('/data/product/:id/summary', async (ctx) => {
      const id = ctx.params['id'] ?? '';
      const product = await store.get(id);
      if (product === undefined) throw new HttpError(404, \`No product \${id}\`);
      ctx.body = { status: 'success', data: { label: \`\${product.name} at \${product.price}\` } };
    });
    router.get('/product-stats', async (ctx) => {
      ctx.body = { status: 'success', data: { products: await store.count() } };
    });
    router.get('/product-hook-calls', (ctx) => {
      ctx.body = { status: 'success', data: calls.splice(0) };
    });
    router.get('/product-commits', (ctx) => {
      ctx.body = { status: 'success', data: commits.splice(0) };
    });
  },
};
`;

const FOLDER = 'regen-hooks';
let dir: string;
let server: TestServer;
let driver: SqliteDriver;

beforeAll(async () => {
  dir = await generateFixtureInto(fixtureNamed('shop'), FOLDER);
  await writeFile(join(dir, 'src/hooks/product.ts'), PRODUCT_HOOKS);
  const { createApp, tables } = await loadGenerated(dir);
  driver = new SqliteDriver({ filename: ':memory:' });
  await driver.open(tables);
  server = await serve(createApp({ driver, logger: createLogger({ level: 'silent' }) }).callback());
});

afterAll(async () => {
  await server.close();
  await driver.close();
});

beforeEach(async () => {
  await server.request('GET', '/product-hook-calls');
});

async function hookCalls(): Promise<string[]> {
  return (await server.request('GET', '/product-hook-calls')).body.data;
}

const product = (code: string, extra: object = {}): object => ({
  code,
  name: `Product ${code}`,
  price: '9.50',
  ...extra,
});

describe('hooks of a generated service, over HTTP', () => {
  it('type-checks the worked example with the service (tsc --strict)', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await exec(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], {
      cwd: dir,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? 'tsc failed' }));
    expect(result.stdout).toBe('');
  });

  it('a before-hook rejects with its own 4xx in the error envelope; nothing is stored', async () => {
    const response = await server.request('POST', '/data/product', {
      body: { data: product('r1', { status: 'RETIRED' }) },
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      status: 'error',
      error: { reason: 'Product r1 cannot be created as RETIRED' },
    });
    expect((await server.request('GET', '/data/product/r1')).status).toBe(404);
    expect(await hookCalls()).toEqual(['beforeInsert r1']);
  });

  it('a before-hook fills fields of the stored record', async () => {
    const response = await server.request('POST', '/data/product', {
      body: { data: product('f1', { name: '  Hammer  ' }) },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ code: 'f1', name: 'Hammer', available: true });
    const read = await server.request('GET', '/data/product/f1');
    expect(read.body.data).toMatchObject({ name: 'Hammer', available: true });
    expect(await hookCalls()).toEqual(['beforeInsert f1', 'afterInsert f1']);
  });

  it('a record changed by a hook is validated again', async () => {
    const response = await server.request('POST', '/data/product', {
      body: { data: product('b1') },
      headers: { 'x-test-break-record': 'yes' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.issues).toEqual([
      expect.objectContaining({ path: ['stock'], code: 'conversion_failed' }),
    ]);
    expect((await server.request('GET', '/data/product/b1')).status).toBe(404);
    expect(await hookCalls()).toEqual(['beforeInsert b1']);
  });

  it('a list insert calls beforeInsert per record first, then afterInsert once per record', async () => {
    const response = await server.request('POST', '/data/product', {
      body: { data: [product('l1'), product('l2', { name: ' Saw ' })] },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.map((record: { name: string }) => record.name)).toEqual([
      'Product l1',
      'Saw',
    ]);
    expect(await hookCalls()).toEqual([
      'beforeInsert l1',
      'beforeInsert l2',
      'afterInsert l1',
      'afterInsert l2',
    ]);
  });

  it('a rejection inside a list insert stores none of the list and calls no after-hook', async () => {
    const response = await server.request('POST', '/data/product', {
      body: { data: [product('m1'), product('m2', { status: 'RETIRED' }), product('m3')] },
    });
    expect(response.status).toBe(422);
    expect((await server.request('GET', '/data/product/m1')).status).toBe(404);
    expect(await hookCalls()).toEqual(['beforeInsert m1', 'beforeInsert m2']);
  });

  it('PUT and PATCH call the update hooks once; PUT of an absent id is an insert', async () => {
    expect(
      (await server.request('PUT', '/data/product/u1', { body: { data: product('u1') } })).status,
    ).toBe(200);
    expect(await hookCalls()).toEqual(['beforeInsert u1', 'afterInsert u1']);
    const put = await server.request('PUT', '/data/product/u1', {
      body: { data: product('u1', { status: 'ACTIVE' }) },
    });
    expect(put.status).toBe(200);
    const patch = await server.request('PATCH', '/data/product/u1', {
      body: { data: { code: 'u2' } },
    });
    expect(patch.status).toBe(200);
    expect(await hookCalls()).toEqual([
      'beforeUpdate u1>u1',
      'afterUpdate u1>u1',
      'beforeUpdate u1>u2',
      'afterUpdate u1>u2',
    ]);
  });

  it('an update hook sees the previous record and can refuse the change', async () => {
    await server.request('POST', '/data/product', {
      body: { data: product('x1', { status: 'DRAFT' }) },
    });
    await server.request('PATCH', '/data/product/x1', { body: { data: { status: 'RETIRED' } } });
    await hookCalls();
    const back = await server.request('PATCH', '/data/product/x1', {
      body: { data: { status: 'ACTIVE' } },
    });
    expect(back.status).toBe(409);
    expect(back.body.error.reason).toBe('Product x1 is retired and cannot come back');
    expect((await server.request('GET', '/data/product/x1')).body.data.status).toBe('RETIRED');
    expect(await hookCalls()).toEqual(['beforeUpdate x1>x1']);
  });

  it('beforeDelete can refuse; afterDelete runs once after a delete', async () => {
    await server.request('POST', '/data/product', {
      body: { data: [product('d1', { status: 'ACTIVE' }), product('d2')] },
    });
    await hookCalls();
    const refused = await server.request('DELETE', '/data/product/d1');
    expect(refused.status).toBe(409);
    expect(refused.body.error.reason).toBe('Product d1 is ACTIVE; retire it before deleting it');
    expect((await server.request('GET', '/data/product/d1')).status).toBe(200);
    const deleted = await server.request('DELETE', '/data/product/d2');
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.code).toBe('d2');
    expect((await server.request('DELETE', '/data/product/d2')).status).toBe(404);
    expect(await hookCalls()).toEqual(['beforeDelete d1', 'beforeDelete d2', 'afterDelete d2']);
  });

  it('serves custom routes, also below /data/product/{id}', async () => {
    await server.request('POST', '/data/product', { body: { data: product('s1') } });
    const summary = await server.request('GET', '/data/product/s1/summary');
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({ status: 'success', data: { label: 'Product s1 at 9.5' } });
    const missing = await server.request('GET', '/data/product/nope/summary');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: 'error', error: { reason: 'No product nope' } });
    const stats = await server.request('GET', '/product-stats');
    expect(stats.status).toBe(200);
    expect(stats.body.data.products).toBeGreaterThanOrEqual(1);
    // The generated routes still answer next to the custom ones.
    expect((await server.request('GET', '/data/product/s1')).body.data.code).toBe('s1');
  });

  it('runs the entity middleware in front of the generated routes', async () => {
    const guest = { 'x-role': 'guest' };
    const post = await server.request('POST', '/data/product', {
      body: { data: product('g1') },
      headers: guest,
    });
    expect(post.status).toBe(403);
    expect(post.body).toEqual({
      status: 'error',
      error: { reason: 'Guests may only read products' },
    });
    expect((await server.request('GET', '/data/product', { headers: guest })).status).toBe(200);
    expect(await hookCalls()).toEqual([]);
    // Other entities are not affected.
    const category = await server.request('POST', '/data/category', {
      body: { data: { name: 'tools' } },
      headers: guest,
    });
    expect(category.status).toBe(200);
  });

  it('afterCommit gets each committed change as /events sends it; a failing one changes nothing', async () => {
    await server.request('GET', '/product-commits');
    const write = async (method: string, path: string, data?: unknown): Promise<number> =>
      (await server.request(method, path, data === undefined ? {} : { body: { data } })).status;
    expect(await write('POST', '/data/product', [product('c1'), product('c2')])).toBe(200);
    expect(await write('POST', '/data/product', product('c1'))).toBe(400);
    expect(await write('PATCH', '/data/product/c1', { code: 'c3' })).toBe(200);
    expect(await write('DELETE', '/data/product/c2')).toBe(200);
    // The hook throws for this one: the write and its answer stand, the error goes to the log.
    expect(await write('POST', '/data/product', product('boom'))).toBe(200);
    expect(await write('POST', '/data/product', product('c4'))).toBe(200);
    const seen: string[] = [];
    const deadline = Date.now() + 10_000;
    while (seen.length < 7 && Date.now() < deadline) {
      seen.push(...((await server.request('GET', '/product-commits')).body.data as string[]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seq = Number(seen[0]?.split(' ')[0]);
    expect(seen.map((line) => line.split(' ').slice(0, 5).join(' '))).toEqual([
      `${seq} created c1 Product c1`,
      `${seq + 1} created c2 Product c2`,
      `${seq + 2} deleted c1 Product c1`,
      `${seq + 3} created c3 Product c1`,
      `${seq + 4} deleted c2 Product c2`,
      `${seq + 5} created boom Product boom`,
      `${seq + 6} created c4 Product c4`,
    ]);
    for (const line of seen) expect(line).toMatch(/ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await hookCalls();
  });

  it('regenerating leaves the hooks file exactly as it is', async () => {
    const hooksFile = join(dir, 'src/hooks/product.ts');
    const before = await stat(hooksFile);
    const result = await exec(
      process.execPath,
      [
        join(ROOT, 'dist/cli/main.js'),
        'generate',
        'fixtures/shop/shop.yaml',
        '-o',
        relative(ROOT, dir),
      ],
      { cwd: ROOT },
    );
    expect(result.stdout).toMatch(/^Generated 24 files/);
    expect(await readFile(hooksFile, 'utf8')).toBe(PRODUCT_HOOKS);
    expect((await stat(hooksFile)).mtimeMs).toBe(before.mtimeMs);
  });
});
