/**
 * A storage outage is logged once when it starts, reminded every 30 s while it lasts, and logged
 * once when it ends, not as a stack trace per request (which floods the log exactly when it is
 * read). The clock (`Date` only) is the test's, so the durations logged are exact.
 */
import { Writable } from 'node:stream';
import Koa from 'koa';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errorMiddleware, StorageUnavailableError, type RequestState } from '@entity-gen/runtime';
import { serve } from '../helpers/http.js';

describe('storage outage logging', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('warns once when requests start failing with 503, reminds after 30 s, and says how long it lasted once they succeed again', async () => {
    const start = new Date('2024-05-01T12:00:00.000Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(start);
    const lines: { level: number; msg: string; err?: unknown; failedRequests?: number }[] = [];
    const logger = pino(
      { level: 'info', base: undefined },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    let down = true;
    const app = new Koa<RequestState>();
    app.use(errorMiddleware(logger));
    app.use((ctx) => {
      if (down) throw new StorageUnavailableError('connect ECONNREFUSED 127.0.0.1:5432');
      ctx.body = { status: 'success', data: {} };
    });
    const server = await serve(app.callback());
    try {
      for (let n = 0; n < 25; n++) {
        const response = await server.request('GET', '/data/product');
        expect(response.status).toBe(503);
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'Storage unavailable' },
        });
      }
      // Still down 31 s later: one reminder with the count so far.
      vi.setSystemTime(start + 31_000);
      expect((await server.request('GET', '/data/product')).status).toBe(503);
      expect((await server.request('GET', '/data/product')).status).toBe(503);
      vi.setSystemTime(start + 42_400);
      down = false;
      expect((await server.request('GET', '/data/product')).status).toBe(200);
      expect((await server.request('GET', '/data/product')).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(lines.map((line) => [line.level, line.msg, line.failedRequests])).toEqual([
      [40, 'storage unavailable: answering 503 until it is back', undefined],
      [40, 'storage still unavailable', 26],
      [40, 'storage available again after 42 s', 27],
    ]);
    expect(lines.some((line) => line.err !== undefined)).toBe(false);
  });
});
