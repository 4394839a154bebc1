/**
 * Access control end to end (SPEC §8) on the `access` fixture (fixtures/access/access.yaml),
 * defined once and run against every storage driver: `access.test.ts` (SQLite) and
 * `access.postgres.test.ts`. The matrix: callers (anonymous, JWT principals with and without
 * roles, an API key as X-API-Key and as a Bearer token, a wrong key both ways) × every HTTP method
 * (GET, HEAD, PUT, PATCH, DELETE, POST, recordCounts) of a listed entity with an owner rule, of a
 * listed public-read entity and of an unlisted entity, each answer checked exactly. Then creating
 * through PUT and PATCH, bad tokens, and the owner rule with filters, counts, offset and cursor
 * paging.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, type AccessMethod } from '@entity-gen/runtime';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

export const SECRET = 'a-test-secret-that-is-long-enough-for-hs256';
export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'entity-gen-tests';
const API_KEY = 'ci-key-0123456789abcdef';

/** The authenticator of the suite's service: an HS256 secret and one API key (`ci`, editor). */
export function suiteAuthenticator(): Authenticator {
  return new Authenticator({
    jwt: {
      key: { kind: 'secret', secret: new TextEncoder().encode(SECRET) },
      issuer: ISSUER,
      audience: AUDIENCE,
      rolesClaim: 'roles',
      clockToleranceSeconds: 0,
    },
    apiKeys: [
      {
        name: 'ci',
        sha256: createHash('sha256').update(API_KEY).digest(),
        roles: ['editor'],
      },
    ],
  });
}

/** A signed token for `subject` with `roles`; `claims` override the defaults. */
export async function token(
  subject: string,
  roles: readonly string[],
  options: { secret?: string; issuer?: string; audience?: string; exp?: number; nbf?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ roles: [...roles] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(options.exp ?? now + 600);
  if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

type Caller =
  | 'anonymous'
  | 'alice'
  | 'bob'
  | 'editor'
  | 'reviewer'
  | 'admin'
  | 'apiKey'
  | 'apiKeyBearer'
  | 'wrongKey'
  | 'wrongKeyBearer';

/** Whether each caller may call each method of each entity, from fixtures/access/access.yaml. */
const RULES: Record<string, Record<AccessMethod, readonly string[]>> = {
  PRODUCT: {
    GET_LIST: ['public'],
    GET_BYID: ['public'],
    NEW: ['editor', 'admin'],
    UPDATE: ['editor', 'admin', 'reviewer'],
    DELETE: ['admin'],
  },
  ORDER: {
    GET_LIST: ['authenticated'],
    GET_BYID: ['authenticated'],
    NEW: ['authenticated'],
    UPDATE: ['authenticated'],
    DELETE: ['admin'],
  },
  AUDIT: {
    GET_LIST: ['admin'],
    GET_BYID: ['admin'],
    NEW: ['admin'],
    UPDATE: ['admin'],
    DELETE: ['admin'],
  },
};

/** The callers with valid credentials: their subject and roles. */
const PRINCIPALS: Record<
  Exclude<Caller, 'anonymous' | 'wrongKey' | 'wrongKeyBearer'>,
  { subject: string; roles: readonly string[] }
> = {
  alice: { subject: 'alice', roles: [] },
  bob: { subject: 'bob', roles: [] },
  editor: { subject: 'editor', roles: ['editor'] },
  reviewer: { subject: 'reviewer', roles: ['reviewer'] },
  admin: { subject: 'admin', roles: ['admin'] },
  apiKey: { subject: 'ci', roles: ['editor'] },
  apiKeyBearer: { subject: 'ci', roles: ['editor'] },
};

/**
 * How a refused call must be answered: its status, its reason and, for a 401, its
 * `WWW-Authenticate` challenge; `undefined` when the caller may call the method.
 */
function refusal(
  caller: Caller,
  entity: string,
  method: AccessMethod,
): { status: 401 | 403; reason: string; challenge?: string } | undefined {
  // Credentials that do not verify are refused everywhere, public methods included.
  if (caller === 'wrongKey' || caller === 'wrongKeyBearer')
    return {
      status: 401,
      reason: 'Authentication required',
      challenge: 'Bearer error="invalid_token"',
    };
  const roles = RULES[entity]![method];
  if (roles.includes('public')) return undefined;
  if (caller === 'anonymous')
    return {
      status: 401,
      reason: 'Authentication required',
      challenge: 'Bearer realm="entity-gen", X-API-Key',
    };
  if (roles.includes('authenticated')) return undefined;
  if (PRINCIPALS[caller].roles.some((role) => roles.includes(role))) return undefined;
  return { status: 403, reason: `Role required for ${method} on Entity ${entity}` };
}

/** The records one caller's row of the matrix works with, per entity. */
function matrixRecords(
  entity: string,
  caller: Caller,
  index: number,
): {
  key: string;
  id: string;
  seed: Record<string, unknown>;
  replacement: Record<string, unknown>;
  patch: Record<string, unknown>;
  fresh: Record<string, unknown>;
} {
  // ORDER records belong to the caller (owner rule), so that they may see them.
  const subject =
    caller in PRINCIPALS ? PRINCIPALS[caller as keyof typeof PRINCIPALS].subject : 'nobody';
  if (entity === 'PRODUCT') {
    const id = `${caller}-p`;
    return {
      key: 'code',
      id,
      seed: { code: id, name: 'Thing', price: '1.5' },
      replacement: { code: id, name: 'Replaced', price: '2' },
      patch: { name: 'Changed' },
      fresh: { code: `${id}-new`, name: 'New', price: '3' },
    };
  }
  if (entity === 'ORDER') {
    const id = `${caller}-o`;
    return {
      key: 'id',
      id,
      seed: { id, customer: subject, total: '2' },
      replacement: { id, customer: subject, total: '3' },
      patch: { status: 'PAID' },
      fresh: { id: `${id}-new`, customer: subject, total: '4' },
    };
  }
  const id = 100 + index;
  return {
    key: 'id',
    id: String(id),
    seed: { id, note: 'seeded' },
    replacement: { id, note: 'replaced' },
    patch: { note: 'changed' },
    fresh: { id: id + 50, note: 'new' },
  };
}

/**
 * Registers the cases under `describe(label)`; the service is generated into
 * `test/output/e2e-access-<label>` and booted on a fresh driver from `makeDriver()`.
 */
export function describeAccessSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    const headers: Partial<Record<Caller, Record<string, string>>> = {};
    const as = (caller: Caller): Record<string, string> => headers[caller] ?? {};
    /** A JWT principal with `subject` and `roles`, as request headers. */
    const bearer = async (
      subject: string,
      roles: readonly string[] = [],
    ): Promise<Record<string, string>> => ({
      Authorization: `Bearer ${await token(subject, roles)}`,
    });

    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('access', {
        folder: `e2e-access-${label}`,
        auth: suiteAuthenticator(),
        ...(driver === undefined ? {} : { driver }),
      });
      for (const caller of ['alice', 'bob', 'editor', 'reviewer', 'admin'] as const)
        headers[caller] = await bearer(PRINCIPALS[caller].subject, PRINCIPALS[caller].roles);
      headers.apiKey = { 'X-API-Key': API_KEY };
      headers.apiKeyBearer = { Authorization: `Bearer ${API_KEY}` };
      headers.wrongKey = { 'X-API-Key': `${API_KEY}-wrong` };
      headers.wrongKeyBearer = { Authorization: 'Bearer not-the-key' };
    });
    afterAll(async () => {
      // (undefined when beforeAll failed; its error is the one to report)
      await service?.close();
    });

    describe('roles per entity and method', () => {
      const callers: Caller[] = [
        'anonymous',
        'alice',
        'editor',
        'reviewer',
        'admin',
        'apiKey',
        'apiKeyBearer',
        'wrongKey',
        'wrongKeyBearer',
      ];
      for (const entity of ['PRODUCT', 'ORDER', 'AUDIT']) {
        it.each(callers)(`%s on ${entity}: every method answers exactly`, async (caller) => {
          const records = matrixRecords(entity, caller, callers.indexOf(caller));
          const path = `/data/${entity.toLowerCase()}`;
          const recordPath = `${path}/${records.id}`;
          const filter = `?${records.key}=${records.id}`;
          /**
           * Sends one request and checks its answer: a refused call is exactly the 401 or 403 of
           * the rules; an allowed one is a 200 whose `data` is `want` (a HEAD: no body at all).
           * Returns whether the call was allowed.
           */
          const call = async (
            method: AccessMethod,
            http: string,
            target: string,
            want: unknown,
            body?: unknown,
          ): Promise<boolean> => {
            const response = await service.request(http, target, {
              headers: as(caller),
              ...(body === undefined ? {} : { body: { data: body } }),
            });
            const what = `${caller} ${http} ${target}: ${response.status} ${response.text}`;
            const refused = refusal(caller, entity, method);
            if (refused === undefined) {
              expect(response.status, what).toBe(200);
              if (http === 'HEAD') expect(response.text, what).toBe('');
              else expect(response.body.data, what).toEqual(want);
              return true;
            }
            expect(response.status, what).toBe(refused.status);
            if (http !== 'HEAD')
              expect(response.body, what).toEqual({
                status: 'error',
                error: { reason: refused.reason },
              });
            expect(response.headers.get('www-authenticate') ?? undefined, what).toBe(
              refused.challenge,
            );
            return false;
          };
          // Seed the record as admin so that reads and writes have something to act on.
          const seeded = await service.request('PUT', recordPath, {
            body: { data: records.seed },
            headers: as('admin'),
          });
          expect(seeded.status, seeded.text).toBe(200);
          let current: Record<string, unknown> = records.seed;
          await call('GET_LIST', 'GET', `${path}${filter}`, [current]);
          await call('GET_LIST', 'HEAD', `${path}${filter}`, undefined);
          await call('GET_LIST', 'GET', `/entity/${entity.toLowerCase()}/recordCounts${filter}`, {
            count: 1,
          });
          await call('GET_BYID', 'GET', recordPath, current);
          await call('GET_BYID', 'HEAD', recordPath, undefined);
          if (await call('UPDATE', 'PUT', recordPath, records.replacement, records.replacement))
            current = records.replacement;
          const patched = { ...current, ...records.patch };
          if (await call('UPDATE', 'PATCH', recordPath, patched, records.patch)) current = patched;
          await call('DELETE', 'DELETE', recordPath, current);
          await call('NEW', 'POST', path, records.fresh, records.fresh);
          // Whatever is left is removed again, so each caller starts from the same state.
          for (const created of [records.seed, records.fresh]) {
            const id = String(created[records.key]);
            await service.request('DELETE', `${path}/${id}`, { headers: as('admin') });
          }
        });
      }

      it('a wrong key is a 401 on the metadata routes too, as X-API-Key and as a Bearer token', async () => {
        for (const caller of ['wrongKey', 'wrongKeyBearer'] as const) {
          for (const path of ['/entity', '/entity/product', '/summary']) {
            const response = await service.request('GET', path, { headers: as(caller) });
            expect(response.status, `${caller} ${path}`).toBe(401);
            expect(response.body.error.reason).toBe('Authentication required');
            expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
          }
        }
      });

      it('/entity and /summary show only the entities the caller may list; /health is public', async () => {
        const names = async (caller: Caller): Promise<string[]> =>
          Object.keys((await service.request('GET', '/entity', { headers: as(caller) })).body.data);
        expect(await names('anonymous')).toEqual(['NOTE', 'PRODUCT', 'SETTINGS']);
        expect(await names('alice')).toEqual(['NOTE', 'ORDER', 'PRODUCT', 'SETTINGS', 'WISHLIST']);
        expect(await names('admin')).toEqual([
          'AUDIT',
          'CUSTOMER',
          'NOTE',
          'ORDER',
          'PRODUCT',
          'SETTINGS',
          'WISHLIST',
        ]);
        expect(
          (await service.request('GET', '/entity/audit', { headers: as('alice') })).status,
        ).toBe(404);
        expect(
          (await service.request('GET', '/entity/audit', { headers: as('admin') })).status,
        ).toBe(200);
        const summary = await service.request('GET', '/summary', { headers: as('alice') });
        expect(Object.keys(summary.body.data.entities).sort()).toEqual([
          'NOTE',
          'ORDER',
          'PRODUCT',
          'SETTINGS',
          'WISHLIST',
        ]);
        const health = await service.request('GET', '/health', {
          headers: { Authorization: 'Bearer not-a-key' },
        });
        expect(health.status).toBe(200);
      });
    });

    describe('creating through PUT and PATCH needs NEW as well as UPDATE', () => {
      it('a role with UPDATE but not NEW replaces and patches records but cannot create one', async () => {
        const created = await service.request('PUT', '/data/product/rv1', {
          body: { data: { code: 'rv1', name: 'Thing', price: '1' } },
          headers: as('editor'),
        });
        expect(created.status, created.text).toBe(200);
        const replaced = await service.request('PUT', '/data/product/rv1', {
          body: { data: { code: 'rv1', name: 'Fixed', price: '2' } },
          headers: as('reviewer'),
        });
        expect(replaced.status, replaced.text).toBe(200);
        expect(replaced.body.data).toEqual({ code: 'rv1', name: 'Fixed', price: '2' });
        const patched = await service.request('PATCH', '/data/product/rv1', {
          body: { data: { price: '3' } },
          headers: as('reviewer'),
        });
        expect(patched.body.data).toEqual({ code: 'rv1', name: 'Fixed', price: '3' });

        const refused = await service.request('PUT', '/data/product/rv2', {
          body: { data: { code: 'rv2', name: 'Sneaked in', price: '1' } },
          headers: as('reviewer'),
        });
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({
          status: 'error',
          error: { reason: 'Role required for NEW on Entity PRODUCT' },
        });
        expect((await service.request('GET', '/data/product/rv2')).status).toBe(404);
        // PATCH of an absent record of an ordinary entity creates nothing: it stays a 404.
        const patchAbsent = await service.request('PATCH', '/data/product/rv2', {
          body: { data: { name: 'x' } },
          headers: as('reviewer'),
        });
        expect(patchAbsent.status).toBe(404);
      });

      it('PUT and PATCH create the single record only for a role with NEW', async () => {
        for (const [method, data] of [
          ['PUT', { shopName: 'Corner shop' }],
          ['PATCH', { currency: 'EUR' }],
        ] as const) {
          const refused = await service.request(method, '/data/settings/current', {
            body: { data },
            headers: as('editor'),
          });
          expect(refused.status, `${method} ${refused.text}`).toBe(403);
          expect(refused.body.error.reason).toBe('Role required for NEW on Entity SETTINGS');
        }
        expect((await service.request('GET', '/data/settings')).body.data).toEqual([]);
        const created = await service.request('PATCH', '/data/settings/current', {
          body: { data: { shopName: 'Corner shop' } },
          headers: as('admin'),
        });
        expect(created.status, created.text).toBe(200);
        // Once it exists, UPDATE is enough.
        const patched = await service.request('PATCH', '/data/settings/current', {
          body: { data: { currency: 'EUR' } },
          headers: as('editor'),
        });
        expect(patched.status, patched.text).toBe(200);
        expect(patched.body.data).toEqual({ shopName: 'Corner shop', currency: 'EUR' });
        const replaced = await service.request('PUT', '/data/settings/current', {
          body: { data: { shopName: 'Big shop' } },
          headers: as('editor'),
        });
        expect(replaced.body.data).toEqual({ shopName: 'Big shop' });
      });

      it('a PUT that creates a record follows the owner rule', async () => {
        const theirs = await service.request('PUT', '/data/order/pc1', {
          body: { data: { id: 'pc1', customer: 'bob', total: '1' } },
          headers: as('alice'),
        });
        expect(theirs.status).toBe(403);
        expect(theirs.body.error.reason).toBe(
          'Field customer of Entity ORDER must be your own subject: you may not write records of another owner',
        );
        expect(
          (await service.request('GET', '/data/order/pc1', { headers: as('admin') })).status,
        ).toBe(404);
        const mine = await service.request('PUT', '/data/order/pc1', {
          body: { data: { id: 'pc1', total: '1' } },
          headers: as('alice'),
        });
        expect(mine.status, mine.text).toBe(200);
        expect(mine.body.data).toEqual({ id: 'pc1', customer: 'alice', total: '1' });
        await service.request('DELETE', '/data/order/pc1', { headers: as('admin') });
      });
    });

    describe('bad tokens are a 401', () => {
      const now = Math.floor(Date.now() / 1000);
      const cases: [string, () => Promise<string>][] = [
        ['expired', () => token('alice', [], { exp: now - 60 })],
        ['not yet valid', () => token('alice', [], { nbf: now + 600 })],
        ['a bad signature', () => token('alice', [], { secret: `${SECRET}-other` })],
        ['the wrong issuer', () => token('alice', [], { issuer: 'https://evil.test' })],
        ['the wrong audience', () => token('alice', [], { audience: 'someone-else' })],
        [
          'alg none',
          async () => {
            const part = (value: object): string =>
              Buffer.from(JSON.stringify(value)).toString('base64url');
            return `${part({ alg: 'none', typ: 'JWT' })}.${part({
              sub: 'admin',
              roles: ['admin'],
              iss: ISSUER,
              aud: AUDIENCE,
              exp: now + 600,
            })}.`;
          },
        ],
        [
          'RS256 when HS256 is configured',
          async () => {
            const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
            return new SignJWT({ roles: ['admin'] })
              .setProtectedHeader({ alg: 'RS256' })
              .setSubject('admin')
              .setIssuer(ISSUER)
              .setAudience(AUDIENCE)
              .setExpirationTime(now + 600)
              .sign(privateKey);
          },
        ],
        ['malformed', async () => 'abc.def.ghi'],
      ];
      it.each(cases)('%s', async (_name, make) => {
        const response = await service.request('GET', '/data/order', {
          headers: { Authorization: `Bearer ${await make()}` },
        });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({
          status: 'error',
          error: { reason: 'Authentication required' },
        });
        // Invalid credentials are refused on public methods too, never silently ignored.
        const product = await service.request('GET', '/data/product', {
          headers: { Authorization: `Bearer ${await make()}` },
        });
        expect(product.status).toBe(401);
      });
    });

    describe('the owner rule', () => {
      beforeAll(async () => {
        const orders = [];
        for (let n = 1; n <= 7; n++) {
          const customer = n <= 5 ? 'alice' : 'bob';
          orders.push({
            id: `o${n}`,
            customer,
            total: String(n * 10),
            status: n % 2 === 0 ? 'PAID' : 'NEW',
          });
        }
        const seeded = await service.request('POST', '/data/order', {
          body: { data: orders },
          headers: as('admin'),
        });
        expect(seeded.status, seeded.text).toBe(200);
      });

      it('lists and counts only the caller’s own records, filtered in the query', async () => {
        const list = await service.request('GET', '/data/order?orderBy=id', {
          headers: as('alice'),
        });
        expect(list.body.data.map((order: { id: string }) => order.id)).toEqual([
          'o1',
          'o2',
          'o3',
          'o4',
          'o5',
        ]);
        const paid = await service.request('GET', '/data/order?status=PAID&orderBy=id', {
          headers: as('alice'),
        });
        expect(paid.body.data.map((order: { id: string }) => order.id)).toEqual(['o2', 'o4']);
        const count = await service.request('GET', '/entity/order/recordCounts', {
          headers: as('alice'),
        });
        expect(count.body.data).toEqual({ count: 5 });
        const bob = await service.request('GET', '/entity/order/recordCounts?status=NEW', {
          headers: as('bob'),
        });
        expect(bob.body.data).toEqual({ count: 1 });
        const admin = await service.request('GET', '/entity/order/recordCounts', {
          headers: as('admin'),
        });
        expect(admin.body.data.count).toBeGreaterThanOrEqual(7);
      });

      it('pages exactly through the caller’s records with offsets and with cursors', async () => {
        const page = async (query: string): Promise<{ ids: string[]; next?: string }> => {
          const response = await service.request('GET', `/data/order?orderBy=-total${query}`, {
            headers: as('alice'),
          });
          expect(response.status, response.text).toBe(200);
          return {
            ids: response.body.data.map((order: { id: string }) => order.id),
            next: response.body.meta.next,
          };
        };
        expect((await page('&start=2&limit=2')).ids).toEqual(['o3', 'o2']);
        const seen: string[] = [];
        let cursor: string | undefined;
        let next = await page('&limit=2');
        for (;;) {
          seen.push(...next.ids);
          cursor = next.next;
          if (cursor === undefined) break;
          next = await page(`&limit=2&cursor=${encodeURIComponent(cursor)}`);
        }
        expect(seen).toEqual(['o5', 'o4', 'o3', 'o2', 'o1']);
      });

      it('someone else’s record reads, changes and replaces as 404', async () => {
        for (const [method, body] of [
          ['GET', undefined],
          ['PATCH', { data: { status: 'PAID' } }],
          ['PUT', { data: { id: 'o6', total: '1' } }],
        ] as const) {
          const response = await service.request(method, '/data/order/o6', {
            headers: as('alice'),
            ...(body === undefined ? {} : { body }),
          });
          expect(response.status, `${method} ${response.text}`).toBe(404);
          expect(response.body.error.reason).toBe('EntityRecord with id o6 not found for ORDER');
        }
        const own = await service.request('GET', '/data/order/o6', { headers: as('bob') });
        expect(own.body.data).toMatchObject({ id: 'o6', customer: 'bob', total: '60' });
      });

      it('an insert gets the caller as owner; another owner or changing the owner is a 403', async () => {
        const mine = await service.request('POST', '/data/order', {
          body: { data: { id: 'a1', total: '5' } },
          headers: as('alice'),
        });
        expect(mine.status, mine.text).toBe(200);
        expect(mine.body.data).toEqual({ id: 'a1', customer: 'alice', total: '5' });
        const theirs = await service.request('POST', '/data/order', {
          body: {
            data: [
              { id: 'a2', total: '5' },
              { id: 'a3', customer: 'bob', total: '5' },
            ],
          },
          headers: as('alice'),
        });
        expect(theirs.status).toBe(403);
        expect(theirs.body.error.reason).toBe(
          'Field customer of Entity ORDER must be your own subject: you may not write records of another owner',
        );
        expect(
          (await service.request('GET', '/data/order/a2', { headers: as('alice') })).status,
        ).toBe(404);
        const move = await service.request('PATCH', '/data/order/a1', {
          body: { data: { customer: 'bob' } },
          headers: as('alice'),
        });
        expect(move.status).toBe(403);
        const put = await service.request('PUT', '/data/order/a4', {
          body: { data: { id: 'a4', total: '9' } },
          headers: as('alice'),
        });
        expect(put.status, put.text).toBe(200);
        expect(put.body.data.customer).toBe('alice');
        // An admin is not restricted by the owner rule.
        const admin = await service.request('PATCH', '/data/order/a1', {
          body: { data: { customer: 'bob' } },
          headers: as('admin'),
        });
        expect(admin.status).toBe(200);
        expect(
          (await service.request('GET', '/data/order/a1', { headers: as('bob') })).status,
        ).toBe(200);
      });
    });

    describe('the owner rule on DELETE, on INTEGER and ENTITY_REF owner fields, and for anonymous callers', () => {
      // Subjects of principals whose records are owned by a numeric id.
      let u42: Record<string, string>;
      let u43: Record<string, string>;
      const ids = (response: { body: { data: { id: string }[] } }): string[] =>
        response.body.data.map((record) => record.id);
      const notFound = (entity: string, id: string): unknown => ({
        status: 'error',
        error: { reason: `EntityRecord with id ${id} not found for ${entity}` },
      });
      beforeAll(async () => {
        u42 = await bearer('42');
        u43 = await bearer('43');
        const seeds: [string, unknown[]][] = [
          [
            'customer',
            [
              { id: 42, name: 'Ann' },
              { id: 43, name: 'Ben' },
            ],
          ],
          [
            'note',
            [
              { id: 'n1', author: 42, text: 'mine' },
              { id: 'n2', author: 43, text: 'theirs' },
              { id: 'n3', author: 42, text: 'also mine' },
            ],
          ],
          [
            'wishlist',
            [
              { id: 'w1', customer: 42, item: 'saw' },
              { id: 'w2', customer: 43, item: 'drill' },
            ],
          ],
        ];
        for (const [entity, records] of seeds) {
          const seeded = await service.request('POST', `/data/${entity}`, {
            body: { data: records },
            headers: as('admin'),
          });
          expect(seeded.status, seeded.text).toBe(200);
        }
      });

      it('an INTEGER owner field holds the subject as an integer; a non-admin owner deletes only its own records', async () => {
        const list = await service.request('GET', '/data/note?orderBy=id', { headers: u42 });
        expect(list.body.data).toEqual([
          { id: 'n1', author: 42, text: 'mine' },
          { id: 'n3', author: 42, text: 'also mine' },
        ]);
        const count = await service.request('GET', '/entity/note/recordCounts', { headers: u43 });
        expect(count.body.data).toEqual({ count: 1 });
        const theirs = await service.request('GET', '/data/note/n1', { headers: u43 });
        expect(theirs.status).toBe(404);
        expect(theirs.body).toEqual(notFound('NOTE', 'n1'));

        const inserted = await service.request('POST', '/data/note', {
          body: { data: { id: 'n4', text: 'new' } },
          headers: u42,
        });
        expect(inserted.status, inserted.text).toBe(200);
        expect(inserted.body.data).toEqual({ id: 'n4', author: 42, text: 'new' });
        const other = await service.request('POST', '/data/note', {
          body: { data: { id: 'n5', author: 43, text: 'forged' } },
          headers: u42,
        });
        expect(other.status).toBe(403);
        expect(other.body.error.reason).toBe(
          'Field author of Entity NOTE must be your own subject: you may not write records of another owner',
        );
        const move = await service.request('PATCH', '/data/note/n1', {
          body: { data: { author: 43 } },
          headers: u42,
        });
        expect(move.status).toBe(403);

        const deleteTheirs = await service.request('DELETE', '/data/note/n2', { headers: u42 });
        expect(deleteTheirs.status).toBe(404);
        expect(deleteTheirs.body).toEqual(notFound('NOTE', 'n2'));
        expect(
          (await service.request('GET', '/data/note/n2', { headers: as('admin') })).body.data,
        ).toEqual({ id: 'n2', author: 43, text: 'theirs' });
        const deleteMine = await service.request('DELETE', '/data/note/n1', { headers: u42 });
        expect(deleteMine.status, deleteMine.text).toBe(200);
        expect(deleteMine.body.data).toEqual({ id: 'n1', author: 42, text: 'mine' });
        expect(
          (await service.request('GET', '/data/note/n1', { headers: as('admin') })).status,
        ).toBe(404);
      });

      it('a subject that is not an integer owns no record of an INTEGER owner field', async () => {
        const list = await service.request('GET', '/data/note', { headers: as('alice') });
        expect(list.status).toBe(200);
        expect(list.body.data).toEqual([]);
        const insert = await service.request('POST', '/data/note', {
          body: { data: { id: 'n6', text: 'x' } },
          headers: as('alice'),
        });
        expect(insert.status).toBe(403);
        expect(insert.body.error.reason).toBe(
          'Field author of Entity NOTE holds integer ids: your subject alice cannot own a record',
        );
      });

      it('an ENTITY_REF owner field (to an INTEGER key) is compared as the referenced id', async () => {
        const list = await service.request('GET', '/data/wishlist', { headers: u42 });
        expect(list.body.data).toEqual([{ id: 'w1', customer: 42, item: 'saw' }]);
        const count = await service.request('GET', '/entity/wishlist/recordCounts', {
          headers: u42,
        });
        expect(count.body.data).toEqual({ count: 1 });
        for (const [method, body] of [
          ['GET', undefined],
          ['PATCH', { data: { item: 'hammer' } }],
          ['PUT', { data: { id: 'w2', item: 'hammer' } }],
          ['DELETE', undefined],
        ] as const) {
          const response = await service.request(method, '/data/wishlist/w2', {
            headers: u42,
            ...(body === undefined ? {} : { body }),
          });
          expect(response.status, `${method} ${response.text}`).toBe(404);
          expect(response.body).toEqual(notFound('WISHLIST', 'w2'));
        }
        const inserted = await service.request('POST', '/data/wishlist', {
          body: { data: { id: 'w3', item: 'plane' } },
          headers: u42,
        });
        expect(inserted.body.data).toEqual({ id: 'w3', customer: 42, item: 'plane' });
        // The referenced id may be written as text, as everywhere an ENTITY_REF is converted.
        const asText = await service.request('POST', '/data/wishlist', {
          body: { data: { id: 'w4', customer: '42', item: 'file' } },
          headers: u42,
        });
        expect(asText.body.data).toEqual({ id: 'w4', customer: 42, item: 'file' });
        const other = await service.request('POST', '/data/wishlist', {
          body: { data: { id: 'w5', customer: 43, item: 'forged' } },
          headers: u42,
        });
        expect(other.status).toBe(403);
        const move = await service.request('PATCH', '/data/wishlist/w1', {
          body: { data: { customer: 43 } },
          headers: u42,
        });
        expect(move.status).toBe(403);
        const deleted = await service.request('DELETE', '/data/wishlist/w1', { headers: u42 });
        expect(deleted.body.data).toEqual({ id: 'w1', customer: 42, item: 'saw' });
        expect(
          ids(await service.request('GET', '/data/wishlist?orderBy=id', { headers: u42 })),
        ).toEqual(['w3', 'w4']);
        expect(
          ids(await service.request('GET', '/data/wishlist?orderBy=id', { headers: u43 })),
        ).toEqual(['w2']);
      });

      it('an anonymous caller on the public methods of an owned entity owns nothing: it sees no record and cannot write one', async () => {
        const list = await service.request('GET', '/data/note');
        expect(list.status).toBe(200);
        expect(list.body.data).toEqual([]);
        const count = await service.request('GET', '/entity/note/recordCounts');
        expect(count.body.data).toEqual({ count: 0 });
        const read = await service.request('GET', '/data/note/n3');
        expect(read.status).toBe(404);
        expect(read.body).toEqual(notFound('NOTE', 'n3'));
        for (const data of [
          { id: 'n7', text: 'anonymous' },
          { id: 'n7', author: 42, text: 'posing as 42' },
        ]) {
          const insert = await service.request('POST', '/data/note', { body: { data } });
          expect(insert.status).toBe(403);
          expect(insert.body.error.reason).toBe(
            'Records of Entity NOTE belong to their author: sign in to write one',
          );
        }
        // UPDATE is not public: the usual 401.
        const patch = await service.request('PATCH', '/data/note/n3', {
          body: { data: { text: 'x' } },
        });
        expect(patch.status).toBe(401);
        expect(
          (await service.request('GET', '/data/note/n7', { headers: as('admin') })).status,
        ).toBe(404);
        expect((await service.request('GET', '/data/note/n3', { headers: u42 })).body.data).toEqual(
          { id: 'n3', author: 42, text: 'also mine' },
        );
      });
    });
  });
}
