/**
 * GET by key is answered on a fast path that skips Koa (runtime/src/http/fast-get.ts). Its answers
 * must be exactly those of the Koa pipeline — status, headers in order, body byte for byte — and
 * whatever it does not answer itself (missing records, bad credentials, refused methods) must get
 * the pipeline's answer. The pipeline is what the same service does once any middleware is added
 * to its application, which turns the fast path off. Defined once and run against every storage
 * driver: `fast-get.test.ts` (SQLite, which reads synchronously with `getNow`) and
 * `fast-get.postgres.test.ts` (reads with `get` only).
 */
import { request } from 'node:http';
import { connect } from 'node:net';
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
import { serve, type TestServer } from '../../helpers/http.js';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import { createProductCategory, productInput, type MakeDriver } from './crud.js';
import { suiteAuthenticator, token } from './access.js';

/** An answer as it went over the wire: status, every header in order (but Date), body text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

export function rawGet(
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
export function withoutGeneratedId(answer: RawAnswer, given?: string): RawAnswer {
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
  const make = (more: Partial<ServiceOptions> = {}): ServiceApp =>
    service.createApp({
      driver: service.driver,
      logger: createLogger({ level: 'silent' }),
      events: service.events,
      ...options,
      ...more,
    });
  const fastApp = make();
  const handled = vi.spyOn(fastApp as unknown as { handleRequest: () => unknown }, 'handleRequest');
  // Application middleware of its own sends every request through the Koa pipeline.
  const koaApp = make({ middleware: [(_ctx, next) => next()] });
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

/** What differs between storages. */
export interface FastGetSuiteOptions {
  /** Whether the driver reads synchronously (`getNow`), so the fast path answers without awaiting. */
  readonly synchronousReads: boolean;
}

async function driverOption(makeDriver: MakeDriver): Promise<{ driver?: StorageDriver }> {
  const driver = await makeDriver();
  return driver === undefined ? {} : { driver };
}

/** Registers the fast path's tests for the shop and access fixtures on drivers from `makeDriver`. */
export function describeFastGetSuite(
  label: string,
  makeDriver: MakeDriver,
  options: FastGetSuiteOptions,
): void {
  describe(`${label}: shop`, () => {
    let service: BootedService;
    let servers: Pair;
    beforeAll(async () => {
      service = await bootFixture('shop', {
        folder: `e2e-fast-get-${label}`,
        ...(await driverOption(makeDriver)),
      });
      await createProductCategory(service);
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

    describe('list pages', () => {
      /** Koa requests `path` took on the fast path's server: none where lists are read synchronously. */
      const listedByKoa = options.synchronousReads ? 0 : 1;
      // The first list of a service fetches its cursor key, and takes the pipeline meanwhile.
      beforeAll(async () => {
        expect((await rawGet(servers.fast.url, '/data/product')).status).toBe(200);
      });

      it.each([
        ['/data/product'],
        ['/data/PRODUCT?orderBy=-price,code'],
        ['/data/product?limit=1'],
        ['/data/product?limit=1&start=2'],
        ['/data/product?orderBy=code&limit=2&fields=code,price'],
        ['/data/product?fields=name'],
        ['/data/product?category=tools&price[GTE]=10'],
        ['/data/product?code=p1&code=a%2Fb'],
        ['/data/product?code=nothing'],
        ['/data/category?orderBy=-name'],
        ['/data/product?count=true'],
        ['/data/product?category=tools&orderBy=-price&limit=1&count=true&fields=code'],
        ['/data/product?code=nothing&count=true'],
        ['/data/product?limit=1&start=50&count=true'],
      ])('GET %s: the page, as the Koa pipeline sends it', async (path) => {
        const before = servers.koaRequests();
        const answer = await same(path);
        expect(answer.status).toBe(200);
        expect(answer.headers.map(([name]) => name)).toEqual([
          'X-Request-Id',
          'X-Content-Type-Options',
          'Cache-Control',
          'Content-Type',
          'Content-Length',
          'Connection',
          'Keep-Alive',
        ]);
        expect((JSON.parse(answer.body) as { status: string }).status).toBe('success');
        expect(servers.koaRequests()).toBe(before + listedByKoa);
      });

      it('pages with the cursor it issued, as the pipeline does, until the last page', async () => {
        let path = '/data/product?orderBy=name&limit=1&fields=code';
        const codes: string[] = [];
        for (let page = 0; page < 5; page++) {
          const before = servers.koaRequests();
          const answer = await same(path);
          expect(servers.koaRequests()).toBe(before + listedByKoa);
          const body = JSON.parse(answer.body) as {
            data: { code: string }[];
            meta: { next?: string };
          };
          codes.push(...body.data.map((record) => record.code));
          if (body.meta.next === undefined) break;
          path = `/data/product?orderBy=name&limit=1&fields=code&cursor=${body.meta.next}`;
        }
        expect(codes).toEqual(['a/b', 'p1', 'ünï']);
      });

      it.each([
        ['an invalid limit', '/data/product?limit=0', 400],
        ['an unknown field', '/data/product?orderBy=nope', 400],
        ['a cursor it did not issue', '/data/product?cursor=abc', 400],
        ['expand=', '/data/product?expand=category', 200],
        ['a dotted fields= path', '/data/product?fields=dimensions.width', 200],
        ['a full-text search (q=)', '/data/product?q=product%20p', 200],
        ['a trailing slash', '/data/product/', 200],
        ['a single-record entity', '/data/shop_settings', 200],
        ['an unknown entity', '/data/nothing', 404],
      ])('leaves %s to the Koa pipeline', async (_what, path, status) => {
        const before = servers.koaRequests();
        expect((await same(path)).status).toBe(status);
        expect(servers.koaRequests()).toBe(before + 1);
      });

      it.each([
        ['/entity/product/recordCounts', 3],
        ['/entity/PRODUCT/recordCounts?category=tools&orderBy=-price&limit=1', 3],
        ['/entity/product/recordCounts?code=p1&code=a%2Fb', 2],
        ['/entity/category/recordCounts?name=none', 0],
      ])('GET %s: the count, as the Koa pipeline sends it', async (path, count) => {
        const before = servers.koaRequests();
        const answer = await same(path);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toEqual({ status: 'success', data: { count } });
        expect(answer.headers.map(([name]) => name)).toContain('Content-Length');
        // Counted without Koa on every driver: in this tick, or once the count comes back.
        expect(servers.koaRequests()).toBe(before);
      });

      it.each([
        ['an invalid limit', '/entity/product/recordCounts?limit=0', 400],
        ['an unknown field', '/entity/product/recordCounts?nope=1', 400],
        ['a full-text search (q=)', '/entity/product/recordCounts?q=p1', 200],
        ['another spelling of the path', '/entity/product/recordcounts', 200],
        ['an unknown entity', '/entity/nothing/recordCounts', 404],
      ])('leaves a count with %s to the Koa pipeline', async (_what, path, status) => {
        const before = servers.koaRequests();
        expect((await same(path)).status).toBe(status);
        expect(servers.koaRequests()).toBe(before + 1);
      });

      it('sees a record written a moment before, and no longer sees it once deleted', async () => {
        const path = '/data/product?code=fresh';
        const counted = '/entity/product/recordCounts?code=fresh';
        expect(JSON.parse((await same(path)).body)).toMatchObject({ data: [] });
        expect(JSON.parse((await same(counted)).body)).toMatchObject({ data: { count: 0 } });
        const created = await service.request('POST', '/data/product', {
          body: { data: productInput('fresh') },
        });
        expect(created.status).toBe(200);
        expect(JSON.parse((await same(path)).body)).toMatchObject({ data: [{ code: 'fresh' }] });
        expect(JSON.parse((await same(counted)).body)).toMatchObject({ data: { count: 1 } });
        expect((await service.request('DELETE', '/data/product/fresh')).status).toBe(200);
        expect(JSON.parse((await same(path)).body)).toMatchObject({ data: [] });
        expect(JSON.parse((await same(counted)).body)).toMatchObject({ data: { count: 0 } });
      });
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
          for (const path of ['/data/product/p1', '/data/product?limit=2']) {
            const fast = withoutGeneratedId(await rawGet(cors.fast.url, path, headers));
            const koa = withoutGeneratedId(await rawGet(cors.koa.url, path, headers));
            expect(fast).toEqual(koa);
            expect(fast.headers).toContainEqual(['Vary', 'Origin']);
          }
          // The page is read synchronously on SQLite only (listTextsNow).
          expect(cors.koaRequests()).toBe(before + (options.synchronousReads ? 0 : 1));
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

    it('refuses app.use() once the application is built, and takes middleware as an option', async () => {
      const app = service.createApp({
        driver: service.driver,
        events: service.events,
        logger: createLogger({ level: 'silent' }),
      });
      expect(() => app.use((_ctx, next) => next())).toThrow(
        /^app\.use\(\) after createService\/createApp: pass application middleware as the `middleware` option/,
      );
      const seen: string[] = [];
      const withMiddleware = service.createApp({
        driver: service.driver,
        events: service.events,
        logger: createLogger({ level: 'silent' }),
        middleware: [
          (ctx, next) => {
            seen.push(`${ctx.method} ${ctx.path}`);
            return next();
          },
        ],
      });
      const server = await serve(withMiddleware.callback());
      try {
        expect((await rawGet(server.url, '/data/product/p1')).status).toBe(200);
      } finally {
        await server.close();
      }
      // GET by key went through the Koa pipeline, where the middleware saw it.
      expect(seen).toEqual(['GET /data/product/p1']);
    });

    it.each(
      options.synchronousReads
        ? [
            ['reads synchronously (getNow)', true],
            ['reads asynchronously (get only)', false],
          ]
        : [['reads asynchronously (get only)', false]],
    )(
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
        const handled = vi.spyOn(
          app as unknown as { handleRequest: () => unknown },
          'handleRequest',
        );
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

  describe(`${label}: expand= (references)`, () => {
    let service: BootedService;
    let servers: Pair;
    beforeAll(async () => {
      service = await bootFixture('references', {
        folder: `e2e-fast-get-references-${label}`,
        ...(await driverOption(makeDriver)),
      });
      const post = async (path: string, data: unknown): Promise<void> => {
        const response = await service.request('POST', path, { body: { data } });
        expect(response.status, response.text).toBe(200);
      };
      await post('/data/category', [
        { name: 'tools', title: 'Tools' },
        { name: 'hand', title: 'Hand tools', parent: 'tools' },
      ]);
      await post('/data/tag', [{ name: 't1' }, { name: 't2' }]);
      await post('/data/product', [
        { code: 'p1', name: 'Hammer', category: 'hand', tags: ['t1', 't2'], replacement: 'gone' },
        { code: 'p2', name: 'Saw' },
      ]);
      await post('/data/order', { id: 1, customer: 'alice' });
      await post('/data/order_line', { order: 1, no: 1, product: 'p1', quantity: 2 });
      servers = await pair(service);
    });
    afterAll(async () => {
      await servers?.close();
      await service?.close();
    });

    /** Both servers' answers, which must be the same; the fast path's is returned. */
    async function same(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
      const fast = withoutGeneratedId(await rawGet(servers.fast.url, path, headers));
      const koa = withoutGeneratedId(await rawGet(servers.koa.url, path, headers));
      expect(fast).toEqual(koa);
      return fast;
    }

    const etagOf = (answer: RawAnswer): string =>
      answer.headers.find(([name]) => name === 'ETag')?.[1] ?? '';

    it.each([
      ['a forward reference', '/data/product/p1?expand=category', 'category', 'hand'],
      ['a nested path', '/data/product/p1?expand=category.parent', 'category', 'hand'],
      [
        'a missing target (null)',
        '/data/product/p1?expand=category,replacement',
        'replacement',
        null,
      ],
      ['an absent reference', '/data/product/p2?expand=category', 'category', undefined],
      ['an ARRAY of references', '/data/product/p1?expand=tags', 'tags', 't1'],
      ['a reverse path', '/data/category/hand?expand=PRODUCT.category', 'PRODUCT.category', 'p1'],
      ['a composite key', '/data/order_line/1~1?expand=order,product.category', 'order', 1],
      ['a query asking for none', '/data/product/p1?expanded=1', 'category', 'hand'],
    ])(
      '%s: the expanded record, as the Koa pipeline sends it, without going through Koa',
      async (_what, path, field, expected) => {
        const before = servers.koaRequests();
        const answer = await same(path);
        expect(answer.status, answer.body).toBe(200);
        const data = (JSON.parse(answer.body) as { data: Record<string, unknown> }).data;
        const value = data[field];
        const key = (record: unknown): unknown => {
          const fields = record as Record<string, unknown>;
          return fields['code'] ?? fields['name'] ?? fields['id'];
        };
        if (expected === undefined) expect(value).toBeUndefined();
        else if (expected === null) expect(value).toBeNull();
        else if (typeof value === 'string') expect(value).toBe(expected);
        else expect(key(Array.isArray(value) ? value[0] : value)).toBe(expected);
        expect(servers.koaRequests()).toBe(before);
      },
    );

    it.each([
      ['GET by key', '/data/product/p1?%65xpand=category'],
      ['a list', '/data/product?code=p1&%65xpand=category'],
      ['a list, the value escaped too', '/data/product?code=p1&%65xpand=%63ategory'],
    ])('%s: a percent-encoded parameter name is the parameter itself', async (_what, path) => {
      const answer = await same(path);
      expect(answer.status, answer.body).toBe(200);
      const data = (JSON.parse(answer.body) as { data: unknown }).data;
      const record = (Array.isArray(data) ? data[0] : data) as Record<string, unknown>;
      expect(record['category']).toMatchObject({ name: 'hand', title: 'Hand tools' });
    });

    it('embeds the nested record and tags the representation', async () => {
      const answer = await same('/data/product/p1?expand=category.parent');
      const data = (JSON.parse(answer.body) as { data: Record<string, unknown> }).data;
      expect(data['category']).toEqual({
        name: 'hand',
        title: 'Hand tools',
        parent: { name: 'tools', title: 'Tools' },
      });
      expect(etagOf(answer)).toMatch(/^"1\.[\w-]{16}"$/);
    });

    it('answers 304 to the tag of the expanded representation, and a new tag once an embedded record changes', async () => {
      const path = '/data/product/p1?expand=category';
      const before = servers.koaRequests();
      const first = await same(path);
      const tag = etagOf(first);
      expect((await same(path, { 'If-None-Match': tag })).status).toBe(304);
      // The plain record's tag is another representation's.
      expect((await same(path, { 'If-None-Match': '"1"' })).status).toBe(200);
      expect(servers.koaRequests()).toBe(before);
      const patched = await service.request('PATCH', '/data/category/hand', {
        body: { data: { title: 'Hand tools and more' } },
      });
      expect(patched.status, patched.text).toBe(200);
      const changed = await same(path, { 'If-None-Match': tag });
      expect(changed.status).toBe(200);
      expect(etagOf(changed)).not.toBe(tag);
      expect(changed.body).toContain('Hand tools and more');
    });

    it.each([
      ['an unknown path (400)', '/data/product/p1?expand=nope', 400],
      ['a field that is no reference (400)', '/data/product/p1?expand=name', 400],
      ['expandLimit without expand (400)', '/data/product/p1?expandLimit=2', 400],
      ['a missing record (404)', '/data/product/none?expand=category', 404],
    ])('leaves %s to the Koa pipeline, which answers as always', async (_what, path, status) => {
      const before = servers.koaRequests();
      expect((await same(path)).status).toBe(status);
      expect(servers.koaRequests()).toBe(before + 1);
    });

    it('leaves a query Koa reads differently (it ends at `#`) to the pipeline', async () => {
      // Sent as written (an HTTP client would drop the fragment): Koa sees `expandLimit=1` alone.
      const exchange = (url: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const { hostname, port } = new URL(url);
          const socket = connect(Number(port), hostname, () =>
            socket.end(
              'GET /data/category/hand?expandLimit=1&#&expand=PRODUCT.category HTTP/1.1\r\n' +
                'Host: x\r\nConnection: close\r\n\r\n',
            ),
          );
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
      const before = servers.koaRequests();
      const fast = await exchange(servers.fast.url);
      expect(fast.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(fast).toContain('Parameter expandLimit needs an expand parameter with a reverse path');
      expect(servers.koaRequests()).toBe(before + 1);
    });
  });

  describe(`${label}: expand= under access rules`, () => {
    let service: BootedService;
    let servers: Pair;
    const bearer = async (subject: string, roles: string[]): Promise<Record<string, string>> => ({
      Authorization: `Bearer ${await token(subject, roles)}`,
    });
    beforeAll(async () => {
      service = await bootFixture(
        {
          name: 'references-access',
          schemas: ['fixtures/references/schema.yaml'],
          access: 'fixtures/references/access.yaml',
        },
        {
          folder: `e2e-fast-get-references-access-${label}`,
          auth: suiteAuthenticator(),
          ...(await driverOption(makeDriver)),
        },
      );
      const admin = await bearer('root', ['admin']);
      const post = async (path: string, data: unknown): Promise<void> => {
        const response = await service.request('POST', path, { body: { data }, headers: admin });
        expect(response.status, response.text).toBe(200);
      };
      await post('/data/category', { name: 'hand' });
      await post('/data/product', { code: 'p1', name: 'Hammer', category: 'hand' });
      await post('/data/order', [
        { id: 1, customer: 'alice' },
        { id: 2, customer: 'bob' },
      ]);
      await post('/data/order_line', [
        { order: 1, no: 1, product: 'p1', quantity: 1 },
        { order: 2, no: 1, product: 'p1', quantity: 1 },
      ]);
      servers = await pair(service, { auth: suiteAuthenticator() });
    });
    afterAll(async () => {
      await servers?.close();
      await service?.close();
    });

    it.each([
      ['staff expanding a staff-only entity', '/data/product/p1?expand=category', 'staff', 200],
      ['anonymous, the same path (401)', '/data/product/p1?expand=category', undefined, 401],
      ['a customer without the role (403)', '/data/product/p1?expand=category', 'alice', 403],
      ['an owner expanding its order', '/data/order_line/1~1?expand=order', 'alice', 200],
      ['another’s order (embedded as null)', '/data/order_line/2~1?expand=order', 'alice', 200],
    ])('%s: the same answer', async (_what, path, caller, status) => {
      const headers =
        caller === undefined ? {} : await bearer(caller, caller === 'staff' ? ['staff'] : []);
      const before = servers.koaRequests();
      const fast = withoutGeneratedId(await rawGet(servers.fast.url, path, headers));
      const koa = withoutGeneratedId(await rawGet(servers.koa.url, path, headers));
      expect(fast).toEqual(koa);
      expect(fast.status, fast.body).toBe(status);
      // A refusal is the pipeline's to answer; a record, the fast path's.
      expect(servers.koaRequests()).toBe(status === 200 ? before : before + 1);
      if (path.endsWith('2~1?expand=order')) expect(JSON.parse(fast.body).data.order).toBeNull();
    });
  });

  describe(`${label}: access rules`, () => {
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
        folder: `e2e-fast-get-access-${label}`,
        auth: suiteAuthenticator(),
        ...(await driverOption(makeDriver)),
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
}
