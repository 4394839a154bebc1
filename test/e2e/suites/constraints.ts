/**
 * End-to-end cases of field constraints (SPEC §16) over HTTP, on the `constraints` fixture,
 * defined once and run against every storage driver: `constraints.test.ts` (SQLite) and
 * `constraints.postgres.test.ts`. Each write path (POST one and list, PUT, PATCH) refuses a value
 * outside its limits with a 400 and an issue per field, and stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

export function describeConstraintsSuite(label: string, makeDriver: MakeDriver): void {
  describe(`field constraints over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('constraints', {
        folder: `e2e-constraints-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const post = (data: unknown) => service.request('POST', '/data/book', { body: { data } });

    it('refuses a value below a minimum with the reason and an issue naming the limit', async () => {
      const answer = await post({ id: 'b1', tags: ['a'], pages: 0 });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toEqual({
        reason: 'Field pages of Entity BOOK must be at least 1, not 0',
        issues: [
          {
            path: ['pages'],
            code: 'constraint_violated',
            message: 'Field pages of Entity BOOK must be at least 1, not 0',
          },
        ],
      });
      expect((await service.request('GET', '/data/book/b1')).status).toBe(404);
    });

    it('lists an issue per field that breaks a rule, nested ones included', async () => {
      const answer = await post({
        id: 'B 1',
        title: 'x',
        pages: 5001,
        rating: 5.5,
        price: '0.30000000000000004',
        published: '1449-12-31',
        printedAt: '1999-12-31T23:59:59Z',
        tags: ['a', 'b', 'c', 'd'],
        dimensions: { width: 0 },
      });
      expect(answer.status).toBe(400);
      const issues = answer.body.error.issues as { path: unknown[]; message: string }[];
      expect(issues.map((issue) => issue.message)).toEqual([
        'Field id of Entity BOOK must match the pattern ^[a-z][a-z0-9-]*$, not "B 1"',
        'Field title of Entity BOOK must be at least 2 characters long, not 1',
        'Field pages of Entity BOOK must be at most 5000, not 5001',
        'Field rating of Entity BOOK must be at most 5, not 5.5',
        'Field price of Entity BOOK must be at most "0.3", not "0.30000000000000004"',
        'Field published of Entity BOOK must be at least "1450-01-01", not "1449-12-31"',
        'Field printedAt of Entity BOOK must be at least "2000-01-01T00:00:00.000Z", not "1999-12-31T23:59:59.000Z"',
        'Field tags of Entity BOOK must have at most 3 items, not 4',
        'Field dimensions.width of Entity BOOK must be at least 1, not 0',
      ]);
      expect(issues.map((issue) => issue.path)).toEqual([
        ['id'],
        ['title'],
        ['pages'],
        ['rating'],
        ['price'],
        ['published'],
        ['printedAt'],
        ['tags'],
        ['dimensions', 'width'],
      ]);
    });

    it('accepts every value at its limits', async () => {
      const answer = await post({
        id: 'b-limits',
        title: 'ab',
        pages: 5000,
        rating: 0,
        price: '0.300',
        published: '2100-12-31',
        printedAt: '2000-01-01T00:00:00Z',
        tags: ['abcde', 'b', 'c'],
        dimensions: { width: 1 },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.data.price).toBe('0.3');
    });

    it('checks array elements and the count of elements', async () => {
      const long = await post({ id: 'b2', tags: ['toolong'] });
      expect(long.status).toBe(400);
      expect(long.body.error.issues[0]).toMatchObject({
        path: ['tags', 0],
        message: 'Field tags[0] of Entity BOOK must be at most 5 characters long, not 7',
      });
      const empty = await post({ id: 'b2', tags: [] });
      expect(empty.body.error.reason).toBe(
        'Field tags of Entity BOOK must have at least 1 item, not 0',
      );
    });

    it('refuses a list insert, a replace and a patch that break a rule, and keeps the record', async () => {
      const list = await post([
        { id: 'l1', tags: ['a'] },
        { id: 'l2', tags: ['a'], pages: -3 },
      ]);
      expect(list.status).toBe(400);
      expect(list.body.error.reason).toBe(
        'Record 1 of the list: Field pages of Entity BOOK must be at least 1, not -3',
      );
      expect(list.body.error.issues[0]).toMatchObject({
        path: [1, 'pages'],
        code: 'constraint_violated',
      });
      expect((await service.request('GET', '/data/book/l1')).status).toBe(404);

      expect((await post({ id: 'keep', tags: ['a'], pages: 10 })).status).toBe(200);
      const replaced = await service.request('PUT', '/data/book/keep', {
        body: { data: { id: 'keep', tags: ['a'], pages: 0 } },
      });
      expect(replaced.status).toBe(400);
      expect(replaced.body.error.reason).toBe(
        'Field pages of Entity BOOK must be at least 1, not 0',
      );
      const patched = await service.request('PATCH', '/data/book/keep', {
        body: { data: { title: 'a very long title' } },
      });
      expect(patched.status).toBe(400);
      expect(patched.body.error.reason).toBe(
        'Field title of Entity BOOK must be at most 10 characters long, not 17',
      );
      expect((await service.request('GET', '/data/book/keep')).body.data).toEqual({
        id: 'keep',
        tags: ['a'],
        pages: 10,
      });
    });

    it('describes the constraints in the OpenAPI document', async () => {
      const answer = await service.request('GET', '/openapi.json');
      const book = answer.body.components.schemas.Book.properties;
      expect(book.pages).toMatchObject({ minimum: 1, maximum: 5000 });
      expect(book.title).toMatchObject({ minLength: 2, maxLength: 10 });
      expect(book.id).toMatchObject({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 20 });
      expect(book.tags).toMatchObject({ minItems: 1, maxItems: 3, items: { maxLength: 5 } });
      expect(book.price).toMatchObject({ 'x-maximum': '0.3' });
    });
  });
}

export function describeInsertDefaultsSuite(label: string, makeDriver: MakeDriver): void {
  describe(`insert defaults over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('constraints', {
        folder: `e2e-insert-defaults-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const post = (data: unknown) => service.request('POST', '/data/ticket', { body: { data } });
    const get = async (id: string) =>
      (await service.request('GET', `/data/ticket/${id}`)).body.data as unknown;
    const filled = (id: string) => ({ id, status: 'OPEN', priority: 3, labels: ['new'] });

    it('fills absent and null fields on POST, one record and a list, in the answer and stored', async () => {
      const one = await post({ id: 't1' });
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual(filled('t1'));
      expect(await get('t1')).toEqual(filled('t1'));
      const list = await post([
        { id: 't2', priority: null },
        { id: 't3', status: 'closed', labels: [] },
      ]);
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([
        filled('t2'),
        { id: 't3', status: 'CLOSED', priority: 3, labels: [] },
      ]);
    });

    it('fills them on a PUT that creates, not on a PUT that replaces', async () => {
      const created = await service.request('PUT', '/data/ticket/t4', {
        body: { data: { id: 't4' } },
      });
      expect(created.status).toBe(200);
      expect(await get('t4')).toEqual(filled('t4'));
      const replaced = await service.request('PUT', '/data/ticket/t4', {
        body: { data: { id: 't4', status: 'CLOSED' } },
      });
      expect(replaced.status).toBe(200);
      expect(await get('t4')).toEqual({ id: 't4', status: 'CLOSED' });
      // A required field is still required when a PUT replaces.
      const missing = await service.request('PUT', '/data/ticket/t4', {
        body: { data: { id: 't4' } },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error.issues).toEqual([
        { path: ['status'], code: 'required', message: 'Field status is required' },
      ]);
    });

    it('does not fill them on PATCH', async () => {
      await post({ id: 't5', priority: 5 });
      const patched = await service.request('PATCH', '/data/ticket/t5', {
        body: { data: { priority: null, labels: null } },
      });
      expect(patched.status).toBe(200);
      expect(await get('t5')).toEqual({ id: 't5', status: 'OPEN' });
    });

    it('shows the defaults in the OpenAPI document', async () => {
      const schemas = (await service.request('GET', '/openapi.json')).body.components.schemas;
      expect(schemas.TicketInput.properties.priority.default).toBe(3);
      expect(schemas.TicketInput.properties.labels.default).toEqual(['new']);
    });
  });
}
