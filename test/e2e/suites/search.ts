/**
 * End-to-end cases of full-text search (`search:`, `q=` of a list, SPEC §17) over HTTP, on the
 * `search` fixture, defined once and run against every storage driver: `search.test.ts` (SQLite)
 * and `search.postgres.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

const ARTICLES = [
  {
    id: 'a1',
    title: 'Steel hammer',
    body: 'A heavy hammer with a steel head',
    status: 'LIVE',
    rating: 5,
  },
  { id: 'a2', title: 'Wooden hammer', body: 'Soft mallet for joinery', status: 'DRAFT', rating: 3 },
  { id: 'a3', title: 'Café crème', body: 'Über naïve résumé', status: 'LIVE', rating: 4 },
  { id: 'a4', title: 'Steel steel steel', body: 'steel', status: 'LIVE', rating: 2 },
  {
    id: 'a5',
    title: 'Steel ruler',
    body: 'Measures length in many units of measure, made of stainless material, long and thin',
    status: 'DRAFT',
    rating: 1,
  },
  { id: 'a6', title: 'Hammock', body: 'For resting in the garden', status: 'LIVE', rating: 4 },
];

export function describeSearchSuite(label: string, makeDriver: MakeDriver): void {
  describe(`full-text search over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('search', {
        folder: `e2e-search-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
      const created = await service.request('POST', '/data/article', {
        body: { data: ARTICLES },
      });
      expect(created.status, created.text).toBe(200);
      await service.request('POST', '/data/note', { body: { data: { id: 'n1', text: 'steel' } } });
    });
    afterAll(async () => {
      await service?.close();
    });

    const list = async (query: string) => {
      const response = await service.request('GET', `/data/article?${query}`);
      expect(response.status, response.text).toBe(200);
      return response;
    };
    const ids = async (query: string): Promise<string[]> =>
      (await list(query)).body.data.map((article: { id: string }) => article.id);
    const q = (text: string): string => `q=${encodeURIComponent(text)}`;

    it('matches the records holding every word, the last one as a prefix', async () => {
      expect(await ids(q('hammer steel'))).toEqual(['a1']);
      expect(await ids(q('steel ham'))).toEqual(['a1']);
      expect((await ids(q('hamm'))).sort()).toEqual(['a1', 'a2', 'a6']);
      // Only the last word is a prefix.
      expect(await ids(q('hamm steel'))).toEqual([]);
      expect(await ids(q('nothing'))).toEqual([]);
      // Words are found in any searched field.
      expect(await ids(q('joinery'))).toEqual(['a2']);
    });

    it('ignores case and diacritics, in the records and in q', async () => {
      expect((await ids(q('HAMMER'))).sort()).toEqual(['a1', 'a2']);
      expect(await ids(q('cafe creme'))).toEqual(['a3']);
      expect(await ids(q('CAFÉ'))).toEqual(['a3']);
      expect(await ids(q('uber naive resu'))).toEqual(['a3']);
      expect(await ids(q('über'))).toEqual(['a3']);
    });

    it('orders by relevance unless orderBy is given', async () => {
      expect(await ids(q('steel'))).toEqual(['a4', 'a1', 'a5']);
      expect(await ids(`${q('steel')}&orderBy=rating`)).toEqual(['a5', 'a4', 'a1']);
      expect(await ids(`${q('steel')}&orderBy=-rating`)).toEqual(['a1', 'a4', 'a5']);
    });

    it('pages in relevance order by offset and cursor, and by keyset with orderBy', async () => {
      const first = await list(`${q('steel')}&limit=2`);
      expect(first.body.data.map((a: { id: string }) => a.id)).toEqual(['a4', 'a1']);
      const next = first.body.meta.next as string;
      expect(typeof next).toBe('string');
      const second = await list(`${q('steel')}&limit=2&cursor=${encodeURIComponent(next)}`);
      expect(second.body.data.map((a: { id: string }) => a.id)).toEqual(['a5']);
      expect(second.body.meta.next).toBeUndefined();
      expect(await ids(`${q('steel')}&start=1&limit=1`)).toEqual(['a1']);
      // A cursor pages only the search that made it.
      const other = await service.request(
        'GET',
        `/data/article?${q('hammer')}&limit=2&cursor=${encodeURIComponent(next)}`,
      );
      expect(other.status).toBe(400);
      const sorted = await list(`${q('steel')}&orderBy=rating&limit=2`);
      const rest = await list(
        `${q('steel')}&orderBy=rating&limit=2&cursor=${encodeURIComponent(sorted.body.meta.next)}`,
      );
      expect(rest.body.data.map((a: { id: string }) => a.id)).toEqual(['a1']);
    });

    it('is ANDed with filters and filter= expressions, in lists and counts', async () => {
      expect(await ids(`${q('steel')}&status=LIVE`)).toEqual(['a4', 'a1']);
      expect(
        await ids(`${q('steel')}&filter=${encodeURIComponent('rating >= 2 and rating < 5')}`),
      ).toEqual(['a4']);
      const counted = await list(`${q('steel')}&count=true&limit=1`);
      expect(counted.body.meta.count).toBe(3);
      const count = async (query: string) =>
        (await service.request('GET', `/entity/article/recordCounts?${query}`)).body.data.count;
      expect(await count(q('steel'))).toBe(3);
      expect(await count(`${q('steel')}&status=DRAFT`)).toBe(1);
      expect(await count(q('zzz'))).toBe(0);
    });

    it('follows creates, updates and deletes at once', async () => {
      const put = await service.request('PUT', '/data/article/a2', {
        body: { data: { id: 'a2', title: 'Wooden hammer', body: 'Now with a steel band' } },
      });
      expect(put.status, put.text).toBe(200);
      expect((await ids(q('steel band'))).sort()).toEqual(['a2']);
      expect(await ids(q('joinery'))).toEqual([]);
      expect((await service.request('DELETE', '/data/article/a6')).status).toBe(200);
      expect(await ids(q('hammock'))).toEqual([]);
      await service.request('POST', '/data/article', {
        body: { data: { id: 'a7', title: 'Hammock stand', body: 'Steel frame' } },
      });
      expect(await ids(q('hammock'))).toEqual(['a7']);
      // A renamed record is found under its new key.
      const renamed = await service.request('PATCH', '/data/article/a7', {
        body: { data: { id: 'a8' } },
      });
      expect(renamed.status, renamed.text).toBe(200);
      expect(await ids(q('hammock stand'))).toEqual(['a8']);
      // A write that fails leaves the search as it was.
      const refused = await service.request('POST', '/data/article', {
        body: {
          data: [
            { id: 'a9', title: 'Steel anvil' },
            { id: 'a1', title: 'Duplicate' },
          ],
        },
      });
      expect(refused.status, refused.text).toBe(400);
      expect(await ids(q('anvil'))).toEqual([]);
      expect((await ids(q('steel'))).sort()).toEqual(['a1', 'a2', 'a4', 'a5', 'a8']);
    });

    it('answers 400 for q on an entity without search, and for q without a word', async () => {
      const response = await service.request('GET', `/data/note?${q('steel')}`);
      expect(response.status).toBe(400);
      expect(response.body.error.reason).toBe(
        'Parameter q searches the text of records, but Entity NOTE declares no search fields',
      );
      const counted = await service.request('GET', `/entity/note/recordCounts?${q('steel')}`);
      expect(counted.status).toBe(400);
      for (const text of ['', '   ', '"*"', '-()']) {
        const empty = await service.request('GET', `/data/article?${q(text)}`);
        expect(empty.status, text).toBe(400);
        expect(empty.body.error.reason).toMatch(/^Parameter q holds no word/);
      }
    });

    it('treats every character of q as text, never as query syntax', async () => {
      const hostile = [
        '"steel',
        'steel"',
        'steel OR hammer',
        'steel NOT hammer',
        'NEAR(steel hammer)',
        'steel*',
        '*steel',
        '-steel',
        'steel -hammer',
        '(steel',
        'steel)',
        "steel'; DROP TABLE article; --",
        'title:steel',
        'steel & hammer | !x',
        "steel:* & 'x'",
        'steel\\',
        '^steel',
        'st\u0000eel',
        'x'.repeat(300),
      ];
      for (const text of hostile) {
        const response = await service.request('GET', `/data/article?${q(text)}`);
        expect([200, 400], `${text}: ${response.text}`).toContain(response.status);
      }
      // Operators are plain words: all of them must be present.
      expect(await ids(q('steel OR joinery'))).toEqual([]);
      expect(await ids(q('"heavy" "hammer"'))).toEqual(['a1']);
      expect(await ids(q('heavy-hammer'))).toEqual(['a1']);
      expect(await ids(q('title:heavy hammer'))).toEqual([]);
    });
  });
}
