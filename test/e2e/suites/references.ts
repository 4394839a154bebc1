/**
 * End-to-end cases of references that keep their integrity (SPEC §11) over HTTP, on the
 * `references` fixture, defined once and run against every storage driver: `references.test.ts`
 * (SQLite) and `references.postgres.test.ts`. Every answer is checked against the service's
 * OpenAPI document (the 409 of a RESTRICT delete included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

export function describeReferencesSuite(label: string, makeDriver: MakeDriver): void {
  describe(`references over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('references', {
        folder: `e2e-references-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
    });
    afterAll(async () => {
      await service?.close();
    });

    const post = (path: string, data: unknown) => service.request('POST', path, { body: { data } });

    it('refuses a record naming a missing record, on insert, list insert, replace and patch', async () => {
      expect((await post('/data/category', { name: 'tools' })).status).toBe(200);
      const single = await post('/data/product', { code: 'p1', category: 'toys' });
      expect(single.status).toBe(400);
      expect(single.body.error).toEqual({
        reason: 'Field category references CATEGORY record "toys", which does not exist',
        issues: [
          {
            path: ['category'],
            code: 'missing_reference',
            message: 'Field category references CATEGORY record "toys", which does not exist',
          },
        ],
      });
      const list = await post('/data/product', [{ code: 'p1', category: 'tools', tags: ['new'] }]);
      expect(list.status).toBe(400);
      expect(list.body.error.reason).toBe(
        'Record 0 of the list: Field tags references TAG record "new", which does not exist',
      );
      expect(list.body.error.issues[0].path).toEqual([0, 'tags', 0]);
      expect((await service.request('GET', '/data/product/p1')).status).toBe(404);

      expect((await post('/data/product', { code: 'p1', category: 'tools' })).status).toBe(200);
      const replaced = await service.request('PUT', '/data/product/p1', {
        body: { data: { code: 'p1', category: 'garden' } },
      });
      expect(replaced.status).toBe(400);
      const patched = await service.request('PATCH', '/data/product/p1', {
        body: { data: { category: 'garden' } },
      });
      expect(patched.status).toBe(400);
      expect((await service.request('GET', '/data/product/p1')).body.data.category).toBe('tools');
    });

    it('answers 409 for a RESTRICT delete, and deletes once the references are gone', async () => {
      await post('/data/category', { name: 'kitchen' });
      await post('/data/product', [
        { code: 'k1', category: 'kitchen' },
        { code: 'k2', category: 'kitchen' },
      ]);
      const refused = await service.request('DELETE', '/data/category/kitchen');
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        status: 'error',
        error: {
          reason: 'CATEGORY record "kitchen" is referenced by 2 PRODUCT records (field category)',
        },
      });
      await service.request('DELETE', '/data/product/k1');
      await service.request('PATCH', '/data/product/k2', { body: { data: { category: null } } });
      expect((await service.request('DELETE', '/data/category/kitchen')).status).toBe(200);
    });

    it('EMPTY clears a parent and removes a tag from every list', async () => {
      await post('/data/category', [{ name: 'home' }, { name: 'bath', parent: 'home' }]);
      await post('/data/tag', [{ name: 'sale' }, { name: 'eco' }]);
      await post('/data/product', { code: 't1', tags: ['sale', 'eco'] });
      expect((await service.request('DELETE', '/data/category/home')).status).toBe(200);
      expect((await service.request('GET', '/data/category/bath')).body.data).toEqual({
        name: 'bath',
      });
      const before = await service.request('GET', '/data/product/t1');
      expect((await service.request('DELETE', '/data/tag/sale')).status).toBe(200);
      const after = await service.request('GET', '/data/product/t1');
      expect(after.body.data.tags).toEqual(['eco']);
      expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    });

    it('DELETE takes the lines with their order', async () => {
      await post('/data/product', { code: 'o1' });
      await post('/data/order', [{ id: 1 }, { id: 2 }]);
      await post('/data/order_line', [
        { order: 1, no: 1, product: 'o1', quantity: 2 },
        { order: 1, no: 2, quantity: 1 },
        { order: 2, no: 1, quantity: 5 },
      ]);
      expect((await service.request('DELETE', '/data/order/1')).status).toBe(200);
      const lines = await service.request('GET', '/data/order_line');
      expect(lines.body.data).toEqual([{ order: 2, no: 1, quantity: 5 }]);
      // The product is free to go now that its line went with the order.
      expect((await service.request('DELETE', '/data/product/o1')).status).toBe(200);
    });

    it('a rename of the referenced record carries through', async () => {
      await post('/data/category', { name: 'old-name' });
      await post('/data/product', { code: 'r1', category: 'old-name' });
      const renamed = await service.request('PUT', '/data/category/old-name', {
        body: { data: { name: 'new-name' } },
      });
      expect(renamed.status).toBe(200);
      expect((await service.request('GET', '/data/product/r1')).body.data.category).toBe(
        'new-name',
      );
    });
  });
}

export function describeExpandSuite(label: string, makeDriver: MakeDriver): void {
  describe(`expand= over HTTP (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture('references', {
        folder: `e2e-references-expand-${label}`,
        ...(driver === undefined ? {} : { driver }),
      });
      const post = (path: string, data: unknown) =>
        service.request('POST', path, { body: { data } });
      await post('/data/category', [
        { name: 'all' },
        { name: 'tools', title: 'Tools', parent: 'all' },
        { name: 'toys', parent: 'all' },
        { name: 'empty' },
      ]);
      await post('/data/tag', [{ name: 'sale' }, { name: 'eco' }]);
      await post('/data/product', [
        { code: 'p1', name: 'hammer', price: 10, category: 'tools', tags: ['sale', 'eco'] },
        { code: 'p2', name: 'saw', price: 20, category: 'tools', replacement: 'gone' },
        { code: 'p3', name: 'ball', price: 5, category: 'toys', replacement: 'p1' },
        { code: 'p4', name: 'nail', price: 1 },
      ]);
      await post('/data/order', { id: 1 });
      await post('/data/order_line', [{ order: 1, no: 1, product: 'p1', quantity: 2 }]);
    });
    afterAll(async () => {
      await service?.close();
    });

    const get = (path: string, headers?: Record<string, string>) =>
      service.request('GET', path, headers === undefined ? {} : { headers });

    it('embeds the referenced record on GET by key, nested, arrays, null for none', async () => {
      const response = await get('/data/product/p1?expand=category.parent,tags,replacement');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        code: 'p1',
        name: 'hammer',
        price: 10,
        category: { name: 'tools', title: 'Tools', parent: { name: 'all' } },
        tags: [{ name: 'sale' }, { name: 'eco' }],
      });
      const missing = await get('/data/product/p2?expand=replacement,category');
      expect(missing.body.data).toMatchObject({ replacement: null, category: { name: 'tools' } });
      const line = await get('/data/order_line/1~1?expand=order,product.category');
      expect(line.body.data).toEqual({
        order: { id: 1 },
        no: 1,
        product: {
          code: 'p1',
          name: 'hammer',
          price: 10,
          category: { name: 'tools', title: 'Tools', parent: 'all' },
          tags: ['sale', 'eco'],
        },
        quantity: 2,
      });
    });

    it('embeds on lists, with filters, sorting, start/limit and cursors', async () => {
      const page = await get('/data/product?expand=category&orderBy=-price&limit=2');
      expect(page.status).toBe(200);
      expect(page.body.data.map((p: { code: string }) => p.code)).toEqual(['p2', 'p1']);
      expect(page.body.data[0].category).toEqual({ name: 'tools', title: 'Tools', parent: 'all' });
      const next = await get(
        `/data/product?expand=category&orderBy=-price&cursor=${encodeURIComponent(page.body.meta.next)}`,
      );
      expect(next.status).toBe(200);
      expect(
        next.body.data.map((p: { code: string; category?: unknown }) => [p.code, p.category]),
      ).toEqual([
        ['p3', { name: 'toys', parent: 'all' }],
        ['p4', undefined],
      ]);
      const filtered = await get('/data/product?category=toys&expand=category&start=0&limit=5');
      expect(filtered.body.data).toHaveLength(1);
      expect(filtered.body.data[0].category.name).toBe('toys');
    });

    it('embeds the referencing records of a reverse path, in key order, up to expandLimit', async () => {
      const response = await get('/data/category/tools?expand=PRODUCT.category');
      expect(response.status).toBe(200);
      expect(response.body.data['PRODUCT.category'].map((p: { code: string }) => p.code)).toEqual([
        'p1',
        'p2',
      ]);
      const limited = await get('/data/category/tools?expand=PRODUCT.category&expandLimit=1');
      expect(limited.body.data['PRODUCT.category']).toHaveLength(1);
      const list = await get('/data/category?expand=PRODUCT.category,parent');
      const byName = Object.fromEntries(
        list.body.data.map((c: Record<string, unknown>) => [c['name'], c]),
      );
      expect(byName['empty']['PRODUCT.category']).toEqual([]);
      expect(byName['toys']['PRODUCT.category'].map((p: { code: string }) => p.code)).toEqual([
        'p3',
      ]);
      expect(byName['toys'].parent).toEqual({ name: 'all' });
      const tags = await get('/data/tag/eco?expand=PRODUCT.tags');
      expect(tags.body.data['PRODUCT.tags'].map((p: { code: string }) => p.code)).toEqual(['p1']);
    });

    it('answers 400 naming an unknown or non-reference path', async () => {
      const unknown = await get('/data/product/p1?expand=categry');
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.reason).toBe(
        'Unknown expand path "categry": PRODUCT has no field "categry"',
      );
      const plain = await get('/data/product?expand=name');
      expect(plain.body.error.reason).toBe(
        'Unknown expand path "name": field name of PRODUCT is not a reference (ENTITY_REF)',
      );
      const deep = await get('/data/category/tools?expand=parent.parent.parent.parent');
      expect(deep.body.error.reason).toBe(
        'Unknown expand path "parent.parent.parent.parent": it is deeper than 3 levels',
      );
      const reverse = await get('/data/tag/eco?expand=PRODUCT.category');
      expect(reverse.body.error.reason).toBe(
        'Unknown expand path "PRODUCT.category": field category of PRODUCT references CATEGORY, not TAG',
      );
      expect((await get('/data/category/tools?expand=PRODUCT.category&expandLimit=0')).status).toBe(
        400,
      );
    });

    it('filters through a reference, on lists and counts, with any operator', async () => {
      const codes = async (query: string): Promise<string[]> => {
        const response = await get(`/data/product?${query}&orderBy=code`);
        expect(response.status).toBe(200);
        return response.body.data.map((p: { code: string }) => p.code);
      };
      expect(await codes('category.name=tools')).toEqual(['p1', 'p2']);
      expect(await codes('category.title[STARTS_WITH]=To')).toEqual(['p1', 'p2']);
      expect(await codes('category.parent=all')).toEqual(['p1', 'p2', 'p3']);
      expect(await codes('category.name=tools&category.name=toys')).toEqual(['p1', 'p2', 'p3']);
      // Absent matches only the negated operators, as an absent field does.
      expect(await codes('category.name[!]=tools')).toEqual(['p3', 'p4']);
      expect(await codes('category.name=tools&price[GT]=15&expand=category')).toEqual(['p2']);
      const count = await get('/entity/product/recordCounts?category.name[ENDS_WITH]=s');
      expect(count.body.data).toEqual({ count: 3 });
      const unknown = await get('/data/product?category.nope=1');
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.reason).toBe(
        'Unknown field nope in Entity CATEGORY (through reference category of Entity PRODUCT, parameter category.nope)',
      );
      const twice = await get('/data/product?category.parent.name=all');
      expect(twice.body.error.reason).toBe(
        'Filtering goes through one reference only: category.parent.name goes through two (parameter category.parent.name)',
      );
      const lines = await get('/data/order_line?product.name=hammer');
      expect(lines.body.data).toHaveLength(1);
    });

    it('tags the representation: the ETag covers the embedded records', async () => {
      const first = await get('/data/product/p3?expand=category');
      const tag = first.headers.get('etag')!;
      expect(tag).not.toBe((await get('/data/product/p3')).headers.get('etag'));
      expect((await get('/data/product/p3?expand=category', { 'If-None-Match': tag })).status).toBe(
        304,
      );
      await service.request('PATCH', '/data/category/toys', { body: { data: { title: 'Toys' } } });
      const changed = await get('/data/product/p3?expand=category', { 'If-None-Match': tag });
      expect(changed.status).toBe(200);
      expect(changed.body.data.category.title).toBe('Toys');
      expect(changed.headers.get('etag')).not.toBe(tag);
    });
  });
}
