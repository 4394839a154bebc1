/**
 * A kill -9 of the service process while batches (`POST /batch`, SPEC §12) are in flight leaves
 * each batch all or nothing: after a restart every batch's records are all there or none is, and
 * every acknowledged batch is all there. On SQLite (a file, `synchronous=FULL`) and, with
 * `TEST_DATABASE_URL`, on PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildFixtureService,
  requestJson,
  sleep,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/built-service.js';
import { TEST_DATABASE_URL } from '../helpers/environment.js';
import { TestSchemas, withSchema } from './suites/postgres.js';

/** Operations per batch: every batch inserts this many categories named `k<batch>-<i>`. */
const SIZE = 400;

describe('kill -9 during batches', () => {
  let dir: string;
  const data = mkdtempSync(join(tmpdir(), 'eg-batch-crash-'));
  const processes: ServiceProcess[] = [];
  const schemas =
    TEST_DATABASE_URL === undefined ? undefined : new TestSchemas(TEST_DATABASE_URL, 'crash');

  beforeAll(async () => {
    dir = await buildFixtureService('shop', 'batch-crash');
  }, 180_000);
  afterAll(async () => {
    for (const service of processes) await service.stop();
    rmSync(data, { recursive: true, force: true });
    await schemas?.dropAll();
  });

  const storages: [string, () => Record<string, string>][] = [
    [
      'sqlite',
      () => ({ DATABASE_URL: `sqlite:${join(data, 'crash.db')}`, SQLITE_SYNCHRONOUS: 'FULL' }),
    ],
  ];
  if (schemas !== undefined)
    storages.push(['postgres', () => ({ DATABASE_URL: withSchema(schemas.url, schemas.next()) })]);

  it.each(storages)(
    '%s: every batch is all or nothing',
    async (_name, envOf) => {
      const env = envOf();
      const first = await startServiceProcess(dir, env);
      processes.push(first);
      const acknowledged = new Set<number>();
      let sent = 0;
      let killed = false;
      const client = async (): Promise<void> => {
        while (!killed) {
          const batch = sent++;
          const operations = Array.from({ length: SIZE }, (_, i) => ({
            method: 'POST',
            path: '/data/category',
            body: { data: { name: `k${batch}-${i}`, description: 'x'.repeat(200) } },
          }));
          const response = await requestJson(first.url, 'POST', '/batch', {
            body: { operations },
            timeoutMs: 60_000,
          }).catch(() => undefined);
          if (response?.status === 200) acknowledged.add(batch);
          else if (!killed)
            throw new Error(
              `batch ${batch} failed: ${response?.text}\nservice log:\n${first.logs.join('').slice(-4000)}`,
            );
        }
      };
      const running = [client(), client()];
      while (acknowledged.size < 2) await sleep(5);
      // Some time into the next batches, so that one is most likely half written.
      await sleep(15 + Math.random() * 30);
      first.child.kill('SIGKILL');
      killed = true;
      await Promise.all(running);
      expect(await first.stop()).toBeNull();

      const second = await startServiceProcess(dir, env);
      processes.push(second);
      for (let batch = 0; batch < sent; batch++) {
        const counted = await second.request(
          'GET',
          `/entity/category/recordCounts?name[STARTS_WITH]=k${batch}-`,
        );
        const count = counted.body.data.count as number;
        expect([0, SIZE], `batch ${batch}`).toContain(count);
        if (acknowledged.has(batch)) expect(count, `batch ${batch}`).toBe(SIZE);
      }
      await second.stop();
    },
    180_000,
  );
});
