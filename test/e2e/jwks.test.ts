/**
 * JWT verification against a JWKS server, end to end: the `access` fixture's service booted with
 * the credentials `JWT_JWKS_URL` configures (read by `authFromEnv`, as a started service reads
 * them), and a real JWKS server on 127.0.0.1 publishing keys made here. An identity provider
 * rotates its keys without the service restarting: a token signed with a new key is accepted once
 * the server publishes it, a withdrawn key no longer verifies, and a token naming a key id the
 * server does not publish is refused. With the default cooldown, tokens with made-up key ids do
 * not make the service fetch the keys again and again.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authFromEnv } from '@entity-gen/runtime';
import { bootFixture, type BootedService } from '../helpers/service.js';

const ISSUER = 'https://id.example';
const AUDIENCE = 'shop-api';

/** A signing key of the identity provider: its public JWK (with `kid`) and its private key. */
interface SigningKey {
  readonly kid: string;
  readonly jwk: JWK;
  readonly privateKey: KeyObject;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
    privateKey,
  };
}

/** A token for `subject` signed by `key`, naming `kid` (the key's own id unless given). */
function sign(
  key: SigningKey,
  subject: string,
  roles: string[] = [],
  kid = key.kid,
): Promise<string> {
  return new SignJWT({ roles })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setSubject(subject)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key.privateKey);
}

/** A JWKS server: publishes `keys` at /jwks.json and counts the fetches. */
class JwksServer {
  keys: SigningKey[] = [];
  fetches = 0;
  private readonly server: Server = createServer((request, response) => {
    if (request.url !== '/jwks.json') {
      response.statusCode = 404;
      response.end();
      return;
    }
    this.fetches++;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: this.keys.map((key) => key.jwk) }));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/jwks.json`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let jwks: JwksServer;
let jwksUrl: string;
let first: SigningKey;
let second: SigningKey;
let stranger: SigningKey;

beforeAll(async () => {
  jwks = new JwksServer();
  jwksUrl = await jwks.start();
  [first, second, stranger] = await Promise.all([
    signingKey('key-2026-01'),
    signingKey('key-2026-02'),
    signingKey('key-elsewhere'),
  ]);
});
afterAll(async () => {
  await jwks?.close();
});

/** The access fixture's service, verifying JWTs with the keys of the JWKS server. */
async function bootWithJwks(folder: string, env: Record<string, string>): Promise<BootedService> {
  const auth = await authFromEnv({
    JWT_JWKS_URL: jwksUrl,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    ...env,
  });
  return bootFixture('access', { folder, auth });
}

/** `GET /data/order` (authenticated, owner rule) with `token`. */
function orders(service: BootedService, token: string): ReturnType<BootedService['request']> {
  return service.request('GET', '/data/order', {
    headers: { Authorization: `Bearer ${token}` },
  });
}

function expectRefused(response: Awaited<ReturnType<BootedService['request']>>): void {
  expect(response.status, response.text).toBe(401);
  expect(response.body).toEqual({
    status: 'error',
    error: { reason: 'Authentication required' },
  });
  expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
}

describe('a service verifying tokens with a JWKS URL (no cooldown between fetches)', () => {
  let service: BootedService;
  beforeAll(async () => {
    jwks.keys = [first];
    service = await bootWithJwks('e2e-jwks-rotation', { JWT_JWKS_COOLDOWN_MS: '0' });
    // Orders of two customers, written by an admin whose token the first key signs.
    for (const [id, customer] of [
      ['o-alice', 'alice'],
      ['o-bob', 'bob'],
    ]) {
      const created = await service.request('POST', '/data/order', {
        body: { data: { id, customer, total: '10' } },
        headers: { Authorization: `Bearer ${await sign(first, 'root', ['admin'])}` },
      });
      expect(created.status, created.text).toBe(200);
    }
  });
  afterAll(async () => {
    await service?.close();
  });
  beforeEach(() => {
    jwks.keys = [first];
  });

  it('accepts a token signed with a published key, with its subject and roles', async () => {
    const alice = await orders(service, await sign(first, 'alice'));
    expect(alice.status, alice.text).toBe(200);
    // The owner rule applies to the token's subject: alice sees her order only.
    expect(alice.body.data).toEqual([{ id: 'o-alice', customer: 'alice', total: '10' }]);
    const admin = await orders(service, await sign(first, 'root', ['admin']));
    expect(admin.body.data.map((order: { id: string }) => order.id)).toEqual(['o-alice', 'o-bob']);
  });

  it('follows a key rotation without a restart: the new key verifies, the withdrawn one no longer does', async () => {
    expect((await orders(service, await sign(first, 'alice'))).status).toBe(200);
    const before = jwks.fetches;
    // The provider publishes its new key and withdraws the old one.
    jwks.keys = [second];
    const rotated = await orders(service, await sign(second, 'alice'));
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.data).toEqual([{ id: 'o-alice', customer: 'alice', total: '10' }]);
    expect(jwks.fetches).toBeGreaterThan(before);
    expectRefused(await orders(service, await sign(first, 'alice')));
  });

  it('accepts tokens of both keys while the server publishes both (a rotation in progress)', async () => {
    jwks.keys = [first, second];
    expect((await orders(service, await sign(second, 'bob'))).status).toBe(200);
    expect((await orders(service, await sign(first, 'bob'))).status).toBe(200);
  });

  it('refuses a token naming a key id the server does not publish', async () => {
    expectRefused(await orders(service, await sign(stranger, 'alice')));
    // Also when it is signed by a published key: the named key is what counts.
    expectRefused(await orders(service, await sign(first, 'alice', [], 'key-unknown')));
  });

  it('refuses a token naming a published key id but signed by another key', async () => {
    expectRefused(await orders(service, await sign(stranger, 'alice', ['admin'], first.kid)));
  });
});

describe('a service verifying tokens with a JWKS URL, with a cooldown between fetches', () => {
  let service: BootedService;
  beforeAll(async () => {
    jwks.keys = [first];
    // A cooldown far longer than the test, so that no fetch is due again while it runs.
    service = await bootWithJwks('e2e-jwks-cooldown', { JWT_JWKS_COOLDOWN_MS: '3600000' });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('does not fetch the keys again for every token with a made-up key id', async () => {
    expect((await orders(service, await sign(first, 'alice'))).status).toBe(200);
    const before = jwks.fetches;
    for (let i = 0; i < 5; i++)
      expectRefused(await orders(service, await sign(stranger, 'mallory', [], `made-up-${i}`)));
    // At most the one fetch that the first unknown key id may cause.
    expect(jwks.fetches - before).toBeLessThanOrEqual(1);
    // Tokens of the known key still verify from the cache.
    expect((await orders(service, await sign(first, 'alice'))).status).toBe(200);
  });
});
