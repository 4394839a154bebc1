import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureService } from '../helpers/built-service.js';

/** A free TCP port on loopback. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly logs: string[];
}

/** Starts `node dist/server.js` of a built service and waits for its "listening" log line. */
async function startService(dir: string, env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start:\n${logs.join('')}`)),
      20_000,
    );
    const onData = (chunk: Buffer): void => {
      logs.push(chunk.toString());
      if (logs.join('').includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${logs.join('')}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, logs };
}

async function stop(started: Started): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) =>
    started.child.once('exit', (code) => resolve(code)),
  );
  started.child.kill('SIGTERM');
  return exited;
}

describe('the built service as users run it (npm run build && npm start)', () => {
  let dir: string;
  beforeAll(async () => {
    // Generated, then compiled by tsc (once per run and content: see buildFixtureService).
    dir = await buildFixtureService('shop', 'server-shop');
  }, 120_000);
  let running: Started | undefined;
  afterAll(() => {
    running?.child.kill('SIGKILL');
  });

  it('serves on SQLite from DATABASE_URL, keeps data across restarts and stops cleanly on SIGTERM', async () => {
    const env = { DATABASE_URL: 'sqlite:./data/test.db' };
    running = await startService(dir, env);
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'success', data: { storage: 'ok' } });
    const posted = await fetch(`${running.url}/data/category`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { name: 'tools', description: 'Hand tools' } }),
    });
    expect(posted.status).toBe(200);
    expect(await stop(running)).toBe(0);
    expect(running.logs.join('')).toContain('"msg":"stopped"');

    running = await startService(dir, env);
    const read = await fetch(`${running.url}/data/category/tools`);
    expect(await read.json()).toMatchObject({
      status: 'success',
      data: { name: 'tools', description: 'Hand tools' },
    });
    expect(await stop(running)).toBe(0);
    running = undefined;
  });

  it('serves sqlite::memory: and writes structured JSON logs', async () => {
    running = await startService(dir, { DATABASE_URL: 'sqlite::memory:' });
    expect((await fetch(`${running.url}/data/category`)).status).toBe(200);
    const first = running.logs
      .join('')
      .split('\n')
      .find((line) => line.includes('listening on'));
    expect(JSON.parse(first ?? '{}')).toMatchObject({
      level: 30,
      msg: expect.stringContaining('listening on'),
    });
    expect(await stop(running)).toBe(0);
    running = undefined;
  });

  it('refuses an unsupported DATABASE_URL with a clear message', async () => {
    await expect(startService(dir, { DATABASE_URL: 'mysql://localhost/db' })).rejects.toThrow(
      /Unsupported DATABASE_URL mysql:\/\/localhost\/db/,
    );
  });

  it.each([
    [
      'PORT',
      'eighty',
      /The service could not start: PORT must be an integer from 0 to 65535, not "eighty"/,
    ],
    [
      'BODY_LIMIT_BYTES',
      '10MB',
      /The service could not start: BODY_LIMIT_BYTES must be an integer/,
    ],
    ['LOG_LEVEL', 'verbose', /The service could not start: LOG_LEVEL must be one of fatal, error/],
  ])('refuses %s=%s with one clear line and exit 1', async (name, value, message) => {
    await expect(
      startService(dir, { DATABASE_URL: 'sqlite::memory:', [name]: value }),
    ).rejects.toThrow(message);
  });
});
