/**
 * The built `shop` service (`node dist/server.js`) never writes a DATABASE_URL password to its
 * logs: started against a PostgreSQL that cannot be reached, with the password in the user info,
 * in a `password=` parameter, or holding an unencoded `@`, it logs its retries and the 503s of
 * the outage (at debug level, every request), and the logs are searched for the password. With
 * `TEST_DATABASE_URL` set, the same holds for the `storage ready` line of a reachable server
 * (trust authentication ignores the password).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildFixtureService,
  startServiceProcess,
  waitFor,
  type ServiceProcess,
} from '../helpers/built-service.js';
import { freePort } from '../helpers/private-postgres.js';
import { TestSchemas } from './suites/postgres.js';
import { POSTGRES, skippedTitle, skipWithout } from '../helpers/environment.js';

let dir: string;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  dir = await buildFixtureService('shop', 'secrets-in-logs-shop');
}, 180_000);
afterAll(async () => {
  await Promise.allSettled(services.map((service) => service.stop(5000)));
});

async function start(databaseUrl: string): Promise<ServiceProcess> {
  const service = await startServiceProcess(dir, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'debug' });
  services.push(service);
  return service;
}

/** Every spelling of a secret that could show up in a log line. */
function spellings(secret: string): string[] {
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
}

describe('DATABASE_URL passwords in the logs', () => {
  it.each([
    [
      'in the user info',
      (port: number) => `postgres://app:Pw-Userinfo-77@127.0.0.1:${port}/shop`,
      'Pw-Userinfo-77',
    ],
    [
      'in a password parameter',
      (port: number) =>
        `postgres://app@127.0.0.1:${port}/shop?sslmode=disable&password=Pw-Param-88`,
      'Pw-Param-88',
    ],
    [
      'holding an unencoded @',
      (port: number) => `postgres://app:Pw-Before@After-99@127.0.0.1:${port}/shop`,
      'Pw-Before@After-99',
    ],
  ])('never appear while PostgreSQL is unreachable (password %s)', async (_where, url, secret) => {
    const port = await freePort(); // nothing listens there
    const service = await start(
      `${url(port)}${url(port).includes('?') ? '&' : '?'}connect_timeout_ms=500`,
    );
    const log = (): string => service.logs.join('');
    await waitFor(
      'a retry logged',
      async () => log().includes('storage unavailable, retrying'),
      10_000,
    );
    for (let n = 0; n < 5; n++) {
      expect((await service.request('GET', '/health')).status).toBe(503);
      expect((await service.request('GET', '/data/product?limit=5')).status).toBe(503);
      expect(
        (await service.request('POST', '/data/category', { body: { data: { name: 'x' } } })).status,
      ).toBe(503);
    }
    // Retries back off from 250 ms: a few more are logged meanwhile.
    await waitFor(
      'three retries logged',
      async () => log().split('storage unavailable, retrying').length > 3,
      15_000,
    );
    expect(await service.stop()).toBe(0);

    const text = log();
    for (const spelling of spellings(secret)) expect(text).not.toContain(spelling);
    // No half of a password around an @ either (both halves are long enough not to turn up by
    // chance in a random request id).
    for (const part of secret.split('@')) expect(text).not.toContain(part);
    // The logs did show the URL (masked) and the failed requests.
    expect(text).toContain('"storage":"postgres://app');
    expect(text).toContain('***');
    expect(text).toContain('"requestId"');
  });

  it.skipIf(skipWithout(POSTGRES))(
    skippedTitle('never appear once the storage is ready (TEST_DATABASE_URL)', POSTGRES),
    async () => {
      const schemas = new TestSchemas(POSTGRES.value, 'secrets_logs');
      try {
        const url = new URL(POSTGRES.value);
        url.password = 'Pw-Ready-55';
        url.searchParams.set('schema', schemas.next());
        const service = await start(url.toString());
        await waitFor(
          '/health 200',
          async () => (await service.request('GET', '/health')).status === 200,
          20_000,
        );
        expect(await service.stop()).toBe(0);
        const text = service.logs.join('');
        expect(text).toContain('storage ready');
        expect(text).not.toContain('Pw-Ready-55');
      } finally {
        await schemas.dropAll();
      }
    },
  );
});
