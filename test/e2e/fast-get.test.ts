/**
 * GET by key is answered on a fast path that skips Koa (runtime/src/http/fast-get.ts). Its answers
 * must be exactly those of the Koa pipeline — status, headers in order, body byte for byte — and
 * whatever it does not answer itself (missing records, bad credentials, refused methods) must get
 * the pipeline's answer. The pipeline is what the same service does once any middleware is added
 * to its application, which turns the fast path off.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createLogger,
  StorageUnavailableError,
  type Logger,
  type ServiceApp,
  type ServiceOptions,
  type StorageDriver,
} from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { fixtureNamed, generateFixtureInto } from '../helpers/generate.js';
import { serve, type TestServer } from '../helpers/http.js';
import { bootFixture, loadGenerated, type BootedService } from '../helpers/service.js';
import { productInput } from './suites/crud.js';
import { suiteAuthenticator, token } from './suites/access.js';

/** An answer as it went over the wire: status, every header in order (but Date), body text. */
interface RawAnswer {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

function rawGet(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({
          status: res.statusCode ?? 0,
          headers: pairs.filter(([name]) => name !== 'Date'),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** An answer with its generated request id replaced (it differs between any two requests). */
function withoutGeneratedId(answer: RawAnswer, given?: string): RawAnswer {
  return {
    ...answer,
    headers: answer.headers.map(([name, value]) =>
      name === 'X-Request-Id' && value !== given ? [name, '(generated)'] : [name, value],
    ),
  };
}

/** The fast path's server and the pipeline's, on one driver; `fastApp` counts Koa's requests. */
interface Pair {
  readonly fast: TestServer;
  readonly koa: TestServer;
  /** Requests of `fast` that Koa handled. */
  readonly koaRequests: () => number;
  close(): Promise<void>;
}

async function pair(
  service: BootedService,
  options: Omit<ServiceOptions, 'driver' | 'logger'> = {},
): Promise<Pair> {
  const make = (): ServiceApp =>
    service.createApp({
      driver: service.driver,
      logger: createLogger({ level: 'silent' }),
      events: service.events,
      ...options,
    });
  const fastApp = make();
  const handled = vi.spyOn(fastApp as unknown as { handleRequest: () => unknown }, 'handleRequest');
  const koaApp = make();
  koaApp.use((_ctx, next) => next());
  const fast = await serve(fastApp.callback());
  const koa = await serve(koaApp.callback());
  return {
    fast,
    koa,
    koaRequests: () => handled.mock.calls.length,
    close: async () => {
      await fast.close();
      await koa.close();
    },
  };
}

describe('shop', () => {
  let service: BootedService;
  let servers: Pair;
  beforeAll(async () => {
    service = await bootFixture('shop', { folder: 'e2e-fast-get' });
    for (const code of ['p1', 'a/b', 'ünï'])
      expect(
        (await service.request('POST', '/data/product', { body: { data: productInput(code) } }))
          .status,
      ).toBe(200);
    await service.request('PUT', '/data/shop_settings/current', {
      body: { data: { shopName: 'Fast', currency: 'EUR' } },
    });
    servers = await pair(service);
  });
  afterAll(async () => {
    await servers?.close();
    await service?.close();
  });

  /** Asserts that both servers give the same answer; returns the fast path's. */
  async function same(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
    const given = headers['X-Request-Id'];
    const fast = withoutGeneratedId(await rawGet(servers.fast.url, path, headers), given);
    const koa = withoutGeneratedId(await rawGet(servers.koa.url, path, headers), given);
    expect(fast).toEqual(koa);
    return fast;
  }

  it.each([
    ['/data/product/p1'],
    ['/data/PRODUCT/p1'],
    ['/data/product/p1/'],
    ['/data/product/p1?ignored=1'],
    ['/data/product/a%2Fb'],
    ['/data/product/a/b'],
    [`/data/product/${encodeURIComponent('ünï')}`],
    ['/data/shop_settings/current'],
  ])(
    'GET %s: the record, as the Koa pipeline sends it, without going through Koa',
    async (path) => {
      const before = servers.koaRequests();
      const answer = await same(path);
      expect(answer.status).toBe(200);
      expect(answer.headers.map(([name]) => name)).toEqual([
        'X-Request-Id',
        'X-Content-Type-Options',
        'Cache-Control',
        'ETag',
        'Content-Type',
        'Content-Length',
        'Connection',
        'Keep-Alive',
      ]);
      const body = JSON.parse(answer.body) as { status: string; data: object; meta: object };
      expect(body.status).toBe('success');
      expect(Object.keys(body.meta)).toEqual(['lastUpdateTimeUnix', 'lastUpdateTimeISO']);
      expect(servers.koaRequests()).toBe(before);
    },
  );

  it('answers 304 to a matching If-None-Match (weakly compared, in a list) on the fast path', async () => {
    const before = servers.koaRequests();
    for (const tag of ['"1"', 'W/"1"', '"7", "1"', '*']) {
      const answer = await same('/data/product/p1', { 'If-None-Match': tag });
      expect(answer.status).toBe(304);
      expect(answer.body).toBe('');
      expect(answer.headers).toContainEqual(['ETag', '"1"']);
    }
    expect((await same('/data/product/p1', { 'If-None-Match': '"2"' })).status).toBe(200);
    expect(servers.koaRequests()).toBe(before);
  });

  it('echoes a client request id that looks like one, and replaces one that does not', async () => {
    const echoed = await same('/data/product/p1', { 'X-Request-Id': 'client-id-1' });
    expect(echoed.headers).toContainEqual(['X-Request-Id', 'client-id-1']);
    const replaced = await same('/data/product/p1', { 'X-Request-Id': 'not an id' });
    expect(replaced.headers).toContainEqual(['X-Request-Id', '(generated)']);
  });

  it.each([
    ['a missing record', '/data/product/nope', 404],
    ['an unknown entity', '/data/nothing/p1', 404],
    ['bad percent-encoding', '/data/product/%E0%A4%A', 400],
    ['another id of a single-record entity', '/data/shop_settings/other', 404],
    ['the list (a path without id)', '/data/category/', 200],
  ])('leaves %s to the Koa pipeline, which answers as always', async (_what, path, status) => {
    const answer = await same(path);
    expect(answer.status).toBe(status);
  });

  it('goes through Koa for a missing record', async () => {
    const before = servers.koaRequests();
    expect((await same('/data/product/nope')).status).toBe(404);
    expect(servers.koaRequests()).toBe(before + 1);
  });

  describe('with CORS', () => {
    let cors: Pair;
    beforeAll(async () => {
      cors = await pair(service, { corsOrigins: ['https://app.example.com'] });
    });
    afterAll(async () => {
      await cors?.close();
    });

    it.each([
      ['an allowed origin', { Origin: 'https://app.example.com' }],
      ['another origin', { Origin: 'https://evil.example.com' }],
      ['no origin', {}],
    ])(
      'sends the CORS middleware’s headers to %s',
      async (_what, headers: Record<string, string>) => {
        const before = cors.koaRequests();
        const fast = withoutGeneratedId(await rawGet(cors.fast.url, '/data/product/p1', headers));
        const koa = withoutGeneratedId(await rawGet(cors.koa.url, '/data/product/p1', headers));
        expect(fast).toEqual(koa);
        expect(fast.headers).toContainEqual(['Vary', 'Origin']);
        expect(cors.koaRequests()).toBe(before);
      },
    );
  });

  /** A logger that keeps its lines. */
  function recordingLogger(level: string): { logger: Logger; lines: { msg: string }[] } {
    const lines: { msg: string }[] = [];
    const logger = pino(
      { level, base: undefined },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as { msg: string });
          done();
        },
      }),
    );
    return { logger, lines };
  }

  it('is off while the log level is debug: every request is logged', async () => {
    const { logger, lines } = recordingLogger('debug');
    const app = service.createApp({ driver: service.driver, events: service.events, logger });
    const debug = await serve(app.callback());
    try {
      expect((await rawGet(debug.url, '/data/product/p1')).status).toBe(200);
    } finally {
      await debug.close();
    }
    expect(lines.map((line) => line.msg)).toContain('request');
  });

  it.each([
    ['reads synchronously (getNow)', true],
    ['reads asynchronously (get only)', false],
  ])(
    'logs the end of a storage outage when the fast path answers again, on a driver that %s',
    async (_what, synchronous) => {
      const { logger, lines } = recordingLogger('info');
      let down = true;
      const inner = service.driver;
      const unavailable = (): never => {
        throw new StorageUnavailableError('connect ECONNREFUSED 127.0.0.1:5432');
      };
      const driver: StorageDriver = Object.assign(Object.create(inner) as StorageDriver, {
        get: async (...args: Parameters<StorageDriver['get']>) =>
          down ? unavailable() : inner.get(...args),
        getNow: synchronous
          ? (...args: Parameters<NonNullable<StorageDriver['getNow']>>) =>
              down ? unavailable() : inner.getNow!(...args)
          : undefined,
      });
      const app = service.createApp({ driver, events: service.events, logger });
      const handled = vi.spyOn(app as unknown as { handleRequest: () => unknown }, 'handleRequest');
      const server = await serve(app.callback());
      try {
        const failed = await rawGet(server.url, '/data/product/p1');
        expect(failed.status).toBe(503);
        expect(JSON.parse(failed.body)).toEqual({
          status: 'error',
          error: { reason: 'Storage unavailable' },
        });
        down = false;
        expect((await rawGet(server.url, '/data/product/p1')).status).toBe(200);
      } finally {
        await server.close();
      }
      // The 503 came from the pipeline, the 200 from the fast path.
      expect(handled).toHaveBeenCalledTimes(1);
      const messages = lines.map((line) => line.msg);
      expect(messages).toContain('storage unavailable: answering 503 until it is back');
      expect(messages.some((msg) => msg.startsWith('storage available again'))).toBe(true);
    },
  );
});

describe('access rules', () => {
  let service: BootedService;
  let servers: Pair;
  const bearer = async (
    subject: string,
    roles: string[] = [],
  ): Promise<Record<string, string>> => ({
    Authorization: `Bearer ${await token(subject, roles)}`,
  });
  beforeAll(async () => {
    service = await bootFixture('access', {
      folder: 'e2e-fast-get-access',
      auth: suiteAuthenticator(),
    });
    const admin = await bearer('root', ['admin']);
    for (const [id, customer] of [
      ['o-alice', 'alice'],
      ['o-bob', 'bob'],
    ])
      expect(
        (
          await service.request('POST', '/data/order', {
            body: { data: { id, customer, total: '1' } },
            headers: admin,
          })
        ).status,
      ).toBe(200);
    expect(
      (
        await service.request('POST', '/data/product', {
          body: { data: { code: 'p1', name: 'P' } },
          headers: admin,
        })
      ).status,
    ).toBe(200);
    servers = await pair(service, { auth: suiteAuthenticator() });
  });
  afterAll(async () => {
    await servers?.close();
    await service?.close();
  });

  it.each([
    ['a public method, anonymous', '/data/product/p1', undefined, 200, true],
    ['an owner reading its record', '/data/order/o-alice', 'alice', 200, true],
    ['an admin reading any record', '/data/order/o-bob', 'admin', 200, true],
    ['an owner reading another’s record (404)', '/data/order/o-bob', 'alice', 404, false],
    [
      'an anonymous caller of an authenticated method (401)',
      '/data/order/o-alice',
      undefined,
      401,
      false,
    ],
    ['a caller without the role (403)', '/data/customer/c1', 'alice', 403, false],
    ['a bad token (401)', '/data/product/p1', 'bad', 401, false],
  ])('%s: the same answer', async (_what, path, caller, status, fastPath) => {
    const headers =
      caller === undefined
        ? {}
        : caller === 'bad'
          ? { Authorization: 'Bearer not-a-key' }
          : await bearer(caller, caller === 'admin' ? ['admin'] : []);
    const before = servers.koaRequests();
    const fast = withoutGeneratedId(await rawGet(servers.fast.url, path, headers));
    const koa = withoutGeneratedId(await rawGet(servers.koa.url, path, headers));
    expect(fast).toEqual(koa);
    expect(fast.status).toBe(status);
    expect(servers.koaRequests()).toBe(fastPath ? before : before + 1);
  });
});

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
    expect(tools.body.data).toEqual({ name: 'tools' });
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
