/**
 * Field rules under access rules (SPEC §16, §8), on the `field-rules` fixture with its access file,
 * run against every storage driver: createdBy/updatedBy hold the principal's subject (kept and
 * moved like the times), and a unique clash names the holding record only to a caller who may
 * read records by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import { suiteAuthenticator, token } from './access.js';
import type { MakeDriver } from './crud.js';

export function describeGeneratedAccessSuite(label: string, makeDriver: MakeDriver): void {
  describe(`field rules under access rules (${label})`, () => {
    let service: BootedService;
    beforeAll(async () => {
      const driver = await makeDriver();
      service = await bootFixture(
        {
          name: 'field-rules-access',
          schemas: ['fixtures/field-rules/schema.yaml'],
          access: 'fixtures/field-rules/access.yaml',
        },
        {
          folder: `e2e-field-rules-access-${label}`,
          auth: suiteAuthenticator(),
          ...(driver === undefined ? {} : { driver }),
        },
      );
    });
    afterAll(async () => {
      await service?.close();
    });

    const as = async (subject: string, roles: string[] = []) => ({
      Authorization: `Bearer ${await token(subject, roles)}`,
    });

    it('sets createdBy and updatedBy from the principal; PATCH by another moves only updatedBy', async () => {
      const created = await service.request('POST', '/data/ticket', {
        body: { data: { title: 'by alice' } },
        headers: await as('alice'),
      });
      expect(created.status).toBe(200);
      const record = created.body.data as Record<string, string>;
      expect(record.createdBy).toBe('alice');
      expect(record.updatedBy).toBe('alice');
      const patched = await service.request('PATCH', `/data/ticket/${record.id}`, {
        body: { data: { title: 'by bob', createdBy: 'mallory', updatedBy: 'mallory' } },
        headers: await as('bob'),
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data.createdBy).toBe('alice');
      expect(patched.body.data.updatedBy).toBe('bob');
      const refused = await service.request('POST', '/data/ticket', {
        body: { data: { title: 'x', createdBy: 'mallory' } },
        headers: await as('alice'),
      });
      expect(refused.status).toBe(400);
    });

    it('names the record holding a unique value only to a caller who may read it by id', async () => {
      const first = await service.request('POST', '/data/customer', {
        body: { data: { id: 'c1', email: 'x@y.z' } },
        headers: await as('alice'),
      });
      expect(first.status).toBe(200);
      const hidden = await service.request('POST', '/data/customer', {
        body: { data: { id: 'c2', email: 'x@y.z' } },
        headers: await as('bob'),
      });
      expect(hidden.status).toBe(400);
      expect(hidden.body.error.reason).toBe(
        'Value "x@y.z" of field email is already used by another record of Entity CUSTOMER',
      );
      const shown = await service.request('POST', '/data/customer', {
        body: { data: { id: 'c3', email: 'x@y.z' } },
        headers: await as('root', ['admin']),
      });
      expect(shown.body.error.reason).toBe(
        'Value "x@y.z" of field email is already used by Entity CUSTOMER record "c1"',
      );
    });
  });
}
