/**
 * A slow list or count cannot stall a service on a SQLite file: the query runs in a reader thread,
 * so `/health` answers while it is still running, and a query over its time budget
 * (QUERY_TIMEOUT_MS) answers 503 in the envelope naming the budget, logged as one warning line
 * without a stack trace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type ServiceApp } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve, type JsonResponse, type TestServer } from '../helpers/http.js';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { rawGet, withoutGeneratedId } from './suites/fast-get.js';

const dir = mkdtempSync(join(tmpdir(), 'eg-slow-query-'));
const file = join(dir, 'shop.db');
const ROWS = 20_000;

/**
 * A count that makes SQLite test every row against 200 substrings (the most filter values a
 * request may carry), with no index to help: seconds of work on any machine, against milliseconds
 * for /health and a budget of 100 ms below, so neither case depends on the machine's speed. No
 * case waits a fixed time for the count to get going.
 */
const SLOW_COUNT = `/entity/category/recordCounts?${Array.from(
  { length: 200 },
  (_, n) => `description[NOT_CONTAINS]=absent-${n}`,
).join('&')}`;

let service: BootedService;
beforeAll(async () => {
  // One budget large enough for the slow count to finish: the ordering test below.
  service = await bootFixture('shop', {
    folder: 'e2e-slow-query',
    driver: new SqliteDriver({ filename: file, readers: 2, queryTimeoutMs: 120_000 }),
  });
  const table = service.tables.find((candidate) => candidate.entity === 'CATEGORY')!;
  const description = 'Hand tools, garden tools and everything in between. '.repeat(4);
  for (let start = 0; start < ROWS; start += 10_000) {
    const records = Array.from({ length: 10_000 }, (_, n) => ({
      name: `category-${start + n}`,
      description,
    }));
    await service.driver.insert(table, records, Date.now());
  }
});
const others: Pick<TestServer, 'close'>[] = [];
afterAll(async () => {
  await Promise.all(others.map((server) => server.close()));
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a slow query on a SQLite file', () => {
  it('runs off the event loop: /health answers while the count is still running', async () => {
    let counted: JsonResponse | undefined;
    const slow = service.request('GET', SLOW_COUNT).then((response) => {
      counted = response;
      return response;
    });
    // /health, asked three times in a row while the count runs: the answers must come back
    // before the count's (seconds of work, against milliseconds for /health).
    const healthWhileCounting: number[] = [];
    while (counted === undefined && healthWhileCounting.length < 3) {
      const health = await service.request('GET', '/health');
      if (counted !== undefined) break;
      healthWhileCounting.push(health.status);
    }
    const count = await slow;
    expect(count.status, count.text).toBe(200);
    expect(count.body.data).toEqual({ count: ROWS });
    expect(healthWhileCounting).toEqual([200, 200, 200]);
  });

  it('answers 503 naming QUERY_TIMEOUT_MS beyond the budget, logged as one warning without a stack', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info', base: undefined },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    );
    const driver = new SqliteDriver({ filename: file, readers: 1, queryTimeoutMs: 100 });
    await driver.open(service.tables);
    const app: ServiceApp = service.createApp({ driver, logger });
    const server = await serve(app.callback());
    others.push({ ...server, close: () => server.close().then(() => driver.close()) });

    const stopped = await server.request('GET', SLOW_COUNT);
    expect(stopped.status).toBe(503);
    expect(stopped.body).toEqual({
      status: 'error',
      error: {
        reason:
          'The query took longer than 100 ms (QUERY_TIMEOUT_MS) and was stopped; narrow the filters or page with a smaller limit',
      },
    });
    // A list whose filters match nothing scans the whole table as well.
    const list = await server.request(
      'GET',
      SLOW_COUNT.replace('/entity/category/recordCounts', '/data/category').replaceAll(
        'NOT_CONTAINS',
        'CONTAINS',
      ),
    );
    expect(list.status, list.text).toBe(503);

    // One warning per stopped query, with the request id and no stack trace.
    expect(lines.filter((line) => (line['level'] as number) >= 50)).toEqual([]);
    const warnings = lines.filter((line) => String(line['msg']).startsWith('The query took'));
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) {
      expect(warning['level']).toBe(40);
      expect(warning['requestId']).toEqual(expect.any(String));
      expect(JSON.stringify(warning)).not.toContain('stack');
    }
  });

  it('a count run in a reader is answered without Koa, its error as the pipeline answers it, run once', async () => {
    const logged: Record<string, Record<string, unknown>[]> = { fast: [], koa: [] };
    const loggerOf = (name: string) =>
      pino(
        { level: 'info', base: undefined },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            logged[name]!.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
            done();
          },
        }),
      );
    const budgeted = new SqliteDriver({ filename: file, readers: 1, queryTimeoutMs: 100 });
    await budgeted.open(service.tables);
    const apps = (driver: SqliteDriver, logs: boolean) => {
      const fastApp = service.createApp({
        driver,
        logger: logs ? loggerOf('fast') : createLogger({ level: 'silent' }),
      });
      // Application middleware of its own sends every request through the Koa pipeline.
      const koaApp = service.createApp({
        driver,
        logger: logs ? loggerOf('koa') : createLogger({ level: 'silent' }),
        middleware: [(_ctx, next) => next()],
      });
      return { fastApp, koaApp };
    };
    const servers: TestServer[] = [];
    const closeAll = async () => {
      for (const server of servers) await server.close();
      await budgeted.close();
    };
    others.push({ close: closeAll });
    const counts = apps(service.driver as SqliteDriver, false);
    const stopping = apps(budgeted, true);
    const koaCalls = [counts.fastApp, stopping.fastApp].map((app) =>
      vi.spyOn(app as unknown as { handleRequest: () => unknown }, 'handleRequest'),
    );
    for (const app of [counts.fastApp, counts.koaApp, stopping.fastApp, stopping.koaApp])
      servers.push(await serve(app.callback()));
    const [countsFast, countsKoa, stoppingFast, stoppingKoa] = servers as [
      TestServer,
      TestServer,
      TestServer,
      TestServer,
    ];
    // The first count of a service fetches its cursor key, and takes the pipeline meanwhile.
    await countsFast.request('GET', '/health');
    await countsFast.request('GET', '/entity/category/recordCounts?name=none');
    await stoppingFast.request('GET', '/entity/category/recordCounts?name=none');
    const before = koaCalls.map((spy) => spy.mock.calls.length);

    // A count without an index to bound it runs in a reader.
    const all = '/entity/category/recordCounts';
    const fast = withoutGeneratedId(await rawGet(countsFast.url, all));
    expect(fast).toEqual(withoutGeneratedId(await rawGet(countsKoa.url, all)));
    expect(JSON.parse(fast.body)).toEqual({ status: 'success', data: { count: ROWS } });

    const headers = { 'X-Request-Id': 'slow-count-1' };
    const stopped = await rawGet(stoppingFast.url, SLOW_COUNT, headers);
    expect(stopped.status).toBe(503);
    expect(stopped).toEqual(await rawGet(stoppingKoa.url, SLOW_COUNT, headers));
    expect(koaCalls.map((spy) => spy.mock.calls.length)).toEqual(before);
    // Counted once: one warning, naming the request as the pipeline's does.
    for (const name of ['fast', 'koa']) {
      const warnings = logged[name]!.filter((line) => String(line['msg']).startsWith('The query'));
      expect(warnings, name).toEqual([
        expect.objectContaining({
          level: 40,
          requestId: 'slow-count-1',
          method: 'GET',
          path: '/entity/category/recordCounts',
        }),
      ]);
    }
  });
});
