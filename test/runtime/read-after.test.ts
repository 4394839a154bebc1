/**
 * The read-after context of a request (runtime/src/read-after.ts): the token a request sends is
 * what its reads must see, a malformed one is a 400, reads of requests that may write go to the
 * primary, and the answer carries the position its writes reached.
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMiddleware, RequestTracker } from '../../runtime/src/http/errors.js';
import { createLogger } from '../../runtime/src/logger.js';
import {
  laterToken,
  readAfterContext,
  readAfterMiddleware,
  tokenValue,
} from '../../runtime/src/read-after.js';

describe('read-after tokens', () => {
  it('order like WAL positions', () => {
    expect(tokenValue('0/3000148')).toBe(0x3000148n);
    expect(tokenValue('1/0')! > tokenValue('0/FFFFFFFF')!).toBe(true);
    expect(tokenValue('nonsense')).toBeUndefined();
    expect(laterToken('0/10', '0/9')).toBe('0/10');
    expect(laterToken(undefined, '0/9')).toBe('0/9');
  });

  describe('the middleware', () => {
    let url: string;
    let server: ReturnType<Koa['listen']>;
    beforeAll(async () => {
      const app = new Koa();
      const logger = createLogger({ level: 'silent' });
      app.use(errorMiddleware(logger, new RequestTracker(logger)));
      app.use(readAfterMiddleware());
      app.use((ctx) => {
        const context = readAfterContext()!;
        if (ctx.method === 'POST') context.written = '0/ABC';
        ctx.body = { requested: context.requested ?? null, primary: context.primary };
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => {
      server.close();
    });

    it('passes the token to the reads and answers a write with its position', async () => {
      const read = await fetch(url, { headers: { 'X-Read-After': '0/3000148' } });
      expect(await read.json()).toEqual({ requested: '0/3000148', primary: false });
      expect(read.headers.get('X-Read-After')).toBeNull();
      const write = await fetch(url, { method: 'POST' });
      expect(await write.json()).toEqual({ requested: null, primary: true });
      expect(write.headers.get('X-Read-After')).toBe('0/ABC');
    });

    it('refuses a malformed token with a 400 that names the header', async () => {
      const answer = await fetch(url, { headers: { 'X-Read-After': 'yesterday' } });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(await answer.json())).toContain('X-Read-After must be the token');
    });
  });
});
