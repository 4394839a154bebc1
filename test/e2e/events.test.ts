/**
 * Change events on SQLite: the end-to-end suite (`suites/events.ts`) in memory; two services on
 * one SQLite file, standing for two processes, where the other one's changes arrive by polling;
 * and the access rules (SPEC §8) applied to `/events` on the `access` fixture.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { SseStream } from '../helpers/sse.js';
import { suiteAuthenticator, token } from './suites/access.js';
import { describeEventsSuite } from './suites/events.js';

describeEventsSuite('sqlite', () => undefined);

describe('change events of two services on one SQLite file', () => {
  const file = join(OUTPUT, 'e2e-events-shared', 'shared.db');
  let a: BootedService;
  let b: BootedService;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    await rm(join(OUTPUT, 'e2e-events-shared'), { recursive: true, force: true });
    // Two drivers are two connections, like two processes: neither hears the other's commits.
    a = await bootFixture('shop', {
      folder: 'e2e-events-file-a',
      driver: new SqliteDriver({ filename: file, readers: 0 }),
      events: { pollMs: 50 },
    });
    b = await bootFixture('shop', {
      folder: 'e2e-events-file-b',
      driver: new SqliteDriver({ filename: file, readers: 0 }),
      events: { pollMs: 50 },
    });
  });

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await a?.close();
    await b?.close();
  });

  it('a change written through one reaches the subscribers of the other by polling', async () => {
    const onB = await SseStream.open(`${b.url}/events`);
    streams.push(onB);
    await onB.until('the position message', () => onB.lastEventId !== '');
    await a.request('POST', '/data/category', { body: { data: { name: 'via-file' } } });
    await b.request('POST', '/data/category', { body: { data: { name: 'via-b' } } });
    await onB.untilChanges(2);
    expect(onB.changes().map(({ data }) => [data.seq, data.id])).toEqual([
      [Number(onB.lastEventId) - 1, 'via-file'],
      [Number(onB.lastEventId), 'via-b'],
    ]);
  });
});

describe('change events under access rules', () => {
  let service: BootedService;
  const streams: SseStream[] = [];
  const auth: Record<'alice' | 'admin', Record<string, string>> = { alice: {}, admin: {} };

  beforeAll(async () => {
    service = await bootFixture('access', {
      folder: 'e2e-events-access',
      auth: suiteAuthenticator(),
    });
    auth.alice = { Authorization: `Bearer ${await token('alice', [])}` };
    auth.admin = { Authorization: `Bearer ${await token('admin', ['admin'])}` };
  });

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await service?.close();
  });

  const open = async (headers: Record<string, string>): Promise<SseStream> => {
    const stream = await SseStream.open(`${service.url}/events`, headers);
    streams.push(stream);
    expect(stream.status, stream.errorBody).toBe(200);
    return stream;
  };

  it('a caller receives the events of the entities it may list, and under an owner rule its own', async () => {
    const anonymous = await open({});
    const alice = await open(auth.alice);
    const admin = await open(auth.admin);
    const writes: [string, object][] = [
      ['/data/product', { code: 'p1', name: 'Public product' }],
      ['/data/order', { id: 'o-alice', customer: 'alice' }],
      ['/data/order', { id: 'o-bob', customer: 'bob' }],
      ['/data/audit', { id: 1, note: 'admins only' }],
      ['/data/note', { id: 'n7', author: 7 }],
      ['/data/product', { code: 'p-last', name: 'The last write' }],
    ];
    for (const [path, data] of writes) {
      const response = await service.request('POST', path, { body: { data }, headers: auth.admin });
      expect(response.status, response.text).toBe(200);
    }
    const seen = async (stream: SseStream): Promise<string[]> => {
      await stream.until('the last write', () =>
        stream.changes().some(({ data }) => data.id === 'p-last'),
      );
      return stream.changes().map(({ data }) => `${data.entity} ${data.id}`);
    };
    // Anonymous: public lists only; NOTE is public but owned, and an anonymous caller owns nothing.
    expect(await seen(anonymous)).toEqual(['PRODUCT p1', 'PRODUCT p-last']);
    expect(await seen(alice)).toEqual(['PRODUCT p1', 'ORDER o-alice', 'PRODUCT p-last']);
    expect(await seen(admin)).toEqual([
      'PRODUCT p1',
      'ORDER o-alice',
      'ORDER o-bob',
      'AUDIT 1',
      'NOTE n7',
      'PRODUCT p-last',
    ]);
  });

  it('asking for an entity the caller may not list is a 401 or 403, as listing it is', async () => {
    const anonymous = await service.request('GET', '/events?entity=order');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.reason).toBe('Authentication required');
    const alice = await service.request('GET', '/events?entity=product,audit', {
      headers: auth.alice,
    });
    expect(alice.status).toBe(403);
    expect(alice.body.error.reason).toBe('Role required for GET_LIST on Entity AUDIT');
    const invalid = await service.request('GET', '/events', {
      headers: { Authorization: 'Bearer not-a-token' },
    });
    expect(invalid.status).toBe(401);
  });
});
