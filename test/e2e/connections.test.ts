/**
 * What one client can hold on to (startServer): requests Node itself refuses get the JSON envelope
 * (malformed, headers too large, too slow), a slow client is cut off after the request timeout,
 * and connections beyond the cap are refused.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningService } from '@entity-gen/runtime';
import { fixtureNamed, generateFixtureInto, OUTPUT } from '../helpers/generate.js';
import { loadGenerated } from '../helpers/service.js';

let running: RunningService;
let port: number;

beforeAll(async () => {
  const dir = await generateFixtureInto(fixtureNamed('shop'), 'e2e-connections');
  const { createApp, tables } = await loadGenerated(dir);
  running = await startServer({
    createApp,
    tables,
    port: 0,
    host: '127.0.0.1',
    databaseUrl: 'sqlite::memory:',
    env: {},
    logLevel: 'silent',
    requestTimeoutMs: 1_000,
    maxConnections: 3,
    migrationsDir: join(OUTPUT, 'e2e-connections', 'no-migrations'),
  });
  port = (running.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await running?.close();
});

/** Sends raw bytes and collects everything until the server closes the connection. */
function exchange(bytes: string, keepOpenMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.on('connect', () => {
      socket.write(bytes);
      if (keepOpenMs === 0) return;
      setTimeout(() => socket.destroy(), keepOpenMs);
    });
  });
}

/** Polls (with a generous deadline) until the server counts `count` open connections. */
async function untilConnections(count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const current = await new Promise<number>((resolve, reject) =>
      running.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    );
    if (current === count) return;
    if (Date.now() > deadline)
      throw new Error(`the server still counts ${current} connections, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function bodyOf(response: string): unknown {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

describe('requests Node refuses get the envelope', () => {
  it('a malformed request line: 400', async () => {
    const response = await exchange('GARBAGE\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(response)).toEqual({
      status: 'error',
      error: { reason: 'Malformed HTTP request' },
    });
  });

  it('headers over the limit: 431', async () => {
    const response = await exchange(
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(response)).toEqual({
      status: 'error',
      error: { reason: 'Request headers are too large' },
    });
  });

  it('a client that trickles its request is cut off after the request timeout: 408', async () => {
    // The client would keep the connection for 10 s; the answer shows the server cut it off.
    const response = await exchange('POST /data/category HTTP/1.1\r\nHost: x\r\n', 10_000);
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(response)).toEqual({
      status: 'error',
      error: { reason: 'The request did not arrive within 1000 ms' },
    });
  });
});

describe('connections', () => {
  it('refuses connections beyond the cap and serves again once they close', async () => {
    const open: Socket[] = [];
    for (let n = 0; n < 3; n++) {
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      open.push(socket);
    }
    await untilConnections(3);
    const refused = await exchange('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(refused).toBe('');
    for (const socket of open) socket.destroy();
    // Served again once the server has seen the three connections close.
    await untilConnections(0);
    const served = await exchange('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(served).toMatch(/^HTTP\/1\.1 200 /);
  });
});
