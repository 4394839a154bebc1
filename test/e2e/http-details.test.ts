import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@entity-gen/runtime';
import { serve } from '../helpers/http.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

let service: BootedService;
beforeAll(async () => {
  service = await bootFixture('shop', { folder: 'e2e-http-details' });
});
afterAll(async () => {
  await service.close();
});

describe('OPTIONS', () => {
  it.each([
    ['/data/product', 'GET, HEAD, POST, PATCH, DELETE'],
    ['/data/product/p1', 'GET, HEAD, PUT, PATCH, DELETE'],
    ['/data/shop_settings', 'GET, HEAD'],
    ['/data/shop_settings/current', 'GET, HEAD, PUT, PATCH'],
  ])('%s lists the allowed methods in Allow and in the envelope', async (path, allow) => {
    const response = await service.request('OPTIONS', path);
    expect(response.status).toBe(200);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.body).toEqual({ status: 'success', data: { allow: allow.split(', ') } });
  });

  it('answers on metadata routes in the envelope too', async () => {
    const response = await service.request('OPTIONS', '/health');
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data.allow).toContain('GET');
  });
});

describe('conditional GET', () => {
  it('treats a weak If-None-Match tag as the same version (weak comparison)', async () => {
    await service.request('POST', '/data/category', { body: { data: { name: 'weak' } } });
    const response = await service.request('GET', '/data/category/weak', {
      headers: { 'if-none-match': 'W/"1"' },
    });
    expect(response.status).toBe(304);
  });

  it('answers the full record to a tag that does not match', async () => {
    const stale = await service.request('GET', '/data/category/weak', {
      headers: { 'if-none-match': '"7", W/"8"' },
    });
    expect(stale.status).toBe(200);
    expect(stale.body.data.name).toBe('weak');
  });

  it('answers 304 to a matching tag despite Cache-Control: no-cache (fetch() always adds it)', async () => {
    const response = await service.request('GET', '/data/category/weak', {
      headers: { 'if-none-match': '"1"', 'cache-control': 'no-cache' },
    });
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe('"1"');
  });

  it('does not match a weak tag for If-Match (strong comparison)', async () => {
    const response = await service.request('PATCH', '/data/category/weak', {
      body: { data: { description: 'x' } },
      headers: { 'if-match': 'W/"1"' },
    });
    expect(response.status).toBe(412);
  });
});

describe('single-record entities keep their key', () => {
  it('refuses to rename the one record through PATCH or PUT', async () => {
    await service.request('PUT', '/data/shop_settings/current', {
      body: { data: { shopName: 'Shop' } },
    });
    const patched = await service.request('PATCH', '/data/shop_settings/current', {
      body: { data: { id: 'other' } },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.reason).toBe(
      'The key of single-record Entity SHOP_SETTINGS is always current; it cannot be changed',
    );
    const replaced = await service.request('PUT', '/data/shop_settings/current', {
      body: { data: { id: 'other', shopName: 'Shop' } },
    });
    expect(replaced.status).toBe(400);
    const listed = await service.request('GET', '/data/shop_settings');
    expect(listed.body.data).toEqual([{ id: 'current', shopName: 'Shop' }]);
  });
});

describe('client address behind a proxy', () => {
  const forwarded = { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' };

  async function loggedIp(trustProxy: boolean): Promise<unknown> {
    const logged: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug' });
    logger.debug = ((line: Record<string, unknown>) =>
      void logged.push(line)) as typeof logger.debug;
    const app = service.createApp({ driver: service.driver, logger, trustProxy });
    const server = await serve(app.callback());
    try {
      await server.request('GET', '/health', { headers: forwarded });
    } finally {
      await server.close();
    }
    return logged.find((line) => line['path'] === '/health')?.['ip'];
  }

  it('logs the X-Forwarded-For entry the nearest proxy added when TRUST_PROXY is on', async () => {
    // The earlier entries come from the client, which can write anything there.
    expect(await loggedIp(true)).toBe('203.0.113.7');
  });

  it('logs the connection address when TRUST_PROXY is off', async () => {
    expect(await loggedIp(false)).toMatch(/127\.0\.0\.1/);
  });
});
