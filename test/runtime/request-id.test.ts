/**
 * Request ids are unguessable and reveal nothing about request volume: a random prefix per service
 * instance and a random suffix per request, never a counter.
 */
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { createLogger, errorMiddleware, type RequestState } from '@entity-gen/runtime';
import { serve, type TestServer } from '../helpers/http.js';

/** A minimal service: the error middleware and an empty success answer. */
async function service(): Promise<TestServer> {
  const app = new Koa<RequestState>();
  app.use(errorMiddleware(createLogger({ level: 'silent' })));
  app.use((ctx) => {
    ctx.body = { status: 'success', data: {} };
  });
  return serve(app.callback());
}

async function ids(server: TestServer, count: number): Promise<string[]> {
  const result: string[] = [];
  for (let n = 0; n < count; n++) {
    const response = await server.request('GET', '/');
    result.push(response.headers.get('x-request-id') ?? '');
  }
  return result;
}

function commonPrefixLength(a: string, b: string): number {
  let length = 0;
  while (length < a.length && a[length] === b[length]) length++;
  return length;
}

describe('request ids', () => {
  it('have a random prefix per service instance', async () => {
    const [one, two] = await Promise.all([service(), service()]);
    try {
      const [first, second] = [await ids(one, 3), await ids(two, 3)];
      const prefixes = (list: string[]) => new Set(list.map((id) => id.split('-')[0]));
      expect(prefixes(first).size).toBe(1);
      expect(prefixes(second).size).toBe(1);
      expect([...prefixes(first)][0]).not.toBe([...prefixes(second)][0]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('do not count requests: consecutive ids differ right after the prefix', async () => {
    const server = await service();
    try {
      const list = await ids(server, 200);
      expect(new Set(list).size).toBe(list.length);
      for (const id of list) expect(id).toMatch(/^[0-9a-f]{8}-[A-Za-z0-9_-]{16}$/);
      // A counter (`3f9c2a1b-1k`, `3f9c2a1b-1l`) shares all but the last characters with the
      // next id; random suffixes share almost nothing beyond the prefix and its dash.
      const counterLike = list.filter((id, n) => {
        if (n === 0) return false;
        const shared = commonPrefixLength(list[n - 1]!, id);
        return id.length - shared <= 4 || shared > 'abcd1234-'.length + 4;
      });
      expect(counterLike).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
