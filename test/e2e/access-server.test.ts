/**
 * The access fixture's service as users run it (`node dist/server.js`, see
 * helpers/built-service.ts): credentials that cannot work stop it at start with exit code 1 and
 * one line naming the problem.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureService } from '../helpers/built-service.js';

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
});
