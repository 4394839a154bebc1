/** The end-to-end soft delete suite (`suites/soft-delete.ts`) on SQLite in memory, and its access rules. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { suiteAuthenticator, token } from './suites/access.js';
import { describeSoftDeleteSuite } from './suites/soft-delete.js';

describeSoftDeleteSuite('sqlite', () => undefined);

describe('soft delete under access rules', () => {
  let service: BootedService;
  const as = async (subject: string, roles: readonly string[]) => ({
    Authorization: `Bearer ${await token(subject, roles)}`,
  });
  beforeAll(async () => {
    service = await bootFixture(
      {
        name: 'soft-delete-access',
        schemas: ['fixtures/soft-delete/schema.yaml'],
        access: 'fixtures/soft-delete/access.yaml',
      },
      { folder: 'e2e-soft-delete-access', auth: suiteAuthenticator() },
    );
    await service.request('POST', '/data/customer', {
      body: { data: [{ id: 'alice' }, { id: 'bob' }, { id: 'c1' }] },
      headers: await as('root', ['admin']),
    });
    for (const subject of ['alice', 'bob'])
      await service.request('POST', '/data/note', {
        body: { data: { id: `n-${subject}`, text: subject } },
        headers: await as(subject, ['staff']),
      });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('deleted lists, counts and restores need the DELETE role', async () => {
    const staff = await as('sam', ['staff']);
    const admin = await as('root', ['admin']);
    expect((await service.request('DELETE', '/data/customer/c1', { headers: staff })).status).toBe(
      403,
    );
    expect((await service.request('DELETE', '/data/customer/c1', { headers: admin })).status).toBe(
      200,
    );
    // A reader sees the record gone, and may not look at what was deleted.
    expect((await service.request('GET', '/data/customer/c1', { headers: staff })).status).toBe(
      404,
    );
    for (const path of [
      '/data/customer?deleted=only',
      '/entity/customer/recordCounts?deleted=include',
    ]) {
      const refused = await service.request('GET', path, { headers: staff });
      expect(refused.status).toBe(403);
      expect(refused.body.error.reason).toBe('Role required for DELETE on Entity CUSTOMER');
    }
    expect((await service.request('GET', '/data/customer?deleted=only')).status).toBe(401);
    const restore = await service.request('POST', '/data/customer/c1/restore', { headers: staff });
    expect(restore.status).toBe(403);
    expect(restore.body.error.reason).toBe('Role required for DELETE on Entity CUSTOMER');
    const listed = await service.request('GET', '/data/customer?deleted=only', { headers: admin });
    expect(listed.body.data).toEqual([{ id: 'c1' }]);
    expect(
      (await service.request('POST', '/data/customer/c1/restore', { headers: admin })).status,
    ).toBe(200);
  });

  it('the owner rule applies to deleted records: only the owner sees and restores them', async () => {
    const alice = await as('alice', ['staff']);
    const bob = await as('bob', ['staff']);
    expect((await service.request('DELETE', '/data/note/n-alice', { headers: alice })).status).toBe(
      200,
    );
    expect(
      (await service.request('GET', '/data/note?deleted=only', { headers: bob })).body.data,
    ).toEqual([]);
    expect(
      (await service.request('GET', '/data/note?deleted=only', { headers: alice })).body.data,
    ).toEqual([{ id: 'n-alice', text: 'alice', customer: 'alice' }]);
    expect(
      (await service.request('POST', '/data/note/n-alice/restore', { headers: bob })).status,
    ).toBe(404);
    expect(
      (await service.request('DELETE', '/data/note/n-alice?purge=true', { headers: bob })).status,
    ).toBe(404);
    expect(
      (await service.request('POST', '/data/note/n-alice/restore', { headers: alice })).status,
    ).toBe(200);
  });
});
