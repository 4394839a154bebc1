/**
 * No list is unbounded: without a limit a list longer than the service's maximum page size
 * (MAX_PAGE_SIZE) answers its first page with meta.next, so Gemini clients still get every record
 * by following it; a larger limit is a 400 naming the cap. Defined once and run against every
 * storage driver: `page-cap.test.ts` (SQLite) and `page-cap.postgres.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/**
 * Registers the page-cap cases under `describe(label)`; the shop service (MAX_PAGE_SIZE 10) is
 * generated into `test/output/e2e-page-cap-<label>` and booted on `makeDriver()`'s driver.
 */
export function describePageCapSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('shop', {
        folder: `e2e-page-cap-${label}`,
        maxPageSize: 10,
        ...(driver === undefined ? {} : { driver }),
      });
      const categories = Array.from({ length: 25 }, (_, n) => ({
        name: `c${String(n).padStart(2, '0')}`,
      }));
      const inserted = await service.request('POST', '/data/category', {
        body: { data: categories },
      });
      expect(inserted.status, inserted.text).toBe(200);
    });
    afterAll(async () => {
      // (undefined when beforeAll failed; its error is the one to report)
      await service?.close();
    });

    describe('the maximum page size', () => {
      it('a list without a limit stops at the cap with meta.next; following it gets every record', async () => {
        const names: string[] = [];
        let response = await service.request('GET', '/data/category?orderBy=name');
        expect(response.body.meta).toEqual({ limit: 10, next: expect.any(String) });
        for (;;) {
          expect(response.status, response.text).toBe(200);
          names.push(...response.body.data.map((record: { name: string }) => record.name));
          const next = response.body.meta.next as string | undefined;
          if (next === undefined) break;
          response = await service.request(
            'GET',
            `/data/category?orderBy=name&cursor=${encodeURIComponent(next)}`,
          );
        }
        expect(names).toHaveLength(25);
        expect(new Set(names).size).toBe(25);
      });

      it('a list that fits one page answers as before, without paging meta', async () => {
        const response = await service.request('GET', '/data/category?name[STARTS_WITH]=c0');
        expect(response.body.data).toHaveLength(10);
        expect(response.body.meta).toEqual({});
      });

      it('a limit above the cap is a 400 naming it; up to it is fine', async () => {
        const refused = await service.request('GET', '/data/category?limit=11');
        expect(refused.status).toBe(400);
        expect(refused.body.error.reason).toBe(
          'Parameter limit is 11, more than the maximum page size of 10 for Entity CATEGORY; page with cursor (meta.next)',
        );
        const huge = await service.request('GET', '/data/category?limit=999999999999999');
        expect(huge.status).toBe(400);
        const ok = await service.request('GET', '/data/category?limit=10&start=20');
        expect(ok.body.data).toHaveLength(5);
      });
    });
  });
}
