/**
 * A storage outage is logged once when it starts and once when it ends, not as a stack trace per
 * request (which floods the log exactly when it is read).
 */
import { Writable } from 'node:stream';
import Koa from 'koa';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { errorMiddleware, StorageUnavailableError, type RequestState } from '@entity-gen/runtime';
import { serve } from '../helpers/http.js';

describe('storage outage logging', () => {
  it('warns once when requests start failing with 503 and once when they succeed again', async () => {
    const lines: { level: number; msg: string; err?: unknown }[] = [];
    const logger = pino(
      { level: 'info', base: undefined },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
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
      down = false;
      expect((await server.request('GET', '/data/product')).status).toBe(200);
      expect((await server.request('GET', '/data/product')).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'storage unavailable: answering 503 until it is back'],
      [40, 'storage available again after 0 s'],
    ]);
    expect(lines.some((line) => line.err !== undefined)).toBe(false);
  });
});
