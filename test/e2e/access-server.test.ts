/**
 * The access fixture's service as users run it (`node dist/server.js`, see
 * helpers/built-service.ts): credentials that cannot work stop it at start with exit code 1 and
 * one line naming the problem, API keys, tokens and the JWT secret never reach its logs, and the
 * token recipe of its README works.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureService, startServiceProcess } from '../helpers/built-service.js';

const SECRET = 'a-process-test-secret-long-enough-for-hs256';
const API_KEY = 'process-test-key-0123456789abcdef';

/** The environment of the test run without any credential variable, so that none leaks in. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('JWT_') && name !== 'API_KEYS_FILE')
      env[name] = value;
  }
  return env;
}

/** Runs `node dist/server.js` in `dir` until it exits on its own (at most 30 s). */
function runToExit(
  dir: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['dist/server.js'],
      {
        cwd: dir,
        env: { ...cleanEnv(), DATABASE_URL: 'sqlite::memory:', PORT: '0', ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('the built access service', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await buildFixtureService('access', 'server-access');
    await writeFile(
      join(dir, 'keys.json'),
      JSON.stringify([
        {
          name: 'ci',
          sha256: createHash('sha256').update(API_KEY).digest('hex'),
          roles: ['editor'],
        },
      ]),
    );
    // A keys file written as YAML by mistake: several lines, not JSON (the JSON parser's message
    // quotes the start of the text, line breaks included).
    await writeFile(join(dir, 'keys.yaml'), 'ci:\n  sha256: abc\n  roles: [editor]\n');
  }, 120_000);

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'both JWT_SECRET and JWT_JWKS_URL',
      { JWT_SECRET: SECRET, JWT_JWKS_URL: 'https://keys.example/jwks.json' },
      /^The service could not start: JWT_SECRET and JWT_JWKS_URL are both set; set only one way to verify JWTs$/,
    ],
    [
      'an API_KEYS_FILE that does not parse',
      { API_KEYS_FILE: 'keys.yaml' },
      /^The service could not start: API_KEYS_FILE keys\.yaml is not JSON: .+$/,
    ],
    [
      'an API_KEYS_FILE that does not exist',
      { API_KEYS_FILE: 'missing.json' },
      /^The service could not start: API_KEYS_FILE missing\.json cannot be read \(ENOENT\)$/,
    ],
    [
      'a JWT_SECRET that is too short',
      { JWT_SECRET: 'short' },
      /^The service could not start: JWT_SECRET must be at least 32 bytes long/,
    ],
  ])('stops at start with exit code 1 and one line on %s', async (_name, env, line) => {
    const run = await runToExit(dir, env);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.split('\n');
    expect(lines, run.stderr).toHaveLength(2);
    expect(lines[0]).toMatch(line);
    expect(lines[1]).toBe('');
  });

  it('never writes API keys, bearer tokens or the JWT secret to its logs, even at trace level', async () => {
    const sign = (subject: string, roles: string[], expiresAt: number): Promise<string> =>
      new SignJWT({ roles })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(subject)
        .setExpirationTime(expiresAt)
        .sign(new TextEncoder().encode(SECRET));
    const now = Math.floor(Date.now() / 1000);
    const token = await sign('alice', [], now + 600);
    const expired = await sign('alice', [], now - 600);
    const forged = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .sign(new TextEncoder().encode(`${SECRET}-guessed`));
    const wrongKey = 'wrong-key-fedcba9876543210';
    const service = await startServiceProcess(dir, {
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'trace',
      JWT_SECRET: SECRET,
      API_KEYS_FILE: 'keys.json',
    });
    const calls: [string, string, Record<string, string>, unknown, number][] = [
      ['POST', '/data/product', { 'X-API-Key': API_KEY }, { code: 'p1', name: 'Saw' }, 200],
      ['GET', '/data/product/p1', { Authorization: `Bearer ${API_KEY}` }, undefined, 200],
      ['DELETE', '/data/product/p1', { 'X-API-Key': API_KEY }, undefined, 403],
      ['POST', '/data/order', { Authorization: `Bearer ${token}` }, { id: 'o1', total: 1 }, 200],
      ['GET', '/data/order/o1', { Authorization: `Bearer ${token}` }, undefined, 200],
      ['POST', '/data/order', { Authorization: `Bearer ${token}` }, { id: 'o2', total: 'x' }, 400],
      ['GET', '/data/audit', { Authorization: `Bearer ${token}` }, undefined, 403],
      ['GET', '/data/product', { 'X-API-Key': wrongKey }, undefined, 401],
      ['GET', '/data/product', { Authorization: `Bearer ${wrongKey}` }, undefined, 401],
      ['GET', '/data/order', { Authorization: `Bearer ${expired}` }, undefined, 401],
      ['GET', '/data/order', { Authorization: `Bearer ${forged}` }, undefined, 401],
      ['GET', '/entity', { Authorization: `Bearer ${token}` }, undefined, 200],
    ];
    try {
      for (const [method, path, headers, data, status] of calls) {
        const response = await fetch(`${service.url}${path}`, {
          method,
          headers: { ...headers, 'content-type': 'application/json' },
          ...(data === undefined ? {} : { body: JSON.stringify({ data }) }),
          signal: AbortSignal.timeout(15_000),
        });
        expect(response.status, `${method} ${path}: ${await response.text()}`).toBe(status);
      }
    } finally {
      expect(await service.stop()).toBe(0);
    }
    const logs = service.logs.join('');
    // The requests were logged (debug logs every request), so there was something to leak into.
    const requestLines = logs.split('\n').filter((line) => line.includes('"msg":"request"'));
    expect(requestLines).toHaveLength(calls.length);
    for (const secret of [API_KEY, wrongKey, token, expired, forged, SECRET]) {
      expect(logs).not.toContain(secret);
      // Not even the signature part of a token.
      const signature = secret.split('.')[2];
      if (signature !== undefined) expect(logs).not.toContain(signature);
    }
  });

  it('accepts the token its README tells how to make, as its README tells to send it', async () => {
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    const line = (start: string): string => {
      const found = readme.split('\n').find((candidate) => candidate.startsWith(start));
      if (found === undefined) throw new Error(`README.md has no line starting with ${start}`);
      return found;
    };
    const secret = line('export JWT_SECRET=').slice('export JWT_SECRET='.length);
    const curl = line('curl -H "Authorization: Bearer $TOKEN" ');
    const path = /localhost:8080(\/\S+)$/.exec(curl)?.[1];
    expect(path).toBe('/data/order');
    // The README's own command, run by a shell as a user would.
    const { stdout } = await promisify(execFile)(
      'sh',
      ['-c', `${line('TOKEN=$(node -e ')}\nprintf '%s' "$TOKEN"`],
      { cwd: dir, env: { ...cleanEnv(), JWT_SECRET: secret }, timeout: 30_000 },
    );
    const token = stdout;
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const service = await startServiceProcess(dir, {
      DATABASE_URL: 'sqlite::memory:',
      JWT_SECRET: secret,
    });
    try {
      const send = (headers: Record<string, string>): Promise<Response> =>
        fetch(`${service.url}${path}`, { headers, signal: AbortSignal.timeout(15_000) });
      const withToken = await send({ Authorization: `Bearer ${token}` });
      expect(withToken.status).toBe(200);
      expect(await withToken.json()).toMatchObject({ status: 'success', data: [] });
      expect((await send({})).status).toBe(401);
      // The role the README names is in the token: an editor may create products.
      const created = await fetch(`${service.url}/data/product`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { code: 'p1', name: 'Saw' } }),
        signal: AbortSignal.timeout(15_000),
      });
      expect(created.status).toBe(200);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
