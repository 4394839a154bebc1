/** The end-to-end history suite (`suites/history.ts`) on SQLite in memory, with events on and off, and its access rules. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../helpers/service.js';
import { suiteAuthenticator, token } from './suites/access.js';
import { describeHistorySuite } from './suites/history.js';

describeHistorySuite('sqlite', () => undefined);
describeHistorySuite('sqlite', () => undefined, { eventsOff: true });

describe('record history under access rules', () => {
  let service: BootedService;
  const as = async (subject: string, roles: readonly string[]) => ({
    Authorization: `Bearer ${await token(subject, roles)}`,
  });
  beforeAll(async () => {
    service = await bootFixture(
      {
        name: 'history-access',
        schemas: ['fixtures/soft-delete/schema.yaml'],
        access: 'fixtures/soft-delete/access.yaml',
      },
      { folder: 'e2e-history-access', auth: suiteAuthenticator() },
    );
    await service.request('POST', '/data/customer', {
      body: { data: [{ id: 'alice' }, { id: 'bob' }] },
      headers: await as('root', ['admin']),
    });
    for (const subject of ['alice', 'bob']) {
      const headers = await as(subject, ['staff']);
      await service.request('POST', '/data/note', {
        body: { data: { id: `n-${subject}`, text: 'one' } },
        headers,
      });
      await service.request('PATCH', `/data/note/n-${subject}`, {
        body: { data: { text: 'two' } },
        headers,
      });
    }
  });
  afterAll(async () => {
    await service?.close();
  });

  it('keeps the subject of each write as by', async () => {
    const versions = await service.request('GET', '/data/note/n-alice/history', {
      headers: await as('alice', ['staff']),
    });
    expect(versions.status).toBe(200);
    expect(
      versions.body.data.map((v: { version: number; op: string; by: string | null }) => [
        v.version,
        v.op,
        v.by,
      ]),
    ).toEqual([
      [2, 'updated', 'alice'],
      [1, 'created', 'alice'],
    ]);
    const customers = await service.request('GET', '/data/customer/bob/history', {
      headers: await as('sam', ['staff']),
    });
    expect(customers.body.data.map((v: { by: string | null }) => v.by)).toEqual(['root']);
  });

  it('history and asOf need GET_BYID: 401 without credentials', async () => {
    const now = encodeURIComponent(new Date().toISOString());
    for (const path of ['/data/customer/bob/history', `/data/customer/bob?asOf=${now}`]) {
      const refused = await service.request('GET', path);
      expect(refused.status, path).toBe(401);
    }
  });

  it('the owner rule: someone else’s record has no history and no past for you', async () => {
    const bob = await as('bob', ['staff']);
    const now = encodeURIComponent(new Date().toISOString());
    const history = await service.request('GET', '/data/note/n-alice/history', { headers: bob });
    expect(history.status).toBe(404);
    expect(history.body.error.reason).toBe('EntityRecord with id n-alice not found for NOTE');
    const past = await service.request('GET', `/data/note/n-alice?asOf=${now}`, { headers: bob });
    expect(past.status).toBe(404);
    const own = await service.request('GET', `/data/note/n-bob?asOf=${now}`, { headers: bob });
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual({ id: 'n-bob', text: 'two', customer: 'bob' });
    // An admin sees every record's history.
    const admin = await service.request('GET', '/data/note/n-alice/history', {
      headers: await as('root', ['admin']),
    });
    expect(admin.status).toBe(200);
  });
});
