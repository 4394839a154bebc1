/** The end-to-end references suite (`suites/references.ts`) on SQLite in memory. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  KeyValues,
  ListQuery,
  StoredRecord,
  TableDescriptor,
} from '../../runtime/src/driver.js';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { suiteAuthenticator, token } from './suites/access.js';
import { describeExpandSuite, describeReferencesSuite } from './suites/references.js';

describeReferencesSuite('sqlite', () => undefined);
describeExpandSuite('sqlite', () => undefined);

/** Counts the reads the service asks of its storage. */
class CountingDriver extends SqliteDriver {
  reads = 0;
  override async list(table: TableDescriptor, query: ListQuery): Promise<StoredRecord[]> {
    this.reads++;
    return super.list(table, query);
  }
  override async get(table: TableDescriptor, key: KeyValues): Promise<StoredRecord | undefined> {
    this.reads++;
    return super.get(table, key);
  }
}

describe('expand= reads once per path per page (no N+1)', () => {
  const driver = new CountingDriver({ filename: ':memory:' });
  let service: BootedService;
  beforeAll(async () => {
    service = await bootFixture('references', { folder: 'e2e-references-reads', driver });
    const post = (path: string, data: unknown) => service.request('POST', path, { body: { data } });
    await post(
      '/data/category',
      Array.from({ length: 10 }, (_, i) => ({ name: `c${i}`, ...(i > 0 ? { parent: 'c0' } : {}) })),
    );
    await post('/data/tag', [{ name: 'a' }, { name: 'b' }]);
    await post(
      '/data/product',
      Array.from({ length: 100 }, (_, i) => ({
        code: `p${String(i).padStart(3, '0')}`,
        category: `c${i % 10}`,
        tags: ['a', 'b'],
      })),
    );
  });
  afterAll(async () => {
    await service?.close();
  });

  it('a page of 100 with three paths takes four reads', async () => {
    driver.reads = 0;
    const page = await service.request(
      'GET',
      '/data/product?expand=category.parent,tags&limit=100',
    );
    expect(page.body.data).toHaveLength(100);
    expect(page.body.data[15].category).toEqual({ name: 'c5', parent: { name: 'c0' } });
    // The page, its categories, their parents, the tags.
    expect(driver.reads).toBe(4);
    driver.reads = 0;
    const reverse = await service.request(
      'GET',
      '/data/category?expand=PRODUCT.category&expandLimit=3',
    );
    expect(reverse.body.data[0]['PRODUCT.category']).toHaveLength(3);
    expect(driver.reads).toBe(2);
  });
});

describe('expand= under access rules', () => {
  let service: BootedService;
  const as = async (subject: string, roles: readonly string[]) => ({
    Authorization: `Bearer ${await token(subject, roles)}`,
  });
  beforeAll(async () => {
    service = await bootFixture(
      {
        name: 'references-access',
        schemas: ['fixtures/references/schema.yaml'],
        access: 'fixtures/references/access.yaml',
      },
      { folder: 'e2e-references-access', auth: suiteAuthenticator() },
    );
    const admin = await as('root', ['admin']);
    const post = (path: string, data: unknown) =>
      service.request('POST', path, { body: { data }, headers: admin });
    await post('/data/category', { name: 'tools' });
    await post('/data/product', { code: 'p1', name: 'Hammer', category: 'tools' });
    await post('/data/order', [
      { id: 1, customer: 'alice' },
      { id: 2, customer: 'bob' },
    ]);
    await post('/data/order_line', [
      { order: 1, no: 1, product: 'p1' },
      { order: 2, no: 1, product: 'p1' },
    ]);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers 401 or 403 for the whole request when the caller may not read an expanded entity', async () => {
    const anonymous = await service.request('GET', '/data/product/p1?expand=category');
    expect(anonymous.status).toBe(401);
    const viewer = await service.request('GET', '/data/product?expand=category', {
      headers: await as('val', ['viewer']),
    });
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.reason).toBe('Role required for GET_BYID on Entity CATEGORY');
    const staff = await service.request('GET', '/data/product/p1?expand=category', {
      headers: await as('sam', ['staff']),
    });
    expect(staff.status).toBe(200);
    expect(staff.body.data.category).toEqual({ name: 'tools' });
    // Reverse: PRODUCT is public to list.
    const reverse = await service.request('GET', '/data/category/tools?expand=PRODUCT.category', {
      headers: await as('sam', ['staff']),
    });
    expect(reverse.body.data['PRODUCT.category']).toHaveLength(1);
  });

  it('serves an OpenAPI document without references to the schemas of entities it hides', async () => {
    const response = await service.request('GET', '/openapi.json');
    const text = JSON.stringify(response.body);
    const schemas = Object.keys(response.body.components.schemas as object);
    expect(schemas).not.toContain('CategoryExpanded');
    expect(schemas).toContain('ProductExpanded');
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      expect(schemas, name).toContain(name);
    }
  });

  it('applies the owner rule of the expanded entity: records of others read as null or absent', async () => {
    const alice = await as('alice', []);
    const lines = await service.request('GET', '/data/order_line?expand=order', { headers: alice });
    expect(lines.status).toBe(200);
    expect(lines.body.data.map((line: { order: unknown }) => line.order)).toEqual([
      { id: 1, customer: 'alice' },
      null,
    ]);
    const product = await service.request('GET', '/data/product/p1?expand=ORDER_LINE.product', {
      headers: alice,
    });
    expect(product.body.data['ORDER_LINE.product']).toHaveLength(2);
  });
});
