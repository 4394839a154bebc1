import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageDriver } from '@entity-gen/runtime';
import { createLogger } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { serve, type TestServer } from '../helpers/http.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

describe('request size limit', () => {
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture('shop', { folder: 'e2e-limits', bodyLimit: 1024 });
  });
  afterAll(async () => {
    await service.close();
  });

  it('answers 413 in the envelope for a body over the limit', async () => {
    const response = await service.request('POST', '/data/category', {
      body: { data: { name: 'big', description: 'x'.repeat(2000) } },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({
      status: 'error',
      error: { reason: 'Request body is larger than the limit of 1024 bytes' },
    });
  });

  it('answers 413 to a body without Content-Length once it streams past the limit', async () => {
    const big = JSON.stringify({ data: { name: 'big', description: 'x'.repeat(4000) } });
    // A stream body is sent chunked: only the streaming check can see its size.
    const response = await fetch(`${service.url}/data/category`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      status: 'error',
      error: { reason: 'Request body is larger than the limit of 1024 bytes' },
    });
  });

  it('answers 400 naming the problem to a corrupt gzip body', async () => {
    const response = await fetch(`${service.url}/data/category`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Buffer.from('this is not gzip'),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { reason: string } };
    expect(body.error.reason).toMatch(/^Request body could not be read: .*header/);
  });

  it('accepts a body under the limit', async () => {
    const response = await service.request('POST', '/data/category', {
      body: { data: { name: 'small' } },
    });
    expect(response.status).toBe(200);
  });
});

describe('internal errors', () => {
  let server: TestServer;
  const logged: string[] = [];
  beforeAll(async () => {
    const booted = await bootFixture('shop', { folder: 'e2e-internal' });
    await booted.close();
    const inner = new SqliteDriver({ filename: ':memory:' });
    await inner.open(booted.tables);
    // A driver whose reads fail the way a broken database would, with details that must not leak.
    const failing: StorageDriver = Object.assign(Object.create(inner) as StorageDriver, {
      get: () => Promise.reject(new Error('SQLITE_CORRUPT: secret table detail at /var/lib/db')),
    });
    const logger = createLogger({ level: 'error' });
    const write = (line: string): void => void logged.push(line);
    const captured = Object.assign(logger, {});
    captured.error = ((object: unknown, message?: string) =>
      write(JSON.stringify({ object, message }))) as typeof logger.error;
    const app = booted.createApp({ driver: failing, logger: captured });
    server = await serve(app.callback());
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 500 with a generic reason and logs the details with the request id', async () => {
    const response = await server.request('GET', '/data/product/p1', {
      headers: { 'x-request-id': 'req-500' },
    });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ status: 'error', error: { reason: 'Internal server error' } });
    expect(response.text).not.toContain('secret');
    expect(response.text).not.toContain('SQLITE');
    expect(logged.join('\n')).toContain('req-500');
  });
});
