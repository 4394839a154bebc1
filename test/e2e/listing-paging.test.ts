/**
 * Keyset (cursor) paging of GET /data/{entity} over HTTP (SPEC §4.4): walking every page with
 * `meta.next` while other requests insert and delete records returns each record that existed
 * for the whole walk exactly once and no record twice; and a cursor is refused (400) with
 * another query, when altered, or together with `start`.
 *
 * LINE has a composite key (order STRING, line INTEGER) and an optional INTEGER `amount`, so
 * walks cross ties, absent values and both sort directions.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonResponse } from '../helpers/http.js';
import type { BootedService } from '../helpers/service.js';
import {
  bootListing,
  LISTING_CURSOR_SECRET,
  describeOnListingDrivers,
} from '../helpers/listing.js';

interface Line {
  order: string;
  line: number;
  amount?: number;
}

let service: BootedService;

const idOf = (record: Line): string => `${record.order}~${record.line}`;

/** A small deterministic PRNG (mulberry32), so a failing walk can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let nextLine = 1000;

function makeLine(rand: () => number, order?: string): Line {
  const record: Line = {
    order: order ?? ['A', 'B', 'C'][Math.floor(rand() * 3)]!,
    line: nextLine++,
  };
  if (rand() >= 0.2) record.amount = Math.floor(rand() * 12);
  return record;
}

async function getJson(path: string): Promise<JsonResponse> {
  return service.request('GET', path);
}

/** Every LINE id in the storage right now (one unpaged list). */
async function allIds(query = ''): Promise<string[]> {
  const response = await getJson(`/data/LINE?${query}`);
  expect(response.status, response.text).toBe(200);
  return (response.body.data as Line[]).map(idOf);
}

describeOnListingDrivers((driverName) => {
  beforeAll(async () => {
    service = await bootListing(driverName, 'e2e-listing-paging');
    const rand = random(7);
    const seed: Line[] = [];
    for (const order of ['A', 'B', 'C']) {
      for (let line = 1; line <= 60; line++) {
        const record: Line = { order, line };
        if (rand() >= 0.2) record.amount = Math.floor(rand() * 12);
        seed.push(record);
      }
    }
    const response = await service.request('POST', '/data/LINE', { body: { data: seed } });
    expect(response.status, response.text).toBe(200);
  });
  afterAll(async () => {
    await service.close();
  });

  describe('walking every page with meta.next while others write', () => {
    const walks: readonly (readonly [string, string, number])[] = [
      ['key order', '', 7],
      ['amount ascending (ties, absent first)', 'orderBy=amount', 7],
      ['amount descending (absent last)', 'orderBy=-amount', 5],
      ['mixed directions', 'orderBy=-amount,line', 6],
      ['mixed directions with key fields', 'orderBy=amount,-line,order', 9],
      ['descending key field first', 'orderBy=-order', 8],
      ['key fields reversed', 'orderBy=line,order', 11],
      ['filtered', 'amount[GTE]=4&order[NOT]=B&orderBy=-amount', 4],
      ['filtered with OR', 'order=A&order=C&orderBy=amount,-line', 10],
      ['one record per page', 'orderBy=-amount,-line&amount[LT]=3', 1],
    ];

    it.each(walks)('%s (%s, limit %i)', async (_title, query, limit) => {
      const rand = random(query.length * 31 + limit);
      const before = new Set(await allIds());
      const deleted = new Set<string>();
      const seen: string[] = [];
      let path = `/data/LINE?${query}${query === '' ? '' : '&'}limit=${limit}`;
      for (let page = 0; page < 500; page++) {
        // Writes run while the page is read: inserts anywhere in the order, and deletes of records
        // already returned, not yet returned, or inserted during the walk.
        const existing = [...before, ...seen].filter((id) => !deleted.has(id));
        const victims = [0, 1].map(() => existing[Math.floor(rand() * existing.length)]!);
        for (const victim of victims) deleted.add(victim);
        const inserts = [makeLine(rand), makeLine(rand), makeLine(rand)];
        const [response] = await Promise.all([
          getJson(path),
          service.request('POST', '/data/LINE', { body: { data: inserts } }),
          ...[...new Set(victims)].map((victim) =>
            service.request('DELETE', `/data/LINE/${victim}`),
          ),
        ]);
        expect(response.status, response.text).toBe(200);
        const records = response.body.data as Line[];
        expect(records.length).toBeLessThanOrEqual(limit);
        seen.push(...records.map(idOf));
        const next = response.body.meta.next as string | undefined;
        expect(response.body.meta.limit).toBe(limit);
        if (next === undefined) break;
        expect(records).toHaveLength(limit);
        path = `/data/LINE?${query}${query === '' ? '' : '&'}cursor=${encodeURIComponent(next)}`;
      }

      // No record twice.
      const duplicates = seen.filter((id, index) => seen.indexOf(id) !== index);
      expect(duplicates).toEqual([]);

      // Every record that matched and existed for the whole walk, exactly once, in the order a
      // fresh list gives them (their sort values never changed).
      const matchingNow = await allIds(query);
      const stable = matchingNow.filter((id) => before.has(id) && !deleted.has(id));
      const seenStable = seen.filter((id) => before.has(id) && !deleted.has(id));
      expect(seenStable).toEqual(stable);
      expect(stable.length).toBeGreaterThan(0);
    });
  });

  describe('cursor rules', () => {
    /** The `meta.next` of the first page of `query`. */
    async function firstCursor(query: string): Promise<string> {
      const response = await getJson(`/data/LINE?${query}`);
      expect(response.status, response.text).toBe(200);
      const next = response.body.meta.next as string | undefined;
      expect(next).toBeDefined();
      return next!;
    }

    async function expect400(path: string, mention = 'cursor'): Promise<string> {
      const response = await getJson(path);
      expect(response.status, `${path}: ${response.text}`).toBe(400);
      expect(response.body.status).toBe('error');
      expect(response.body.error.reason).toContain(mention);
      return response.body.error.reason as string;
    }

    /** A cursor with a valid checksum around any payload (the format is not secret). */
    /** A cursor signed like the service signs them, with its key (or another one). */
    function forge(payload: unknown, key = LISTING_CURSOR_SECRET): string {
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      const sum = createHmac('sha256', key).update(body).digest('base64url').slice(0, 22);
      return encodeURIComponent(`${body}.${sum}`);
    }

    function payloadOf(cursor: string): { v: number; q: string; l: number; a: unknown[] } {
      return JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8'));
    }

    it('continues with the same filters and order given in another order and spelling', async () => {
      const cursor = encodeURIComponent(
        await firstCursor('order=a&order=B&amount[gte]=1&orderBy=-amount&limit=3'),
      );
      const response = await getJson(
        `/data/LINE?orderBy=-amount&amount[GTE]=1&order[EQUALS]=B&order=a&cursor=${cursor}`,
      );
      // STRING values are case-sensitive: order=a matches nothing, but is part of the query.
      expect(response.status, response.text).toBe(200);
      expect(response.body.data).toHaveLength(3);
    });

    it('uses the page size of the cursor unless the request gives one', async () => {
      const cursor = encodeURIComponent(await firstCursor('orderBy=amount&limit=4'));
      const same = await getJson(`/data/LINE?orderBy=amount&cursor=${cursor}`);
      expect(same.body.data).toHaveLength(4);
      expect(same.body.meta).toEqual({ limit: 4, next: expect.any(String) });
      const other = await getJson(`/data/LINE?orderBy=amount&limit=9&cursor=${cursor}`);
      expect(other.body.data).toHaveLength(9);
      expect(other.body.meta.limit).toBe(9);
      expect(other.body.data.slice(0, 4)).toEqual(same.body.data);
    });

    it('continues an offset page too', async () => {
      const page = await getJson('/data/LINE?orderBy=-amount&start=20&limit=5');
      const all = await allIds('orderBy=-amount');
      expect(page.body.data.map(idOf)).toEqual(all.slice(20, 25));
      const next = await getJson(
        `/data/LINE?orderBy=-amount&cursor=${encodeURIComponent(page.body.meta.next)}`,
      );
      expect(next.body.data.map(idOf)).toEqual(all.slice(25, 30));
      expect(next.body.meta.start).toBeUndefined();
    });

    it('refuses a cursor with other filters', async () => {
      const cursor = encodeURIComponent(await firstCursor('amount[GTE]=1&limit=3'));
      await expect400(`/data/LINE?amount[GTE]=2&cursor=${cursor}`);
      await expect400(`/data/LINE?cursor=${cursor}`);
      await expect400(`/data/LINE?amount[GTE]=1&order=A&cursor=${cursor}`);
      await expect400(`/data/LINE?amount[GT]=1&cursor=${cursor}`);
    });

    it('refuses a cursor with another order', async () => {
      const cursor = encodeURIComponent(await firstCursor('orderBy=amount&limit=3'));
      await expect400(`/data/LINE?orderBy=-amount&cursor=${cursor}`);
      await expect400(`/data/LINE?orderBy=amount,line&cursor=${cursor}`);
      await expect400(`/data/LINE?cursor=${cursor}`);
    });

    it('refuses a cursor of another entity', async () => {
      const owners = await service.request('POST', '/data/OWNER', {
        body: {
          data: [
            { id: 1, name: 'one' },
            { id: 2, name: 'two' },
          ],
        },
      });
      expect(owners.status).toBe(200);
      const groups = await service.request('POST', '/data/GROUP', {
        body: { data: [{ name: 'x' }, { name: 'y' }] },
      });
      expect(groups.status).toBe(200);
      const ownerPage = await getJson('/data/OWNER?limit=1');
      await expect400(`/data/GROUP?cursor=${encodeURIComponent(ownerPage.body.meta.next)}`);
    });

    it('refuses cursor together with start, and a repeated cursor', async () => {
      const cursor = encodeURIComponent(await firstCursor('limit=3'));
      const reason = await expect400(`/data/LINE?start=0&cursor=${cursor}`);
      expect(reason).toContain('start');
      await expect400(`/data/LINE?cursor=${cursor}&start=3&limit=3`, 'start');
      await expect400(`/data/LINE?cursor=${cursor}&cursor=${cursor}`);
    });

    it('refuses an altered or made-up cursor', async () => {
      const cursor = await firstCursor('orderBy=amount&limit=3');
      const [body, sum] = cursor.split('.') as [string, string];
      const flip = (text: string, at: number): string =>
        text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
      for (const bad of [
        `${flip(body, 5)}.${sum}`,
        `${flip(body, body.length - 2)}.${sum}`,
        `${body}.${flip(sum, 0)}`,
        body,
        `${body}.${sum}.x`,
        `${body}.`,
        `.${sum}`,
        'x',
        '....',
        `${body}${sum}`,
        `${body}==.${sum}`,
        '%',
      ]) {
        await expect400(`/data/LINE?orderBy=amount&cursor=${encodeURIComponent(bad)}`);
      }
    });

    it('refuses a forged cursor whose values do not fit the fields (400, not 500)', async () => {
      const cursor = await firstCursor('orderBy=amount&limit=3');
      const payload = payloadOf(cursor);
      expect(payload).toMatchObject({ v: 1, l: 3 });
      expect(payload.a).toHaveLength(3); // amount, order, line
      const sound = await getJson(`/data/LINE?orderBy=amount&cursor=${forge(payload)}`);
      expect(sound.status).toBe(200);
      const variants: unknown[] = [
        { ...payload, a: ['ten', 'A', 1] },
        { ...payload, a: [1.5, 'A', 1] },
        { ...payload, a: [1, 'A', 'one'] },
        { ...payload, a: [1, 2, 1] },
        { ...payload, a: [1, null, 1] },
        { ...payload, a: [1, 'A', null] },
        { ...payload, a: [1, 'A', 2 ** 53] },
        { ...payload, a: [1, 'A\u0000', 1] },
        { ...payload, a: [{}, 'A', 1] },
        { ...payload, a: [[1], 'A', 1] },
        { ...payload, a: [1, 'A'] },
        { ...payload, a: [1, 'A', 1, 2] },
        { ...payload, a: 'x' },
        { ...payload, l: 0 },
        { ...payload, l: -1 },
        { ...payload, l: 'ten' },
        { ...payload, l: 1.5 },
        { ...payload, v: 2 },
        { ...payload, q: 'x' },
        { a: payload.a },
        [1, 2, 3],
        null,
        'cursor',
      ];
      for (const variant of variants) {
        await expect400(`/data/LINE?orderBy=amount&cursor=${forge(variant)}`);
      }
      const notJson = Buffer.from('{"v":1,').toString('base64url');
      const sum = createHmac('sha256', LISTING_CURSOR_SECRET)
        .update(notJson)
        .digest('base64url')
        .slice(0, 22);
      await expect400(`/data/LINE?orderBy=amount&cursor=${notJson}.${sum}`);
    });

    it('refuses a cursor signed with another key: only the service can make cursors', async () => {
      const cursor = await firstCursor('orderBy=amount&limit=3');
      const payload = payloadOf(cursor);
      const response = await getJson(
        `/data/LINE?orderBy=amount&cursor=${forge({ ...payload, l: 2 ** 53 - 1 }, 'guessed')}`,
      );
      expect(response.status).toBe(400);
      expect(response.body.error.reason).toBe(
        'Parameter cursor is invalid: it was not issued by this service or was altered; pass meta.next of the previous page unchanged',
      );
    });

    it('accepts a cursor with sound values signed with the key: it only chooses where the page starts', async () => {
      const cursor = await firstCursor('orderBy=amount&limit=3');
      const payload = payloadOf(cursor);
      const forged = forge({ ...payload, a: [null, 'B', 0] });
      const response = await getJson(`/data/LINE?orderBy=amount&cursor=${forged}`);
      expect(response.status).toBe(200);
      const all = await allIds('orderBy=amount');
      const firstB = all.findIndex((id) => id.startsWith('B~'));
      expect(response.body.data.map(idOf)).toEqual(all.slice(firstB, firstB + 3));
    });

    it('caps the page size of a validly signed cursor at the maximum page size', async () => {
      const cursor = await firstCursor('orderBy=amount&limit=3');
      const payload = payloadOf(cursor);
      const response = await getJson(
        `/data/LINE?orderBy=amount&cursor=${forge({ ...payload, l: 2 ** 53 - 1 })}`,
      );
      expect(response.status, response.text).toBe(200);
      // MAX_PAGE_SIZE (default 1000), not the page size the cursor claims.
      expect(response.body.meta.limit).toBe(1000);
      const all = await allIds('orderBy=amount');
      expect(response.body.data.map(idOf)).toEqual(all.slice(3));
    });

    it('issues no next on the last page and none without a limit', async () => {
      const count = (await getJson('/entity/LINE/recordCounts')).body.data.count as number;
      const last = await getJson(`/data/LINE?start=${count - 2}&limit=2`);
      expect(last.body.data).toHaveLength(2);
      expect(last.body.meta).toEqual({ start: count - 2, limit: 2 });
      const all = await getJson('/data/LINE');
      expect(all.body.meta).toEqual({});
      expect(all.body.data).toHaveLength(count);
    });
  });
});
