/**
 * The typed client's transport sends the latest `X-Read-After` token of the service's answers
 * with its later requests (SPEC §15: read-your-writes behind read replicas).
 */
import { describe, expect, it } from 'vitest';
import { createTransport } from '../../runtime/src/client.js';

describe('client transport and X-Read-After', () => {
  it('sends the latest token it was given; a header of its own wins', async () => {
    const sent: (string | null)[] = [];
    const answers = ['0/3000148', '0/3000100', undefined, '1/0'];
    let n = 0;
    const fetch = (async (_url: string, init: RequestInit) => {
      sent.push(new Headers(init.headers).get('X-Read-After'));
      const token = answers[n++];
      return new Response(JSON.stringify({ status: 'success', data: {} }), {
        headers: token === undefined ? {} : { 'X-Read-After': token },
      });
    }) as typeof globalThis.fetch;
    const transport = createTransport({ baseUrl: 'http://service', fetch });
    await transport.request('POST', '/data/a', undefined, {});
    await transport.request('GET', '/data/a/1');
    await transport.request('GET', '/data/a/1');
    await transport.request('GET', '/data/a/1');
    await transport.request('GET', '/data/a/1');
    // Nothing before the first answer; an older token never replaces a newer one.
    expect(sent).toEqual([null, '0/3000148', '0/3000148', '0/3000148', '1/0']);

    const own = createTransport({
      baseUrl: 'http://service',
      fetch,
      headers: { 'X-Read-After': '9/9' },
    });
    n = 0;
    sent.length = 0;
    await own.request('GET', '/data/a/1');
    await own.request('GET', '/data/a/1');
    expect(sent).toEqual(['9/9', '9/9']);
  });
});
