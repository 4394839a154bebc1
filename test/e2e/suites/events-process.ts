/**
 * Change events of the built `shop` service as users run it (`node dist/server.js` in a child
 * process, test/helpers/built-service.ts), defined once per storage: `events-process.test.ts`
 * (a SQLite file) and `events-process.postgres.test.ts`.
 *
 * - A kill -9 of the service while writes are in flight loses no event of a write that was
 *   acknowledged, and leaves no event without its change (the record and the event commit
 *   together), as a fresh process serving the same storage shows.
 * - 10 000 writes, paced at 1 000 per second (or as fast as the machine allows, it is about
 *   completeness, not speed), with 20 subscribers: every subscriber receives every event exactly
 *   once and in order. A subscriber that gets disconnected resumes with `Last-Event-ID`, as
 *   EventSource does: nothing lost, nothing twice still holds across it.
 * - SIGTERM ends every stream cleanly before the process exits with 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildFixtureService,
  requestJson,
  sleep,
  startServiceProcess,
  type ServiceProcess,
} from '../../helpers/built-service.js';
import { SseStream } from '../../helpers/sse.js';
import { ResumingSubscriber } from '../../helpers/sse-subscriber.js';

/** The environment of one storage for the service processes: `DATABASE_URL` and the like. */
export type StorageEnv = () => Record<string, string>;

/** The position a fresh subscriber is given: the seq of the last committed change. */
async function currentSeq(url: string): Promise<number> {
  const stream = await SseStream.open(`${url}/events`);
  try {
    await stream.until('the position message', () => stream.lastEventId !== '');
    return Number(stream.lastEventId);
  } finally {
    stream.close();
  }
}

const product = (code: string): object => ({ code, name: `Product ${code}`, price: '1.25' });

export function describeEventsProcessSuite(name: string, storageEnv: StorageEnv): void {
  describe(`change events of the service process on ${name}`, () => {
    let dir: string;
    const processes: ServiceProcess[] = [];

    const start = async (env: Record<string, string>): Promise<ServiceProcess> => {
      const service = await startServiceProcess(dir, env);
      processes.push(service);
      return service;
    };

    beforeAll(async () => {
      dir = await buildFixtureService('shop', `events-process-${name}`);
    }, 180_000);

    afterAll(async () => {
      for (const service of processes) await service.stop();
    });

    it('a kill -9 between writes loses no event of an acknowledged write', async () => {
      const env = storageEnv();
      const first = await start(env);
      const from = await currentSeq(first.url);
      const acknowledged: string[] = [];
      let next = 0;
      let killed = false;
      let enoughAcknowledged!: () => void;
      const enough = new Promise<void>((resolve) => (enoughAcknowledged = resolve));
      const writer = async (): Promise<void> => {
        while (!killed) {
          const code = `kill-${next++}`;
          const response = await requestJson(first.url, 'POST', '/data/product', {
            body: { data: product(code) },
          }).catch(() => undefined);
          if (response?.status === 200) {
            acknowledged.push(code);
            if (acknowledged.length >= 300) enoughAcknowledged();
          } else if (!killed) throw new Error(`write ${code} failed: ${response?.text}`);
        }
      };
      const running = Array.from({ length: 8 }, writer);
      const writers = Promise.all(running);
      // 300 acknowledged writes, or the first failed write, which fails the test at once.
      await Promise.race([enough, writers]).catch(async (error: unknown) => {
        killed = true;
        await Promise.allSettled(running);
        throw error;
      });
      // In the middle of the writes: some are committed and acknowledged, some in flight.
      first.child.kill('SIGKILL');
      killed = true;
      await writers;
      expect(await first.stop()).toBeNull();

      const second = await start(env);
      // Everything the outbox holds after `from`, read to its end (a later write marks it).
      await requestJson(second.url, 'POST', '/data/category', { body: { data: { name: 'end' } } });
      const stream = await SseStream.open(`${second.url}/events?after=${from}`);
      try {
        await stream.until(
          'the marker',
          () => stream.changes().some(({ data }) => data.id === 'end'),
          30_000,
        );
        const seqs = stream.changes().map(({ data }) => data.seq);
        expect(seqs).toEqual(seqs.map((_, i) => from + 1 + i));
        const events = stream.changes().filter(({ data }) => data.entity === 'PRODUCT');
        expect(events.every(({ data }) => data.op === 'created')).toBe(true);
        // Every acknowledged write has its event; every event its record, and no record lacks one.
        const listed = await requestJson(second.url, 'GET', '/data/product?limit=1000');
        expect(listed.status).toBe(200);
        const stored = (listed.body.data as { code: string }[]).map((record) => record.code);
        expect(events.map(({ data }) => data.id).sort()).toEqual([...stored].sort());
        for (const code of acknowledged) expect(stored).toContain(code);
      } finally {
        stream.close();
      }
    }, 120_000);

    it('20 subscribers each receive every one of 10 000 writes exactly once, in order', async () => {
      const service = await start(storageEnv());
      const from = await currentSeq(service.url);
      const subscribers = Array.from(
        { length: 20 },
        () => new ResumingSubscriber(service.url, from),
      );
      for (const subscriber of subscribers) subscriber.start();
      const total = 10_000;
      try {
        // 1 000 writes per second: write i is due i ms after the start; late ones go at once.
        const started = performance.now();
        let next = 0;
        const writer = async (): Promise<void> => {
          for (let i = next++; i < total; i = next++) {
            const wait = started + i - performance.now();
            if (wait > 0) await sleep(wait);
            const response = await requestJson(service.url, 'POST', '/data/product', {
              body: { data: product(`load-${i}`) },
              timeoutMs: 60_000,
            });
            if (response.status !== 200) throw new Error(`write ${i}: ${response.text}`);
          }
        };
        await Promise.all(Array.from({ length: 32 }, writer));
        const seconds = (performance.now() - started) / 1000;
        const deadline = Date.now() + 120_000;
        while (subscribers.some((subscriber) => subscriber.seqs.length < total)) {
          if (Date.now() > deadline) break;
          await sleep(100);
        }
        const expected = Array.from({ length: total }, (_, i) => from + 1 + i);
        for (const [index, subscriber] of subscribers.entries()) {
          expect(subscriber.unexpected, `subscriber ${index}`).toEqual([]);
          expect(subscriber.seqs, `subscriber ${index}`).toEqual(expected);
        }
        console.info(
          `${name}: ${total} writes in ${seconds.toFixed(1)} s (${Math.round(total / seconds)}/s), ` +
            `20 subscribers, ${subscribers.reduce((sum, s) => sum + s.reconnects, 0)} reconnects`,
        );
      } finally {
        for (const subscriber of subscribers) await subscriber.stop();
      }
    }, 300_000);

    it('SIGTERM ends every stream cleanly, then the process exits with 0', async () => {
      const service = await start(storageEnv());
      const streams = [
        await SseStream.open(`${service.url}/events`),
        await SseStream.open(`${service.url}/events?entity=category`),
      ];
      await requestJson(service.url, 'POST', '/data/category', {
        body: { data: { name: 'term' } },
      });
      for (const stream of streams) await stream.untilChanges(1);
      expect(await service.stop()).toBe(0);
      for (const stream of streams) {
        expect(stream.closed).toBe(true);
        expect(stream.error).toBeUndefined();
      }
      expect(service.logs.join('')).toContain('stopped');
    }, 60_000);
  });
}
