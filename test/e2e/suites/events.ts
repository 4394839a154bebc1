/**
 * Change events end to end (SPEC §9) on the `shop` fixture, defined once and run against every
 * storage driver: `events.test.ts` (SQLite) and `events.postgres.test.ts`. A real HTTP client
 * reads `GET /events` (test/helpers/sse.ts) while the test writes through the REST routes: the
 * exact message format, one event per committed change in commit order (list inserts, renames,
 * failed writes), resuming with `Last-Event-ID` and `?after=`, the entity filter, `reset` for a
 * trimmed position, keep-alive comments, a subscriber that stops reading, shutdown, `EVENTS=off`
 * and the errors of bad requests (checked against the OpenAPI document by the test client).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StorageDriver } from '@entity-gen/runtime';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import { SseStream } from '../../helpers/sse.js';

/** A driver for one booted service; `undefined`: SQLite in memory. */
export type MakeDriver = () => StorageDriver | undefined;

const category = (name: string, description?: string): object => ({
  name,
  ...(description === undefined ? {} : { description }),
});

const product = (code: string, extra: object = {}): object => ({
  code,
  name: `Product ${code}`,
  price: '9.50',
  ...extra,
});

/** The `driver` option of `bootFixture`, when there is one. */
const driverOption = (driver: StorageDriver | undefined): { driver?: StorageDriver } =>
  driver === undefined ? {} : { driver };

export function describeEventsSuite(name: string, makeDriver: MakeDriver): void {
  describe(`change events (/events) on ${name}`, () => {
    let service: BootedService;
    const streams: SseStream[] = [];

    /** Opens `/events` with `query` and `headers`; closed after the test. */
    const subscribe = async (
      query = '',
      headers: Record<string, string> = {},
    ): Promise<SseStream> => {
      const stream = await SseStream.open(`${service.url}/events${query}`, headers);
      streams.push(stream);
      // The subscription is in place once the headers arrived: later writes reach it.
      expect(stream.status, stream.errorBody).toBe(200);
      return stream;
    };

    /** Opens `/events` as a fresh subscriber, once it was told its position (`lastEventId`). */
    const subscribeFresh = async (query = ''): Promise<SseStream> => {
      const stream = await subscribe(query);
      await stream.until('the position message', () => stream.lastEventId !== '');
      return stream;
    };

    const write = async (
      method: string,
      path: string,
      body?: unknown,
    ): Promise<{
      status: number;
      body: { data: unknown; meta: { lastUpdateTimeUnix: number } };
    }> => {
      const response = await service.request(method, path, body === undefined ? {} : { body });
      return { status: response.status, body: response.body };
    };

    beforeAll(async () => {
      service = await bootFixture('shop', {
        folder: `e2e-events-${name}`,
        ...driverOption(makeDriver()),
        events: { keepAliveMs: 200 },
      });
    });

    afterEach(() => {
      for (const stream of streams.splice(0)) stream.close();
    });

    afterAll(async () => {
      await service.close();
    });

    it('sends each committed change in the format of SPEC §9, in commit order', async () => {
      const stream = await subscribeFresh();
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers.get('cache-control')).toBe('no-store');
      // A fresh subscriber is told its position before any event (an id without data).
      expect(stream.raw[0]).toMatch(/^id: \d+\n\n$/);
      const start = Number(stream.lastEventId);

      const created = await write('POST', '/data/category', { data: category('tools') });
      const replaced = await write('PUT', '/data/category/tools', {
        data: category('tools', 'Hammers'),
      });
      const patched = await write('PATCH', '/data/category/tools', {
        data: { description: 'Saws' },
      });
      const deleted = await write('DELETE', '/data/category/tools');
      await stream.untilChanges(4);

      const expected = [
        ['created', created],
        ['updated', replaced],
        ['updated', patched],
        ['deleted', deleted],
      ] as const;
      expect(stream.raw.slice(1)).toEqual(
        expected.map(([op, response], index) => {
          const seq = start + index + 1;
          const time = response.body.meta.lastUpdateTimeUnix;
          return (
            `id: ${seq}\nevent: record.${op}\n` +
            `data: ${JSON.stringify({
              seq,
              entity: 'CATEGORY',
              id: 'tools',
              op,
              record: response.body.data,
              timeUnix: time,
              timeISO: new Date(time).toISOString(),
            })}\n\n`
          );
        }),
      );
      expect(stream.lastEventId).toBe(String(start + 4));
    });

    it('a rename is a deleted of the old id, then a created of the new one', async () => {
      const before = await write('POST', '/data/product', { data: product('ren-a', { stock: 3 }) });
      const stream = await subscribe();
      const renamed = await write('PATCH', '/data/product/ren-a', { data: { code: 'ren-b' } });
      expect(renamed.status).toBe(200);
      await stream.untilChanges(2);
      expect(stream.changes().map(({ event, data }) => [event, data.id, data.record])).toEqual([
        ['record.deleted', 'ren-a', before.body.data],
        ['record.created', 'ren-b', renamed.body.data],
      ]);
    });

    it('a list insert sends one created per record in request order; a failed one sends nothing', async () => {
      const stream = await subscribe();
      const inserted = await write('POST', '/data/product', {
        data: [product('list-3'), product('list-1'), product('list-2')],
      });
      expect(inserted.status).toBe(200);
      const failed = await write('POST', '/data/product', {
        data: [product('list-4'), product('list-1')],
      });
      expect(failed.status).toBe(400);
      const invalid = await write('POST', '/data/product', {
        data: [product('list-5'), { code: 'list-6' }],
      });
      expect(invalid.status).toBe(400);
      // A later change: everything before it has arrived when it does.
      await write('POST', '/data/category', { data: category('marker-list') });
      await stream.untilChanges(4);
      const changes = stream.changes().map(({ data }) => [data.op, data.entity, data.id]);
      expect(changes).toEqual([
        ['created', 'PRODUCT', 'list-3'],
        ['created', 'PRODUCT', 'list-1'],
        ['created', 'PRODUCT', 'list-2'],
        ['created', 'CATEGORY', 'marker-list'],
      ]);
      const seqs = stream.changes().map(({ data }) => data.seq);
      expect(seqs).toEqual([seqs[0], seqs[0]! + 1, seqs[0]! + 2, seqs[0]! + 3]);
    });

    it('failed single writes send nothing', async () => {
      await write('POST', '/data/category', { data: category('kept') });
      const stream = await subscribe();
      expect((await write('POST', '/data/category', { data: category('kept') })).status).toBe(400);
      expect(
        (await write('PUT', '/data/category/missing-x', { data: category('other') })).status,
      ).toBe(404);
      expect((await write('DELETE', '/data/category/missing-x')).status).toBe(404);
      const conflicting = await service.request('PATCH', '/data/category/kept', {
        body: { data: { description: 'x' } },
        headers: { 'If-Match': '"99"' },
      });
      expect(conflicting.status).toBe(412);
      await write('POST', '/data/category', { data: category('marker-failed') });
      await stream.untilChanges(1);
      expect(stream.changes().map(({ data }) => data.id)).toEqual(['marker-failed']);
    });

    it('resumes with Last-Event-ID: exactly the changes missed, then live ones', async () => {
      const first = await subscribe();
      await write('POST', '/data/category', { data: category('resume-1') });
      await first.untilChanges(1);
      first.close();
      await write('POST', '/data/category', { data: category('resume-2') });
      await write('PUT', '/data/category/resume-1', { data: category('resume-1', 'changed') });
      await write('DELETE', '/data/category/resume-2');

      const again = await subscribe('', { 'Last-Event-ID': first.lastEventId });
      await again.untilChanges(3);
      await write('POST', '/data/category', { data: category('resume-3') });
      await again.untilChanges(4);
      expect(again.changes().map(({ data }) => [data.op, data.id])).toEqual([
        ['created', 'resume-2'],
        ['updated', 'resume-1'],
        ['deleted', 'resume-2'],
        ['created', 'resume-3'],
      ]);
      expect(again.changes()[0]!.data.seq).toBe(Number(first.lastEventId) + 1);
    });

    it('resumes with ?after=; Last-Event-ID wins over it (a reconnecting EventSource keeps its URL)', async () => {
      const stream = await subscribeFresh();
      const start = Number(stream.lastEventId);
      await write('POST', '/data/category', { data: category('after-1') });
      await write('POST', '/data/category', { data: category('after-2') });
      await stream.untilChanges(2);
      const fromQuery = await subscribe(`?after=${start + 1}`);
      await fromQuery.untilChanges(1);
      expect(fromQuery.changes().map(({ data }) => data.id)).toEqual(['after-2']);
      const fromHeader = await subscribe(`?after=${start}`, {
        'Last-Event-ID': String(start + 2),
      });
      await write('POST', '/data/category', { data: category('after-3') });
      await fromHeader.untilChanges(1);
      expect(fromHeader.changes().map(({ data }) => data.id)).toEqual(['after-3']);
    });

    it('a subscriber reconnecting with the position it was given first misses nothing', async () => {
      const stream = await subscribeFresh();
      stream.close();
      await write('POST', '/data/category', { data: category('while-away') });
      const again = await subscribe('', { 'Last-Event-ID': stream.lastEventId });
      await again.untilChanges(1);
      expect(again.changes()[0]!.data.id).toBe('while-away');
    });

    it('resumes far behind: pages through the outbox, then joins the live changes', async () => {
      const stream = await subscribeFresh();
      const start = Number(stream.lastEventId);
      stream.close();
      const records = Array.from({ length: 1200 }, (_, i) => product(`far-${i}`));
      for (let i = 0; i < records.length; i += 400)
        expect(
          (await write('POST', '/data/product', { data: records.slice(i, i + 400) })).status,
        ).toBe(200);
      const again = await subscribe(`?after=${start}`);
      await again.untilChanges(1200);
      await write('POST', '/data/category', { data: category('far-live') });
      await again.untilChanges(1201);
      const seqs = again.changes().map(({ data }) => data.seq);
      expect(seqs).toEqual(Array.from({ length: 1201 }, (_, i) => start + 1 + i));
      expect(again.changes().at(-1)!.data.id).toBe('far-live');
    });

    it('entity= limits the stream to those entities, in any case', async () => {
      const products = await subscribe('?entity=product');
      const both = await subscribe('?entity=Category,PRODUCT');
      const repeated = await subscribe('?entity=category&entity=shop_settings');
      await write('POST', '/data/product', { data: product('filter-p') });
      await write('POST', '/data/category', { data: category('filter-c') });
      await both.untilChanges(2);
      await repeated.untilChanges(1);
      await products.untilChanges(1);
      expect(products.changes().map(({ data }) => data.id)).toEqual(['filter-p']);
      expect(both.changes().map(({ data }) => data.id)).toEqual(['filter-p', 'filter-c']);
      expect(repeated.changes().map(({ data }) => data.id)).toEqual(['filter-c']);
    });

    it('answers bad requests with a 400 naming the problem', async () => {
      const cases: [string, Record<string, string>, string][] = [
        ['?entity=nope', {}, 'Unknown entity "nope" in the entity parameter of /events'],
        ['?entity=', {}, 'The entity parameter of /events names no entity'],
        [
          '?after=-1',
          {},
          'after must be the id of an event, a whole number of at least 0, not "-1"',
        ],
        [
          '',
          { 'Last-Event-ID': 'abc' },
          'Last-Event-ID must be the id of an event, a whole number of at least 0, not "abc"',
        ],
        ['?since=3', {}, 'Unknown query parameter "since" of /events; it takes entity and after'],
      ];
      for (const [query, headers, reason] of cases) {
        const response = await service.request('GET', `/events${query}`, { headers });
        expect(response.status, query).toBe(400);
        expect(response.body).toEqual({ status: 'error', error: { reason } });
      }
    });

    it('answers OPTIONS with the methods of /events', async () => {
      const response = await service.request('OPTIONS', '/events');
      expect(response.status).toBe(200);
      expect(response.body.data.allow).toEqual(['HEAD', 'GET']);
    });

    it('sends a reset when the position was trimmed away, then goes on from the current one', async () => {
      await write('POST', '/data/category', { data: category('trim-1') });
      const { last } = await service.driver.changes!.bounds();
      // Everything written so far goes (as after a retention period).
      await service.driver.changes!.trim(Date.now() + 60_000);
      const stream = await subscribe('?after=1');
      await stream.until('the reset', () => stream.messages.length > 0);
      expect(stream.messages[0]).toEqual({
        id: String(last),
        event: 'reset',
        data: JSON.stringify({
          after: 1,
          seq: last,
          reason: `Events after 1 are no longer kept (EVENTS_RETENTION): reload the data; events continue after ${last}`,
        }),
      });
      expect(stream.lastEventId).toBe(String(last));
      await write('POST', '/data/category', { data: category('trim-2') });
      await stream.untilChanges(1);
      expect(stream.changes()[0]!.data).toMatchObject({ seq: last + 1, id: 'trim-2' });
      // A position this storage never reached (another database) is a reset too.
      const ahead = await subscribe(`?after=${last + 1000}`);
      await ahead.until('the reset', () => ahead.messages.length > 0);
      expect(ahead.messages[0]!.event).toBe('reset');
      expect(ahead.lastEventId).toBe(String(last + 1));
    });

    it('keeps idle streams alive with comments', async () => {
      const stream = await subscribe();
      await stream.until('two keep-alive comments', () => stream.comments.length >= 2);
      expect(new Set(stream.comments)).toEqual(new Set(['keep-alive']));
    });

    it('drops a subscriber that stops reading without slowing the writers', async () => {
      const small = await bootFixture('shop', {
        folder: `e2e-events-${name}-small`,
        ...driverOption(makeDriver()),
        events: { bufferBytes: 64 * 1024 },
      });
      try {
        // A client that reads nothing: its response is paused once the headers are in.
        const stalled = await new Promise<IncomingMessage>((resolve, reject) => {
          const request = httpRequest(`${small.url}/events`, (response) => {
            response.pause();
            resolve(response);
          });
          request.on('error', reject);
          request.end();
        });
        expect(small.events.subscriberCount).toBe(1);
        // Large events, so that the loopback socket buffers fill and then the 64 KiB allowed.
        const description = 'x'.repeat(60_000);
        let writes = 0;
        for (let batch = 0; batch < 20 && small.events.subscriberCount > 0; batch++) {
          const records = Array.from({ length: 50 }, (_, i) =>
            product(`slow-${batch}-${i}`, { tags: [description] }),
          );
          // Every write is answered while the subscriber does not read.
          const response = await small.request('POST', '/data/product', {
            body: { data: records },
          });
          expect(response.status).toBe(200);
          writes += records.length;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // The subscriber that stopped reading is gone.
        expect(small.events.subscriberCount).toBe(0);
        // It finds its stream cut short once it reads again.
        const received = await new Promise<number>((resolve) => {
          let text = '';
          stalled.setEncoding('utf8');
          stalled.on('data', (chunk: string) => {
            text += chunk;
          });
          stalled.on('close', () => resolve(text.split('event: record.').length - 1));
          stalled.resume();
        });
        expect(received).toBeLessThan(writes);
        // The service goes on: writes, and a new subscriber that reads.
        const reader = await SseStream.open(`${small.url}/events`);
        streams.push(reader);
        expect(reader.status).toBe(200);
        const after = await small.request('POST', '/data/category', {
          body: { data: category('after-drop') },
        });
        expect(after.status).toBe(200);
        await reader.untilChanges(1);
        expect(reader.changes()[0]!.data.id).toBe('after-drop');
      } finally {
        await small.close();
      }
    }, 120_000);

    it('ends every stream cleanly on shutdown; a new subscriber then gets a 503', async () => {
      const other = await bootFixture('shop', {
        folder: `e2e-events-${name}-shutdown`,
        ...driverOption(makeDriver()),
      });
      try {
        const stream = await SseStream.open(`${other.url}/events`);
        await stream.until('the position', () => stream.raw.length > 0);
        await other.request('POST', '/data/category', { body: { data: category('bye') } });
        await stream.untilChanges(1);
        await other.events.close();
        await stream.until('the end of the stream', () => stream.closed);
        expect(stream.error).toBeUndefined();
        const refused = await other.request('GET', '/events');
        expect(refused.status).toBe(503);
        expect(refused.body.error.reason).toBe('The service is shutting down; connect again');
      } finally {
        await other.close();
      }
    });

    it('with EVENTS=off, writes append nothing and /events answers 404', async () => {
      const off = await bootFixture('shop', {
        folder: `e2e-events-${name}-off`,
        ...driverOption(makeDriver()),
        eventsOff: true,
      });
      try {
        const before = await off.driver.changes!.bounds();
        await off.request('POST', '/data/category', { body: { data: category('quiet') } });
        expect(await off.driver.changes!.bounds()).toEqual(before);
        const response = await off.request('GET', '/events');
        expect(response.status).toBe(404);
        expect(response.body.error.reason).toBe(
          'Change events are switched off for this service (EVENTS=off)',
        );
      } finally {
        await off.close();
      }
    });
  });
}
