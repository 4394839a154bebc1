/**
 * Scaling past one process: two instances of the built `shop` service (`node dist/server.js`) on
 * different ports share one PostgreSQL database (`DATABASE_URL=postgres://…?schema=<fresh>`).
 * Concurrent inserts of one key spread over both give exactly one success; list inserts that fail
 * halfway (key clash, or a value the database itself refuses) leave no rows, as seen from both.
 *
 * Runs when `TEST_DATABASE_URL` names a database; the schema is dropped afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import {
  buildFixtureService,
  startServiceProcess,
  waitFor,
  type ServiceProcess,
} from '../helpers/built-service.js';
import { createProductCategory, productInput } from './suites/crud.js';
import { TestSchemas, withSchema } from './suites/postgres.js';

describeWith(POSTGRES, 'two service instances on one PostgreSQL', (databaseUrl) => {
  describe('two service instances on one PostgreSQL', () => {
    const schemas = new TestSchemas(databaseUrl, 'e2e_scaling');
    const instances: ServiceProcess[] = [];
    let a: ServiceProcess;
    let b: ServiceProcess;

    beforeAll(async () => {
      const dir = await buildFixtureService('shop', 'scaling-shop');
      const url = withSchema(databaseUrl, schemas.next());
      // Both start at once: their table creation races on the same fresh schema.
      const started = await Promise.allSettled(
        [0, 1].map(() => startServiceProcess(dir, { DATABASE_URL: `${url}&pool_max=5` })),
      );
      for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
      for (const result of started) if (result.status === 'rejected') throw result.reason;
      [a, b] = instances as [ServiceProcess, ServiceProcess];
      for (const instance of instances) {
        await waitFor(
          `${instance.url}/health answers 200`,
          async () => (await instance.request('GET', '/health')).status === 200,
          20_000,
        );
      }
      await createProductCategory(a);
    }, 180_000);

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
      await schemas.dropAll();
    });

    const count = async (instance: ServiceProcess): Promise<number> => {
      const response = await instance.request('GET', '/entity/product/recordCounts');
      expect(response.status, response.text).toBe(200);
      return response.body.data.count as number;
    };

    it('runs two processes on different ports against one database', () => {
      expect(a.port).not.toBe(b.port);
      expect(a.alive() && b.alive()).toBe(true);
      expect(a.logs.join('')).toContain('"storage":"postgres"');
    });

    it('lets exactly one of 50 concurrent inserts of one key, alternating between instances, succeed', async () => {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 === 0 ? a : b).request('POST', '/data/product', {
            body: { data: productInput('race') },
          }),
        ),
      );
      const ok = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status === 400);
      expect(ok, responses.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
      expect(refused).toHaveLength(49);
      for (const response of refused) {
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'Logical key race for Entity PRODUCT already exists' },
        });
      }
      // Both instances see the one stored record.
      for (const instance of [a, b]) {
        const read = await instance.request('GET', '/data/product/race');
        expect(read.status).toBe(200);
        expect(read.body.meta).toEqual(ok[0]!.body.meta);
      }
    });

    it('shares writes: what one instance inserts, the other reads, updates and counts', async () => {
      const before = await count(a);
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? a : b).request('POST', '/data/product', {
            body: { data: productInput(`shared-${i}`) },
          }),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(40).fill(200));
      expect(await count(a)).toBe(before + 40);
      expect(await count(b)).toBe(before + 40);
      const patched = await b.request('PATCH', '/data/product/shared-0', {
        body: { data: { stock: 1 } },
      });
      expect(patched.status).toBe(200);
      const read = await a.request('GET', '/data/product/shared-0');
      expect(read.body.data.stock).toBe(1);
      expect(read.headers.get('etag')).toBe('"2"');
      // A paging cursor issued by one instance continues on the other (no server state).
      const codes = (response: { body: { data: { code: string }[] } }): string[] =>
        response.body.data.map((record) => record.code);
      const first = await a.request('GET', '/data/product?code[STARTS_WITH]=shared-&limit=15');
      expect(first.status, first.text).toBe(200);
      expect(first.body.meta.next).toEqual(expect.any(String));
      const second = await b.request(
        'GET',
        `/data/product?code[STARTS_WITH]=shared-&cursor=${encodeURIComponent(first.body.meta.next)}`,
      );
      expect(second.status, second.text).toBe(200);
      const all = await b.request('GET', '/data/product?code[STARTS_WITH]=shared-&limit=30');
      expect([...codes(first), ...codes(second)]).toEqual(codes(all));
    });

    it('leaves no rows when record #6 of a list clashes with a stored key', async () => {
      const before = await count(a);
      const data = Array.from({ length: 10 }, (_, i) => productInput(`clash-${i}`));
      data[6] = productInput('race');
      const response = await b.request('POST', '/data/product', { body: { data } });
      expect(response.status).toBe(400);
      expect(response.body.error).toEqual({
        reason: 'Logical key race for Entity PRODUCT already exists',
        issues: [
          {
            path: [6],
            code: 'duplicate_key',
            message: 'Logical key race for Entity PRODUCT already exists',
          },
        ],
      });
      expect(await count(a)).toBe(before);
      expect(await count(b)).toBe(before);
      for (const i of [0, 5, 9]) {
        expect((await a.request('GET', `/data/product/clash-${i}`)).status).toBe(404);
      }
    });

    it('leaves no rows when the database itself refuses record #3 of a list (NUL in JSON)', async () => {
      // PostgreSQL cannot store U+0000 in JSONB (SQLSTATE 22P05). STRING fields refuse it during
      // validation; inside an ANY value it passes validation, so the refusal comes from the
      // database in the middle of the batch: a 400 naming the problem, and nothing stored.
      const before = await count(a);
      const data = Array.from({ length: 5 }, (_, i) => productInput(`nul-${i}`));
      data[3] = { ...productInput('nul-3'), attributes: { note: 'bad\u0000note' } };
      const response = await a.request('POST', '/data/product', { body: { data } });
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.reason).toBe(
        'A value contains a character the database cannot store (U+0000, the NUL character)',
      );
      expect(await count(a)).toBe(before);
      expect(await count(b)).toBe(before);
      expect((await b.request('GET', '/data/product/nul-0')).status).toBe(404);
    });
  });
});
