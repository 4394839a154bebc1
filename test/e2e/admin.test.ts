/**
 * What the service does for the admin web app (docs/admin.md), without a browser: `GET /me` tells
 * the caller's rights per entity; `/admin` serves the built app under its Content-Security-Policy
 * with long-lived, content-named files; `ADMIN=off` removes it; and the whole app stays within
 * 250 KB gzipped. The app itself is tested in Chromium (test/browser/admin.test.ts).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnabledFromEnv, Authenticator, createLogger, startServer } from '@entity-gen/runtime';
import { serve } from '../helpers/http.js';
import { bootFixture, loadGenerated, type BootedService } from '../helpers/service.js';
import { generateFixtureInto } from '../helpers/generate.js';

const APP = fileURLToPath(new URL('../../runtime/dist/admin/', import.meta.url));
const EDITOR_KEY = 'editor-key-0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const SHOP_ACCESS = {
  name: 'shop-access',
  schemas: ['fixtures/shop/shop.yaml'],
  access: 'fixtures/shop/access.yaml',
};

function authenticator(): Authenticator {
  const key = (name: string, value: string, roles: string[]) => ({
    name,
    sha256: createHash('sha256').update(value).digest(),
    roles,
  });
  return new Authenticator({
    apiKeys: [key('editor', EDITOR_KEY, ['editor']), key('admin', ADMIN_KEY, ['admin'])],
  });
}

describe('the admin app as the service serves it', () => {
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture(SHOP_ACCESS, { folder: 'e2e-admin', auth: authenticator() });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('tells each caller what it may do per entity (GET /me)', async () => {
    const anonymous = await service.request('GET', '/me');
    expect(anonymous.body).toEqual({
      status: 'success',
      data: {
        subject: null,
        roles: [],
        accessRules: true,
        entities: {
          CATEGORY: ['GET_LIST', 'GET_BYID'],
          PRODUCT: ['GET_LIST', 'GET_BYID'],
          SHOP_SETTINGS: ['GET_LIST', 'GET_BYID'],
        },
      },
    });
    const editor = await service.request('GET', '/me', { headers: { 'X-API-Key': EDITOR_KEY } });
    expect(editor.body).toMatchObject({
      data: {
        subject: 'editor',
        roles: ['editor'],
        entities: {
          CATEGORY: ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE'],
          PRODUCT: ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE'],
          SHOP_SETTINGS: ['GET_LIST', 'GET_BYID'],
        },
      },
    });
    const admin = await service.request('GET', '/me', {
      headers: { Authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(admin.body).toMatchObject({
      data: {
        subject: 'admin',
        entities: { PRODUCT: ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'] },
      },
    });
    // Credentials that do not verify are a 401, as on every route.
    const wrong = await service.request('GET', '/me', { headers: { 'X-API-Key': 'nope' } });
    expect(wrong.status).toBe(401);
  });

  it('serves the page under its policy and the files for a year', async () => {
    const page = await fetch(`${service.url}/admin`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe');
    const html = await page.text();
    // No inline script or style: only files of the app, named by their content.
    expect(html).not.toMatch(/<script>|<style|style=/);
    const files = [...html.matchAll(/(?:src|href)="\/admin\/([^"]+)"/g)].map((match) => match[1]);
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file).toMatch(/^app-[0-9a-f]{12}\.(js|css)$/);
      const response = await fetch(`${service.url}/admin/${file}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Sent compressed to a client that accepts gzip (fetch does, and unpacks it).
      expect(response.headers.get('content-encoding')).toBe('gzip');
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
      const plain = await fetch(`${service.url}/admin/${file}`, {
        headers: { 'Accept-Encoding': 'identity' },
      });
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(await plain.text()).toBe(await response.text());
    }
    // The compressed copies are not files of their own.
    expect((await service.request('GET', `/admin/${files[0]}.gz`)).status).toBe(404);
    const unknown = await service.request('GET', '/admin/secrets.txt');
    expect(unknown.status).toBe(404);
    const traversal = await service.request('GET', '/admin/..%2Fpackage.json');
    expect(traversal.status).toBe(404);
  });

  it('leaves /admin out when the app is switched off, keeping /me', async () => {
    const app = service.createApp({
      driver: service.driver,
      logger: createLogger({ level: 'silent' }),
      admin: false,
    });
    const server = await serve(app.callback());
    try {
      const page = await server.request('GET', '/admin');
      expect(page.status).toBe(404);
      expect(page.body).toEqual({
        status: 'error',
        error: { reason: 'No route for GET /admin' },
      });
      expect((await server.request('GET', '/me')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('weighs at most 250 KB gzipped in total', () => {
    const files = readdirSync(APP);
    expect(files).toContain('index.html');
    const gzipped = files
      .filter((file) => !file.endsWith('.gz'))
      .reduce(
        (total, file) => total + gzipSync(readFileSync(join(APP, file)), { level: 9 }).length,
        0,
      );
    expect(gzipped).toBeLessThanOrEqual(250 * 1024);
  });
});

describe('ADMIN in the environment', () => {
  it('is on unless it says off, and refuses anything else', () => {
    expect(adminEnabledFromEnv({})).toBe(true);
    expect(adminEnabledFromEnv({ ADMIN: 'on' })).toBe(true);
    expect(adminEnabledFromEnv({ ADMIN: ' OFF ' })).toBe(false);
    expect(() => adminEnabledFromEnv({ ADMIN: 'no' })).toThrow('ADMIN must be on or off, not "no"');
  });

  it('switches the app off in a started service', async () => {
    const dir = await generateFixtureInto(SHOP_ACCESS, 'e2e-admin-off');
    const { createApp, tables } = await loadGenerated(dir);
    const running = await startServer({
      createApp,
      tables,
      port: 0,
      host: '127.0.0.1',
      databaseUrl: 'sqlite::memory:',
      env: { ADMIN: 'off' },
      logLevel: 'silent',
      migrationsDir: join(dir, 'migrations'),
    });
    try {
      const address = running.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const response = await fetch(`http://127.0.0.1:${port}/admin`);
      expect(response.status).toBe(404);
    } finally {
      await running.close();
    }
  });
});
