/**
 * `POST /batch` (SPEC §12) on the `shop` fixture, run on every driver: `batch.test.ts` (SQLite)
 * and `batch.postgres.test.ts`.
 */
import type { StorageDriver } from '@entity-gen/runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';

export type MakeDriver = () => StorageDriver | undefined | Promise<StorageDriver | undefined>;

export function describeBatchSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    let run = 0;
    let p = '';

    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-batch-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });
    beforeEach(() => {
      p = `b${++run}-`;
    });

    async function batch(operations: unknown[]) {
      return await service.request('POST', '/batch', { body: { operations } });
    }
    async function status(path: string): Promise<number> {
      return (await service.request('GET', path)).status;
    }

    it('runs operations across entities in order, each seeing the ones before', async () => {
      await service.request('POST', '/data/category', { body: { data: { name: `${p}old` } } });
      const before = (await service.driver.changes!.bounds()).last;
      const response = await batch([
        { method: 'POST', path: '/data/category', body: { data: { name: `${p}tools` } } },
        {
          method: 'POST',
          path: '/data/product',
          body: { data: { code: `${p}a`, name: 'A', category: `${p}tools`, price: '1' } },
        },
        {
          method: 'patch',
          path: `/data/product/${p}a`,
          body: { data: { price: '2' } },
          ifMatch: '"1"',
        },
        { method: 'GET', path: `/data/product?category=${p}tools` },
        { method: 'DELETE', path: `/data/category/${p}old` },
      ]);
      expect(response.status).toBe(200);
      const results = response.body.data;
      expect(results.map((r: { status: number }) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(results[0]).toMatchObject({ data: { name: `${p}tools` }, etag: '"1"' });
      expect(results[2]).toMatchObject({ data: { price: '2' }, etag: '"2"' });
      expect(results[3].data).toEqual([
        { code: `${p}a`, name: 'A', category: `${p}tools`, price: '2' },
      ]);
      expect(results[4].data).toEqual({
        name: `${p}old`,
        // Set by the server (SPEC §16).
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(await status(`/data/product/${p}a`)).toBe(200);
      expect(await status(`/data/category/${p}old`)).toBe(404);
      const changes = await service.driver.changes!.read(before, 100);
      expect(changes.map((change) => [change.op, change.entity])).toEqual([
        ['created', 'CATEGORY'],
        ['created', 'PRODUCT'],
        ['updated', 'PRODUCT'],
        ['deleted', 'CATEGORY'],
      ]);
      expect(changes.map((change) => change.seq - changes[0]!.seq)).toEqual([0, 1, 2, 3]);
    });

    it('a batch whose last operation fails writes nothing and names that operation', async () => {
      const before = (await service.driver.changes!.bounds()).last;
      const response = await batch([
        { method: 'POST', path: '/data/category', body: { data: { name: `${p}tools` } } },
        { method: 'PUT', path: `/data/category/${p}toys`, body: { data: { name: `${p}toys` } } },
        { method: 'PATCH', path: `/data/product/${p}nope`, body: { data: { price: '2' } } },
      ]);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        status: 'error',
        error: {
          reason: `Operation 2 (PATCH /data/product/${p}nope): EntityRecord with id ${p}nope not found for PRODUCT`,
          operation: 2,
        },
      });
      expect(await status(`/data/category/${p}tools`)).toBe(404);
      expect(await status(`/data/category/${p}toys`)).toBe(404);
      expect(await service.driver.changes!.read(before, 100)).toEqual([]);
    });

    it('applies each operation’s conditional header and validation as on its own', async () => {
      await service.request('POST', '/data/category', { body: { data: { name: `${p}c` } } });
      const stale = await batch([
        { method: 'DELETE', path: `/data/category/${p}c`, ifMatch: '"7"' },
      ]);
      expect(stale.status).toBe(412);
      expect(stale.body.error.operation).toBe(0);
      const invalid = await batch([
        { method: 'POST', path: '/data/category', body: { data: { name: `${p}d` } } },
        { method: 'POST', path: '/data/product', body: { data: { code: `${p}x`, price: 'x' } } },
      ]);
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.operation).toBe(1);
      expect(invalid.body.error.reason).toMatch(/^Operation 1 \(POST \/data\/product\): /);
      expect(invalid.body.error.issues.length).toBeGreaterThan(0);
      expect(await status(`/data/category/${p}c`)).toBe(200);
      expect(await status(`/data/category/${p}d`)).toBe(404);
    });

    it('runs a batch of 1000 operations in one transaction', async () => {
      const operations = Array.from({ length: 1000 }, (_, index) => ({
        method: 'POST',
        path: '/data/category',
        body: { data: { name: `${p}${index}` } },
      }));
      const response = await batch(operations);
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(1000);
      const count = await service.request(
        'GET',
        `/entity/category/recordCounts?name[STARTS_WITH]=${p}`,
      );
      expect(count.body.data.count).toBe(1000);
    });

    it('refuses more than 1000 operations and malformed operations, writing nothing', async () => {
      const tooMany = await batch(
        Array.from({ length: 1001 }, () => ({ method: 'GET', path: '/data/category' })),
      );
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error.reason).toBe('A batch holds at most 1000 operations, not 1001');
      const outside = await batch([{ method: 'GET', path: '/health' }]);
      expect(outside.status).toBe(400);
      const unknownEntity = await batch([{ method: 'GET', path: '/data/nothing' }]);
      expect(unknownEntity.status).toBe(404);
      expect(unknownEntity.body.error).toEqual({
        reason: 'Operation 0 (GET /data/nothing): Entity NOTHING not found',
        operation: 0,
      });
      const shape = await service.request('POST', '/batch', { body: { ops: [] } });
      expect(shape.status).toBe(400);
      const empty = await batch([]);
      expect(empty.body).toEqual({ status: 'success', data: [] });
    });
  });
}
