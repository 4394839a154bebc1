/**
 * Credentials and their configuration (SPEC §8): `authFromEnv` refuses configurations that cannot
 * work with a one-line reason, PEM public keys and JWKS URLs verify tokens (a JWKS server started
 * here rotates its keys), API keys match by hash, CORS answers only the configured origins, and a
 * service without access rules warns once at start.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { exportJWK, SignJWT, type JWK } from 'jose';
import Koa from 'koa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authFromEnv,
  Authenticator,
  corsMiddleware,
  createService,
  parseCorsOrigins,
  readApiKeys,
} from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { serve } from '../helpers/http.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eg-auth-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SECRET = 'x'.repeat(32);
const { publicKey: RSA_PUBLIC, privateKey: RSA_PRIVATE } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
});
const RSA_PEM = RSA_PUBLIC.export({ type: 'spki', format: 'pem' }).toString();

describe('authFromEnv', () => {
  it.each<[string, Record<string, string>, RegExp]>([
    [
      'two ways to verify JWTs',
      { JWT_SECRET: SECRET, JWT_JWKS_URL: 'https://keys.example/jwks.json' },
      /^JWT_SECRET and JWT_JWKS_URL are both set; set only one way to verify JWTs$/,
    ],
    ['a short secret', { JWT_SECRET: 'short' }, /^JWT_SECRET must be at least 32 bytes long/],
    ['a key that is not PEM', { JWT_PUBLIC_KEY: 'abc' }, /^JWT_PUBLIC_KEY is not a PEM public key/],
    ['a JWKS URL that is no URL', { JWT_JWKS_URL: 'keys' }, /^JWT_JWKS_URL is not a URL/],
    ['a JWKS URL of another scheme', { JWT_JWKS_URL: 'file:///keys' }, /must be an http\(s\) URL/],
    [
      'an issuer without a key',
      { JWT_ISSUER: 'https://i' },
      /^JWT_ISSUER is set but no JWT key is/,
    ],
    [
      'a clock tolerance that is no number',
      { JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE_SECONDS: 'soon' },
      /^JWT_CLOCK_TOLERANCE_SECONDS must be a whole number/,
    ],
  ])('refuses %s', async (_name, env, reason) => {
    await expect(authFromEnv(env)).rejects.toThrow(reason);
  });

  it('accepts no credentials at all (only public methods then work)', async () => {
    const auth = await authFromEnv({});
    expect(auth.configured).toBe(false);
    await expect(auth.authenticate('', '')).resolves.toBeUndefined();
    await expect(auth.authenticate('Bearer a.b.c', '')).rejects.toMatchObject({ status: 401 });
  });

  it('verifies RS256 tokens with a PEM public key (escaped newlines too)', async () => {
    const auth = await authFromEnv({
      JWT_PUBLIC_KEY: RSA_PEM.replace(/\n/g, '\\n'),
      JWT_ROLES_CLAIM: 'realm_access.roles',
    });
    const jwt = await new SignJWT({ realm_access: { roles: ['editor'] } })
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject('carol')
      .setExpirationTime('5m')
      .sign(RSA_PRIVATE);
    await expect(auth.authenticate(`Bearer ${jwt}`, '')).resolves.toEqual({
      subject: 'carol',
      roles: ['editor'],
      via: 'jwt',
    });
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('carol')
      .sign(new TextEncoder().encode(SECRET));
    await expect(auth.authenticate(`Bearer ${hs}`, '')).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a token without a subject', async () => {
    const auth = await authFromEnv({ JWT_SECRET: SECRET });
    const jwt = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    await expect(auth.authenticate(`Bearer ${jwt}`, '')).rejects.toMatchObject({ status: 401 });
  });
});

describe('API keys', () => {
  const hash = (key: string): string => createHash('sha256').update(key).digest('hex');

  it.each<[string, string, RegExp]>([
    ['not JSON', '{', /is not JSON/],
    ['not a list', '{}', /must hold a JSON list/],
    ['an entry without a hash', '[{"name":"ci","roles":[]}]', /entry 1 \(ci\) needs "sha256"/],
    [
      'a repeated name',
      `[{"name":"a","sha256":"${hash('1')}","roles":[]},{"name":"a","sha256":"${hash('2')}","roles":[]}]`,
      /entry 2 repeats the name "a"/,
    ],
    [
      'roles that are not strings',
      `[{"name":"a","sha256":"${hash('1')}","roles":[1]}]`,
      /needs "roles"/,
    ],
  ])('refuses a keys file that is %s', async (_name, text, reason) => {
    const file = join(dir, `keys-${Math.random()}.json`);
    await writeFile(file, text);
    await expect(readApiKeys(file)).rejects.toThrow(reason);
    await expect(authFromEnv({ API_KEYS_FILE: file })).rejects.toThrow(reason);
  });

  it('refuses a keys file that does not exist', async () => {
    await expect(authFromEnv({ API_KEYS_FILE: join(dir, 'missing.json') })).rejects.toThrow(
      /cannot be read \(ENOENT\)/,
    );
  });

  it('finds the key by its hash, as X-API-Key or Bearer, and refuses any other', async () => {
    const file = join(dir, 'keys.json');
    await writeFile(
      file,
      JSON.stringify([
        { name: 'ci', sha256: hash('key-one'), roles: ['editor'] },
        { name: 'ops', sha256: hash('key-two').toUpperCase(), roles: ['admin'] },
      ]),
    );
    const auth = await authFromEnv({ API_KEYS_FILE: file });
    await expect(auth.authenticate('', 'key-two')).resolves.toEqual({
      subject: 'ops',
      roles: ['admin'],
      via: 'api-key',
    });
    await expect(auth.authenticate('Bearer key-one', '')).resolves.toMatchObject({ subject: 'ci' });
    await expect(auth.authenticate('', 'key-three')).rejects.toMatchObject({ status: 401 });
    await expect(auth.authenticate('Basic a2V5LW9uZQ==', '')).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('JWKS', () => {
  let server: Server;
  let keys: JWK[] = [];
  let fetches = 0;
  beforeAll(async () => {
    server = createServer((_request, response) => {
      fetches++;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const pair = async (
    kid: string,
  ): Promise<{ jwk: JWK; sign: (sub: string) => Promise<string> }> => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
    return {
      jwk,
      sign: (sub) =>
        new SignJWT({ roles: ['editor'] })
          .setProtectedHeader({ alg: 'ES256', kid })
          .setSubject(sub)
          .setExpirationTime('5m')
          .sign(privateKey),
    };
  };

  it('fetches the keys, caches them, and follows a rotation', async () => {
    const { port } = server.address() as AddressInfo;
    const auth = await authFromEnv({
      JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
      JWT_JWKS_COOLDOWN_MS: '0',
    });
    const first = await pair('k1');
    const second = await pair('k2');
    keys = [first.jwk];
    await expect(
      auth.authenticate(`Bearer ${await first.sign('dana')}`, ''),
    ).resolves.toMatchObject({
      subject: 'dana',
    });
    await expect(
      auth.authenticate(`Bearer ${await first.sign('dana')}`, ''),
    ).resolves.toBeDefined();
    expect(fetches).toBe(1); // cached
    // Rotation: the issuer signs with a new key and withdraws the old one.
    keys = [second.jwk];
    await expect(
      auth.authenticate(`Bearer ${await second.sign('erin')}`, ''),
    ).resolves.toMatchObject({
      subject: 'erin',
    });
    expect(fetches).toBe(2);
    await expect(auth.authenticate(`Bearer ${await first.sign('dana')}`, '')).rejects.toMatchObject(
      {
        status: 401,
      },
    );
  });
});

describe('CORS', () => {
  it('parses CORS_ORIGINS and refuses what is not an origin', () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins(' https://a.example, http://localhost:5173 ')).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    expect(() => parseCorsOrigins('https://a.example/app')).toThrow(/give the origin only/);
    expect(() => parseCorsOrigins('a.example')).toThrow(/not an origin/);
  });

  it('answers the listed origins only, preflights included', async () => {
    const app = new Koa();
    app.use(corsMiddleware(['https://app.example']));
    app.use((ctx) => {
      ctx.body = { ok: true };
    });
    const server = await serve(app.callback());
    try {
      const allowed = await server.request('GET', '/', {
        headers: { Origin: 'https://app.example' },
      });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('ETag');
      const other = await server.request('GET', '/', {
        headers: { Origin: 'https://evil.example' },
      });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await server.request('OPTIONS', '/data/product', {
        headers: {
          Origin: 'https://app.example',
          'Access-Control-Request-Method': 'PUT',
          'Access-Control-Request-Headers': 'authorization, if-match',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
    } finally {
      await server.close();
    }
  });
});

describe('a service without access rules', () => {
  it('says once, at start, that everything is public', () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info', base: undefined },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    createService(
      { schemaHash: 'x', entities: [] },
      { driver: new SqliteDriver({ filename: ':memory:' }), logger, auth: new Authenticator() },
    );
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'no access rules: every method of every entity is public (generate with --access <file> to protect them)',
      }),
    ]);
  });
});
