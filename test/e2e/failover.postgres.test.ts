/**
 * The built `shop` service (`node dist/server.js`) while its PostgreSQL goes away and comes back,
 * against a PRIVATE PostgreSQL instance the test creates (initdb into a temporary directory, own
 * port; see test/helpers/private-postgres.ts), never the shared server.
 *
 * - While the database is down every storage-backed request, /health included, answers 503 with
 *   `{"status":"error","error":{"reason":"Storage unavailable"}}`, and the process stays up.
 * - Once it is back the same process serves again (no restart), and every write it acknowledged
 *   with 200 — before, during and after the outage — is readable.
 * - Started while the database is down, the service listens, answers 503, and becomes healthy
 *   when the database starts (startServer retries open() with backoff).
 * - If the database that comes back cannot be used (it is ahead of the code), the service logs
 *   that as fatal and its server.ts ends the process with exit code 1 and the reason.
 *
 * Runs whenever the PostgreSQL server binaries are available (independent of TEST_DATABASE_URL);
 * otherwise it is skipped, saying why (and fails under CI: test/helpers/environment.ts). Each case
 * starts against a running server, in a schema of its own, with the writes it checks made by
 * itself: the cases do not depend on one another's order.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import {
  buildFixtureService,
  sleep,
  startServiceProcess,
  waitFor,
  type ServiceProcess,
} from '../helpers/built-service.js';
import type { JsonResponse } from '../helpers/http.js';
import { describeWith, privatePostgres } from '../helpers/environment.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { createProductCategory, productInput } from './suites/crud.js';

const UNAVAILABLE = { status: 'error', error: { reason: 'Storage unavailable' } };

describeWith(
  privatePostgres(),
  'the service during a PostgreSQL outage (private instance)',
  (env) => {
    let instance: PrivatePostgres | undefined;
    let dir: string;
    const services: ServiceProcess[] = [];
    let schemas = 0;

    beforeAll(async () => {
      instance = await PrivatePostgres.create(env, 'eg-pg-failover-');
      instance.start();
      dir = await buildFixtureService('shop', 'failover-shop');
    }, 180_000);

    // Whatever the previous case did, each one starts against a running, answering server.
    beforeEach(() => {
      instance!.thaw();
      if (!instance!.isRunning()) instance!.start();
    });

    afterAll(async () => {
      await Promise.allSettled(services.map((service) => service.stop(5000)));
      instance?.destroy();
    });

    /** A schema of the case's own on the private instance. */
    const freshSchema = (): string => `failover_${++schemas}`;

    /**
     * Starts the service on the private instance, in `schema`; a short connect timeout keeps 503s
     * quick.
     */
    const start = async (schema: string): Promise<ServiceProcess> => {
      const service = await startServiceProcess(dir, {
        DATABASE_URL: `${instance!.url}?schema=${schema}&connect_timeout_ms=2000&pool_max=4`,
      });
      services.push(service);
      return service;
    };

    const expectUnavailable = (response: JsonResponse, what: string): void => {
      expect(response.status, `${what}: ${response.text}`).toBe(503);
      expect(response.body, what).toEqual(UNAVAILABLE);
    };

    /** Every storage-backed kind of request answers the 503 envelope. */
    const expectAllUnavailable = async (service: ServiceProcess): Promise<void> => {
      expectUnavailable(await service.request('GET', '/health'), 'GET /health');
      expectUnavailable(
        await service.request('POST', '/data/product', { body: { data: productInput('down') } }),
        'POST one',
      );
      expectUnavailable(
        await service.request('POST', '/data/product', {
          body: { data: [productInput('down-1'), productInput('down-2')] },
        }),
        'POST list',
      );
      expectUnavailable(await service.request('GET', '/data/product/p-fast-0-0'), 'GET by id');
      expectUnavailable(await service.request('GET', '/data/product?limit=5'), 'GET list');
      expectUnavailable(
        await service.request('PATCH', '/data/product/p-fast-0-0', {
          body: { data: { stock: 1 } },
        }),
        'PATCH',
      );
      expectUnavailable(await service.request('DELETE', '/data/product/none'), 'DELETE');
      expectUnavailable(
        await service.request('GET', '/entity/product/recordCounts'),
        'recordCounts',
      );
      expectUnavailable(await service.request('GET', '/summary'), 'GET /summary');
      // Routes that need no storage keep working.
      expect((await service.request('GET', '/entity/product')).status).toBe(200);
    };

    /** Every id of `acknowledged` is readable. */
    const expectAcknowledgedReadable = async (
      service: ServiceProcess,
      acknowledged: readonly string[],
    ): Promise<void> => {
      const missing: string[] = [];
      for (const id of acknowledged) {
        const response = await service.request('GET', `/data/product/${id}`);
        if (response.status !== 200 || response.body.data.code !== id) {
          missing.push(`${id}: ${response.status}`);
        }
      }
      expect(missing).toEqual([]);
    };

    // fast: an orchestrated stop (sessions terminated, open transactions rolled back);
    // immediate: a crash (connections reset, recovery from the WAL at the next start).
    it.each(['fast', 'immediate'] as const)(
      'answers 503 while PostgreSQL is down (%s stop), recovers without a restart and loses no acknowledged write',
      async (mode) => {
        const service = await start(freshSchema());
        await waitFor(
          '/health 200',
          async () => (await service.request('GET', '/health')).status === 200,
          20_000,
        );
        await createProductCategory(service);

        // Three writers insert one new key at a time, a fourth inserts lists of 10, back to back
        // through the whole test; every 200 is remembered, and so is every list that failed.
        const statuses = new Map<number, number>();
        const acknowledged: string[] = [];
        const unexpected: string[] = [];
        const failedLists: string[][] = [];
        let writing = true;
        const writer = async (worker: number): Promise<void> => {
          for (let n = 0; writing; n++) {
            const ids =
              worker === 3
                ? Array.from({ length: 10 }, (_, i) => `p-${mode}-${worker}-${n}-${i}`)
                : [`p-${mode}-${worker}-${n}`];
            const data = worker === 3 ? ids.map(productInput) : productInput(ids[0]!);
            const response = await service
              .request('POST', '/data/product', { body: { data } })
              .catch((error: unknown) => ({ status: -1, text: String(error), body: undefined }));
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            if (response.status === 200) acknowledged.push(...ids);
            else if (worker === 3) failedLists.push(ids);
            if (
              response.status !== 200 &&
              (response.status !== 503 ||
                JSON.stringify(response.body) !== JSON.stringify(UNAVAILABLE))
            ) {
              unexpected.push(`${ids[0]}: ${response.status} ${response.text}`);
            }
            if (response.status !== 200) await sleep(20);
          }
        };
        const writers = [0, 1, 2, 3].map(writer);
        try {
          await waitFor(
            'some acknowledged writes',
            async () => acknowledged.length >= 40,
            20_000,
            20,
          );

          instance!.stop(mode);
          await waitFor('a 503 while down', async () => statuses.has(503), 10_000, 20);
          await expectAllUnavailable(service);
          expect(service.alive()).toBe(true);

          instance!.start();
          await waitFor(
            '/health 200 after the restart of PostgreSQL',
            async () => (await service.request('GET', '/health')).status === 200,
            30_000,
          );
          const before = acknowledged.length;
          await waitFor(
            'writes acknowledged again',
            async () => acknowledged.length >= before + 40,
            20_000,
            20,
          );
        } finally {
          writing = false;
          await Promise.all(writers);
        }
        expect(unexpected).toEqual([]);
        expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
        expect(service.alive()).toBe(true);
        await expectAcknowledgedReadable(service, acknowledged);
        // A list cut off by the outage was stored completely or not at all.
        expect(failedLists.length).toBeGreaterThan(0);
        for (const ids of failedLists) {
          let present = 0;
          for (const id of ids) {
            if ((await service.request('GET', `/data/product/${id}`)).status === 200) present++;
          }
          expect([0, ids.length], `list starting with ${ids[0]}`).toContain(present);
        }
        const counted = await service.request('GET', '/entity/product/recordCounts');
        // Writes cut off by the shutdown may or may not have committed; acknowledged ones did.
        expect(counted.body.data.count).toBeGreaterThanOrEqual(acknowledged.length);
        expect(await service.stop()).toBe(0);
      },
    );

    it('starts while PostgreSQL is down, answers 503 without crashing, and becomes healthy once it starts', async () => {
      // A record written before the outage, by an earlier process on the same schema.
      const schema = freshSchema();
      const earlier = await start(schema);
      await waitFor(
        '/health 200',
        async () => (await earlier.request('GET', '/health')).status === 200,
        20_000,
      );
      await createProductCategory(earlier);
      const written = await earlier.request('POST', '/data/product', {
        body: { data: productInput('before-outage') },
      });
      expect(written.status, written.text).toBe(200);
      expect(await earlier.stop()).toBe(0);

      instance!.stop('fast');
      const service = await start(schema);
      await expectAllUnavailable(service);
      // It keeps retrying (two retries logged) and stays up, answering 503 meanwhile.
      const retries = (): number =>
        service.logs.join('').split('storage unavailable, retrying').length - 1;
      await waitFor('a second retry of the storage', async () => retries() >= 2, 30_000);
      expect(service.alive()).toBe(true);
      expectUnavailable(await service.request('GET', '/health'), 'GET /health later');

      instance!.start();
      await waitFor(
        '/health 200 once PostgreSQL runs',
        async () => (await service.request('GET', '/health')).status === 200,
        30_000,
      );
      expect(service.alive()).toBe(true);
      await expectAcknowledgedReadable(service, ['before-outage']);
      const inserted = await service.request('POST', '/data/product', {
        body: { data: productInput('after-start') },
      });
      expect(inserted.status, inserted.text).toBe(200);
      expect(await service.stop()).toBe(0);
    });

    it('exits with code 1 and the reason when the database that comes back is ahead of the code', async () => {
      // A schema whose migration table records a migration this service does not have.
      const schema = `${freshSchema()}_ahead_of_the_code`;
      const newer = new PostgresDriver({ url: instance!.url, env: {}, schema });
      await newer.open([], { migrations: [{ id: '9999_from-a-newer-version_0000000a', sql: '' }] });
      await newer.close();
      instance!.stop('fast');
      const service = await startServiceProcess(dir, {
        DATABASE_URL: `${instance!.url}?schema=${schema}&connect_timeout_ms=2000`,
      });
      services.push(service);
      await waitFor(
        'a retry while PostgreSQL is down',
        async () => service.logs.join('').includes('storage unavailable, retrying'),
        20_000,
      );
      instance!.start();
      await waitFor('the process to end', async () => !service.alive(), 30_000);
      expect(await service.stop()).toBe(1);
      const logs = service.logs.join('');
      expect(logs).toContain('storage cannot be used: The database is ahead of the code');
      expect(logs).toMatch(/^The service stopped: The database is ahead of the code/m);
    });
  },
);
