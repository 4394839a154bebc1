/**
 * End-to-end cases of the edge REST configurations (SPEC §4.5): entities switched off entirely,
 * left only GET_BYID or only NEW, a single-record entity left only GET_BYID (fixture
 * `rest-edges`), and Gemini's test schema under a REST configuration shaped like a Gemini
 * application's — MULTIPLE_ENTITIES switched off, START_LIMIT windows per entity (fixture
 * `gemini-rest`). Defined once and run against every storage driver: `rest-edges.test.ts`
 * (SQLite) and `rest-edges.postgres.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/** A request with a body when the method takes one. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The methods of the data routes, as a client would try them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * What each method answers on a path: a status, and for 403/405 the reason's REST method or
 * the `Allow` list.
 */
type Expected = Partial<Record<(typeof METHODS)[number], number | string>>;

/** Boots `fixture` on a fresh driver of the suite for the cases registered by `cases`. */
function withService(
  fixture: string,
  label: string,
  makeDriver: MakeDriver,
  cases: (service: () => BootedService) => void,
): void {
  describe(`${fixture} (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture(fixture, {
        folder: `e2e-${fixture}-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });
    cases(() => service);
  });
}

/**
 * Checks every method of `path`: a string names the REST method of the expected 403
 * (`Method <it> not allowed for Entity <entity>`), a number is the expected status; a method
 * left out must answer 405 with `Allow` listing `allow`. OPTIONS must answer 200 with `allow`.
 */
async function expectMethods(
  service: BootedService,
  entity: string,
  path: string,
  expected: Expected,
  allow: readonly string[],
): Promise<void> {
  for (const method of METHODS) {
    const want = expected[method] ?? 405;
    const response = await service.request(
      method,
      path,
      BODY_METHODS.has(method) ? { body: { data: {} } } : {},
    );
    const what = `${method} ${path}`;
    if (typeof want === 'string') {
      expect(response.status, what).toBe(403);
      if (method !== 'HEAD')
        expect(response.body, what).toEqual({
          status: 'error',
          error: { reason: `Method ${want} not allowed for Entity ${entity}` },
        });
    } else {
      expect(response.status, what).toBe(want);
    }
    if (want === 405) {
      expect(response.headers.get('allow'), what).toBe(allow.join(', '));
      expect(response.body.error.reason, what).toMatch(
        new RegExp(`^Method ${method} is not allowed here for Entity ${entity}`),
      );
    }
  }
  const options = await service.request('OPTIONS', path);
  expect(options.status, `OPTIONS ${path}`).toBe(200);
  expect(options.headers.get('allow'), `OPTIONS ${path}`).toBe(allow.join(', '));
  expect(options.body, `OPTIONS ${path}`).toEqual({ status: 'success', data: { allow } });
}

/** Registers the cases under `describe(label)` on drivers from `makeDriver()`. */
export function describeRestEdgesSuite(label: string, makeDriver: MakeDriver): void {
  withService('rest-edges', label, makeDriver, (service) => {
    it('an entity with no method answers 403 for each of them, 405 for what no route has', async () => {
      await expectMethods(
        service(),
        'ARCHIVE',
        '/data/archive',
        { GET: 'GET_LIST', HEAD: 'GET_LIST', POST: 'NEW', PATCH: 'UPDATE', DELETE: 'DELETE' },
        [],
      );
      await expectMethods(
        service(),
        'ARCHIVE',
        '/data/ARCHIVE/a1',
        { GET: 'GET_BYID', HEAD: 'GET_BYID', PUT: 'UPDATE', PATCH: 'UPDATE', DELETE: 'DELETE' },
        [],
      );
      const counts = await service().request('GET', '/entity/archive/recordCounts');
      expect(counts.status).toBe(403);
      expect(counts.body.error.reason).toBe('Method GET_LIST not allowed for Entity ARCHIVE');
      // Its table exists all the same: /summary and /entity describe it.
      const entity = await service().request('GET', '/entity/archive');
      expect(entity.status).toBe(200);
      expect(entity.body.data.restConfig.allowedMethods).toEqual([]);
    });

    it('an entity with only GET_BYID reads by key and refuses everything else', async () => {
      await expectMethods(
        service(),
        'LOOKUP',
        '/data/lookup',
        { GET: 'GET_LIST', HEAD: 'GET_LIST', POST: 'NEW', PATCH: 'UPDATE', DELETE: 'DELETE' },
        [],
      );
      await expectMethods(
        service(),
        'LOOKUP',
        '/data/lookup/eur',
        { GET: 404, HEAD: 404, PUT: 'UPDATE', PATCH: 'UPDATE', DELETE: 'DELETE' },
        ['GET', 'HEAD'],
      );
      const missing = await service().request('GET', '/data/lookup/eur');
      expect(missing.body.error.reason).toBe('EntityRecord with id eur not found for LOOKUP');
    });

    it('an entity with only NEW takes records and gives none back', async () => {
      const posted = await service().request('POST', '/data/inbox', {
        body: { data: { sender: 'ada', sentOn: '2026-11-27', body: 'hello' } },
      });
      expect(posted.status).toBe(200);
      expect(posted.body.data).toEqual({ sender: 'ada', sentOn: '2026-11-27', body: 'hello' });
      // An upsert may update records: it needs UPDATE as well as NEW.
      const upserted = await service().request('POST', '/data/inbox?onConflict=replace', {
        body: { data: { sender: 'ada', sentOn: '2026-11-28', body: 'again' } },
      });
      expect(upserted.status).toBe(403);
      expect(upserted.body.error.reason).toBe('Method UPDATE not allowed for Entity INBOX');
      await expectMethods(
        service(),
        'INBOX',
        '/data/inbox',
        { GET: 'GET_LIST', HEAD: 'GET_LIST', POST: 400, PATCH: 'UPDATE', DELETE: 'DELETE' },
        ['POST'],
      );
      await expectMethods(
        service(),
        'INBOX',
        '/data/inbox/ada~2026-11-27',
        { GET: 'GET_BYID', HEAD: 'GET_BYID', PUT: 'UPDATE', PATCH: 'UPDATE', DELETE: 'DELETE' },
        [],
      );
    });

    it('a soft-delete entity without DELETE: no delete, restore, purge or look at deleted records', async () => {
      const posted = await service().request('POST', '/data/memo', {
        body: { data: { id: 'm1', text: 'kept' } },
      });
      expect(posted.status).toBe(200);
      for (const [method, path] of [
        ['DELETE', '/data/memo/m1'],
        ['DELETE', '/data/memo/m1?purge=true'],
        ['POST', '/data/memo/m1/restore'],
        ['POST', '/data/memo/m2/restore'],
        ['GET', '/data/memo?deleted=only'],
        ['GET', '/data/memo?deleted=include'],
        ['GET', '/entity/memo/recordCounts?deleted=include'],
        ['DELETE', '/data/memo?text=kept'],
      ] as const) {
        const refused = await service().request(method, path);
        expect(refused.status, `${method} ${path}`).toBe(403);
        expect(refused.body.error.reason, `${method} ${path}`).toBe(
          'Method DELETE not allowed for Entity MEMO',
        );
      }
      expect((await service().request('GET', '/data/memo/m1')).body.data).toEqual({
        id: 'm1',
        text: 'kept',
      });
      // The restore path's OPTIONS does not offer what the configuration refuses.
      const options = await service().request('OPTIONS', '/data/memo/m1/restore');
      expect(options.status).toBe(200);
      const allow = (options.headers.get('allow') ?? '').split(', ');
      expect(allow).not.toContain('POST');
      expect(allow).not.toContain('DELETE');
    });

    it('a single-record entity with only GET_BYID', async () => {
      await expectMethods(
        service(),
        'BANNER',
        '/data/banner',
        { GET: 'GET_LIST', HEAD: 'GET_LIST' },
        [],
      );
      await expectMethods(
        service(),
        'BANNER',
        '/data/banner/_singlerec_lk',
        { GET: 404, HEAD: 404, PUT: 'UPDATE', PATCH: 'UPDATE' },
        ['GET', 'HEAD'],
      );
    });
  });

  withService('gemini-rest', label, makeDriver, (service) => {
    it('entities switched off together answer 403 for every method and for recordCounts', async () => {
      for (const [entity, id] of [
        ['SITE_SETTINGS', 'current'],
        ['REGION_DEFAULTS', '_singlerec_lk'],
      ] as const) {
        const path = `/data/${entity.toLowerCase()}`;
        await expectMethods(service(), entity, path, { GET: 'GET_LIST', HEAD: 'GET_LIST' }, []);
        await expectMethods(
          service(),
          entity,
          `${path}/${id}`,
          { GET: 'GET_BYID', HEAD: 'GET_BYID', PUT: 'UPDATE', PATCH: 'UPDATE' },
          [],
        );
        const counts = await service().request('GET', `/entity/${entity}/recordCounts`);
        expect(counts.status, entity).toBe(403);
        expect(counts.body.error.reason).toBe(`Method GET_LIST not allowed for Entity ${entity}`);
      }
    });

    it('pages PRODUCT with its own window: default limit 20, start + limit at most 200', async () => {
      const products = Array.from({ length: 30 }, (_, index) => ({
        code: `p${String(index).padStart(2, '0')}`,
        name: `Product ${String(29 - index).padStart(2, '0')}`,
      }));
      const inserted = await service().request('POST', '/data/product', {
        body: { data: products },
      });
      expect(inserted.status).toBe(200);
      const first = await service().request('GET', '/data/product');
      expect(first.status).toBe(200);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.meta).toMatchObject({ start: 0, limit: 20 });
      // defaultOrder [name]: p29 is "Product 00".
      expect(first.body.data[0].code).toBe('p29');
      const deep = await service().request('GET', '/data/product?start=180&limit=20');
      expect(deep.status).toBe(200);
      expect(deep.body.data).toEqual([]);
      const tooDeep = await service().request('GET', '/data/product?start=181&limit=20');
      expect(tooDeep.status).toBe(400);
      expect(tooDeep.body.error.reason).toBe(
        'Parameters start + limit add up to 201, more than the maximum window of 200 for Entity PRODUCT; page deeper with cursor (meta.next)',
      );
    });

    it('CATEGORY is read-only: 405 before 403, with Allow as OPTIONS lists it', async () => {
      const created = await service().request('POST', '/data/category', {
        body: { data: { id: 'tools', name: 'Tools' } },
      });
      expect(created.status).toBe(403);
      expect(created.body.error.reason).toBe('Method NEW not allowed for Entity CATEGORY');
      await expectMethods(
        service(),
        'CATEGORY',
        '/data/category',
        { GET: 200, HEAD: 200, POST: 'NEW', PATCH: 'UPDATE', DELETE: 'DELETE' },
        ['GET', 'HEAD'],
      );
      const page = await service().request('GET', '/data/category');
      expect(page.body.meta).toMatchObject({ start: 0, limit: 100 });
    });

    it('SINGLEREC with only GET_BYID cannot be created or changed', async () => {
      await expectMethods(
        service(),
        'SINGLEREC',
        '/data/singlerec/_singlerec_lk',
        { GET: 404, HEAD: 404, PUT: 'UPDATE', PATCH: 'UPDATE' },
        ['GET', 'HEAD'],
      );
    });
  });
}
