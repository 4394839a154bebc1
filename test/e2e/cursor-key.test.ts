/**
 * Without CURSOR_SECRET a service signs its cursors with a key it generates once and keeps in the
 * database (table `_eg_secrets`): a cursor issued before a restart still works after it, and a
 * service on another database cannot use it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../helpers/service.js';

const dir = mkdtempSync(join(tmpdir(), 'eg-cursor-key-'));
const booted: BootedService[] = [];
afterAll(async () => {
  await Promise.all(booted.map((service) => service.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** The shop service on a SQLite file, without a cursor secret. */
async function boot(file: string): Promise<BootedService> {
  const service = await bootFixture('shop', {
    folder: 'e2e-cursor-key',
    driver: new SqliteDriver({ filename: join(dir, file) }),
  });
  booted.push(service);
  return service;
}

describe('the generated cursor key', () => {
  it('is stored in the database and reused after a restart', async () => {
    const first = await boot('shop.db');
    const names = Array.from({ length: 5 }, (_, n) => ({ name: `c${n}` }));
    expect((await first.request('POST', '/data/category', { body: { data: names } })).status).toBe(
      200,
    );
    const page = await first.request('GET', '/data/category?orderBy=name&limit=2');
    const next = page.body.meta.next as string;
    expect(next).toEqual(expect.any(String));
    await first.close();
    booted.splice(booted.indexOf(first), 1);

    const stored = new Database(join(dir, 'shop.db'), { readonly: true });
    try {
      const rows = stored.prepare('SELECT name, value FROM _eg_secrets').all() as {
        name: string;
        value: string;
      }[];
      expect(rows).toEqual([{ name: 'cursor', value: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    } finally {
      stored.close();
    }

    const restarted = await boot('shop.db');
    const after = await restarted.request(
      'GET',
      `/data/category?orderBy=name&cursor=${encodeURIComponent(next)}`,
    );
    expect(after.status, after.text).toBe(200);
    expect(after.body.data.map((record: { name: string }) => record.name)).toEqual(['c2', 'c3']);

    // Another database has another key: the cursor is not one of its own.
    const other = await boot('other.db');
    const foreign = await other.request(
      'GET',
      `/data/category?orderBy=name&cursor=${encodeURIComponent(next)}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.reason).toBe(
      'Parameter cursor is invalid: it was not issued by this service or was altered; pass meta.next of the previous page unchanged',
    );
  });
});
