/**
 * Group commit of the SQLite driver in the service process (`synchronous=FULL`):
 * - a kill -9 while many concurrent POSTs and PATCHes are in flight loses no acknowledged write,
 *   and every acknowledged write is stored with the content it was acknowledged with;
 * - a write that fails inside a group (a key that already exists) fails alone: the writes
 *   committed with it are answered 200 and stored.
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

const product = (code: string, stock: number): object => ({
  code,
  name: `Product ${code}`,
  price: '1.25',
  stock,
});

describe('SQLite group commit in the service process', () => {
  let dir: string;
  const data = mkdtempSync(join(tmpdir(), 'eg-group-commit-'));
  let databases = 0;
  const processes: ServiceProcess[] = [];
  const start = async (file: string): Promise<ServiceProcess> => {
    const service = await startServiceProcess(dir, {
      DATABASE_URL: `sqlite:${file}`,
      SQLITE_SYNCHRONOUS: 'FULL',
      SQLITE_GROUP_COMMIT: 'on',
    });
    processes.push(service);
    return service;
  };

  beforeAll(async () => {
    dir = await buildFixtureService('shop', 'group-commit-sqlite');
  }, 180_000);

  afterAll(async () => {
    for (const service of processes) await service.stop();
    rmSync(data, { recursive: true, force: true });
  });

  it('a kill -9 amid concurrent writes loses no acknowledged POST or PATCH', async () => {
    const file = join(data, `kill-${databases++}.db`);
    const first = await start(file);
    const writers = 32;
    const seed = Array.from({ length: writers }, (_, w) => product(`own-${w}`, 0));
    expect((await first.request('POST', '/data/product', { body: { data: seed } })).status).toBe(
      200,
    );
    /** Codes of acknowledged POSTs. */
    const created: string[] = [];
    /** Per writer: the stock of its last acknowledged PATCH of `own-<w>`, and whether one was in flight. */
    const patched = Array.from({ length: writers }, () => ({ acknowledged: 0, inFlight: 0 }));
    let acknowledgedWrites = 0;
    let killed = false;
    const writer = async (w: number): Promise<void> => {
      for (let i = 1; !killed; i++) {
        if (i % 2 === 0) {
          patched[w]!.inFlight = i;
          const response = await requestJson(first.url, 'PATCH', `/data/product/own-${w}`, {
            body: { data: { stock: i } },
          }).catch(() => undefined);
          if (response?.status === 200) {
            patched[w]!.acknowledged = i;
            acknowledgedWrites++;
          } else if (!killed) throw new Error(`PATCH own-${w} failed: ${response?.text}`);
        } else {
          const code = `new-${w}-${i}`;
          const response = await requestJson(first.url, 'POST', '/data/product', {
            body: { data: product(code, i) },
          }).catch(() => undefined);
          if (response?.status === 200) {
            created.push(code);
            acknowledgedWrites++;
          } else if (!killed) throw new Error(`POST ${code} failed: ${response?.text}`);
        }
      }
    };
    let failure: unknown;
    const running = Array.from({ length: writers }, (_, w) =>
      writer(w).catch((error: unknown) => {
        failure ??= error;
      }),
    );
    while (acknowledgedWrites < 600 && failure === undefined) await sleep(5);
    first.child.kill('SIGKILL');
    killed = true;
    await Promise.all(running);
    expect(await first.stop()).toBeNull();
    if (failure !== undefined) throw failure;

    const second = await start(file);
    const listed = await second.request('GET', '/data/product?limit=1000');
    expect(listed.status).toBe(200);
    const stored = new Map(
      (listed.body.data as { code: string; name: string; stock: number }[]).map((r) => [r.code, r]),
    );
    expect(created.length).toBeGreaterThan(100);
    for (const code of created) {
      const [, , i] = code.split('-');
      expect(stored.get(code)).toMatchObject({ name: `Product ${code}`, stock: Number(i) });
    }
    for (const [w, { acknowledged, inFlight }] of patched.entries()) {
      // The acknowledged PATCH, or the one in flight at the kill (committed, not yet answered).
      expect([acknowledged, inFlight]).toContain(stored.get(`own-${w}`)?.stock);
    }
  }, 120_000);

  it('a write that fails inside a group fails alone; its neighbours are committed', async () => {
    const service = await start(join(data, `neighbours-${databases++}.db`));
    const taken = Array.from({ length: 10 }, (_, i) => product(`taken-${i}`, i));
    expect((await service.request('POST', '/data/product', { body: { data: taken } })).status).toBe(
      200,
    );
    // 60 writes at once, every third one a key that already exists.
    const codes = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0 ? `taken-${(i / 3) % 10}` : `fresh-${i}`,
    );
    const responses = await Promise.all(
      codes.map((code, i) =>
        service.request('POST', '/data/product', { body: { data: product(code, 100 + i) } }),
      ),
    );
    for (const [i, code] of codes.entries()) {
      if (code.startsWith('taken-')) {
        expect(responses[i]!.status).toBe(400);
        expect(responses[i]!.text).toContain('already exists');
      } else {
        expect(responses[i]!.status).toBe(200);
      }
    }
    const listed = await service.request('GET', '/data/product?limit=1000');
    const stored = new Map(
      (listed.body.data as { code: string; stock: number }[]).map((r) => [r.code, r.stock]),
    );
    for (const [i, code] of codes.entries()) {
      // Fresh records hold their own stock; existing ones are unchanged.
      expect(stored.get(code)).toBe(code.startsWith('taken-') ? Number(code.slice(6)) : 100 + i);
    }
    expect(stored.size).toBe(10 + 40);
  }, 60_000);
});
