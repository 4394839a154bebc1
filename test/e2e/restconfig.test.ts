import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../helpers/service.js';

let service: BootedService;

beforeAll(async () => {
  service = await bootFixture('shop-rest');
  const products = [
    { code: 'a', name: 'Anvil', price: '30' },
    { code: 'b', name: 'Bolt', price: '2.5' },
    { code: 'c', name: 'Chisel', price: '12' },
    { code: 'd', name: 'Drill', price: '12' },
  ];
  expect(
    (await service.request('POST', '/data/product', { body: { data: products } })).status,
  ).toBe(200);
});
afterAll(async () => {
  await service.close();
});

describe('allowedMethods', () => {
  it.each([
    ['GET', '/data/category', 'GET_LIST'],
    ['GET', '/entity/category/recordCounts', 'GET_LIST'],
    ['PUT', '/data/category/tools', 'UPDATE'],
    ['PATCH', '/data/category/tools', 'UPDATE'],
    ['DELETE', '/data/category/tools', 'DELETE'],
  ])('%s %s answers 403 naming %s', async (method, path, name) => {
    const response = await service.request(
      method,
      path,
      method === 'GET' || method === 'DELETE' ? {} : { body: { data: { name: 'tools' } } },
    );
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      status: 'error',
      error: { reason: `Method ${name} not allowed for Entity CATEGORY` },
    });
  });

  it('refuses to create a record with PUT or PATCH when NEW is switched off, and still updates', async () => {
    for (const method of ['PUT', 'PATCH']) {
      const response = await service.request(method, '/data/shop_settings/current', {
        body: { data: { id: 'current', shopName: 'Bottega' } },
      });
      expect(response.status, method).toBe(403);
      expect(response.body).toEqual({
        status: 'error',
        error: { reason: 'Method NEW not allowed for Entity SHOP_SETTINGS' },
      });
    }
    expect((await service.request('GET', '/data/shop_settings/current')).status).toBe(404);
    // Set up by an operator, the record can then be changed through the API.
    const settings = service.tables.find((table) => table.entity === 'SHOP_SETTINGS')!;
    await service.driver.insert(settings, [{ id: 'current', shopName: 'Bottega' }], Date.now());
    const patched = await service.request('PATCH', '/data/shop_settings/current', {
      body: { data: { currency: 'EUR' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({ id: 'current', shopName: 'Bottega', currency: 'EUR' });
  });

  it('still serves the allowed methods', async () => {
    expect(
      (await service.request('POST', '/data/category', { body: { data: { name: 'tools' } } }))
        .status,
    ).toBe(200);
    expect((await service.request('GET', '/data/category/tools')).status).toBe(200);
  });

  it('OPTIONS and 405 list only the methods the configuration allows', async () => {
    const collection = await service.request('OPTIONS', '/data/category');
    expect(collection.status).toBe(200);
    expect(collection.headers.get('allow')).toBe('POST');
    expect(collection.body.data).toEqual({ allow: ['POST'] });
    const record = await service.request('OPTIONS', '/data/category/tools');
    expect(record.headers.get('allow')).toBe('GET, HEAD');
    const wrong = await service.request('POST', '/data/category/tools', { body: { data: {} } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    // An entity without restrictions still lists every method.
    const product = await service.request('OPTIONS', '/data/product/a');
    expect(product.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE');
    // recordCounts is allowed exactly when the list is.
    const counts = await service.request('OPTIONS', '/entity/category/recordCounts');
    expect(counts.status).toBe(200);
    expect(counts.headers.get('allow')).toBe('');
    expect(counts.body.data).toEqual({ allow: [] });
    const productCounts = await service.request('OPTIONS', '/entity/product/recordCounts');
    expect(productCounts.headers.get('allow')).toBe('GET, HEAD');
  });

  it('OPTIONS of an unknown entity answers 404 like its other methods', async () => {
    for (const path of [
      '/data/nope',
      '/data/nope/1',
      '/entity/nope',
      '/entity/nope/recordCounts',
    ]) {
      const response = await service.request('OPTIONS', path);
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual({
        status: 'error',
        error: { reason: 'Entity NOPE not found' },
      });
    }
    expect((await service.request('OPTIONS', '/entity/category')).headers.get('allow')).toBe(
      'GET, HEAD',
    );
  });

  it('reports the effective configuration on /entity/{entity}', async () => {
    const response = await service.request('GET', '/entity/category');
    expect(response.body.data.restConfig).toEqual({
      allowedMethods: ['GET_BYID', 'NEW'],
      getListStrategy: 'ALL',
    });
    expect(response.body.data.schema.entity.name).toBe('CATEGORY');
  });
});

describe('START_LIMIT paging, defaultOrder, maxWindow and allowedOrderingFields', () => {
  it('applies defaultLimit and defaultOrder when the request has neither', async () => {
    const response = await service.request('GET', '/data/product');
    expect(response.status).toBe(200);
    expect(response.body.data.map((record: { code: string }) => record.code)).toEqual(['a', 'c']);
    expect(response.body.meta).toMatchObject({ start: 0, limit: 2, next: expect.any(String) });
  });

  it('follows meta.next to the rest of the default order', async () => {
    const first = await service.request('GET', '/data/product');
    const second = await service.request(
      'GET',
      `/data/product?cursor=${encodeURIComponent(first.body.meta.next)}`,
    );
    expect(second.body.data.map((record: { code: string }) => record.code)).toEqual(['d', 'b']);
    expect(second.body.meta.next).toBeUndefined();
  });

  it('rejects a window beyond maxWindow with 400 naming it', async () => {
    const response = await service.request('GET', '/data/product?start=4&limit=2');
    expect(response.status).toBe(400);
    expect(response.body.error.reason).toMatch(/maximum window of 5/);
    expect((await service.request('GET', '/data/product?start=3&limit=2')).status).toBe(200);
  });

  it('rejects orderBy on a field outside allowedOrderingFields', async () => {
    const response = await service.request('GET', '/data/product?orderBy=stock');
    expect(response.status).toBe(400);
    expect(response.body.error.reason).toMatch(/orderBy.*stock/);
    const allowed = await service.request('GET', '/data/product?orderBy=name&limit=5');
    expect(allowed.body.data.map((record: { code: string }) => record.code)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });
});
