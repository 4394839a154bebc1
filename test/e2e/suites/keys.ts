/**
 * End-to-end cases of composite and INTEGER logical keys, defined once and run against every
 * storage driver: `keys.test.ts` (SQLite) and `keys.postgres.test.ts`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootFixture, type BootedService } from '../../helpers/service.js';
import type { MakeDriver } from './crud.js';

/**
 * Registers the key cases under `describe(label)`; each fixture service is generated into
 * `test/output/e2e-<fixture>-<label>` and booted on a fresh driver from `makeDriver()`.
 */
export function describeKeysSuite(label: string, makeDriver: MakeDriver): void {
  describe(label, () => {
    describe('composite keys', () => {
      let service: BootedService;
      beforeAll(async () => {
        const driver = await makeDriver();
        service = await bootFixture('composite-key', {
          folder: `e2e-composite-key-${label}`,
          ...(driver === undefined ? {} : { driver }),
        });
      });
      afterAll(async () => {
        // (undefined when beforeAll failed; its error is the one to report)
        await service?.close();
      });

      it('joins key values with the separator into the id', async () => {
        const inserted = await service.request('POST', '/data/order_line', {
          body: { data: { orderId: 'A1', lineNo: '2', product: 'bolt', quantity: 3 } },
        });
        expect(inserted.status).toBe(200);
        const response = await service.request('GET', '/data/order_line/A1~2');
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({
          orderId: 'A1',
          lineNo: 2,
          product: 'bolt',
          quantity: 3,
        });
        expect((await service.request('GET', '/data/order_line/A1~3')).status).toBe(404);
        expect((await service.request('GET', '/data/order_line/A1')).status).toBe(404);
        expect((await service.request('GET', '/data/order_line/A1~x')).status).toBe(404);
      });

      it('rejects a key value containing the separator', async () => {
        const response = await service.request('POST', '/data/order_line', {
          body: { data: { orderId: 'A~1', lineNo: 1, product: 'nut', quantity: 1 } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual([
          {
            path: ['orderId'],
            code: 'invalid_key',
            message: 'Key field orderId may not contain the key separator "~"',
          },
        ]);
      });

      it('renames through PUT when a key part changes', async () => {
        await service.request('POST', '/data/order_line', {
          body: { data: { orderId: 'B1', lineNo: 1, product: 'x', quantity: 1 } },
        });
        const response = await service.request('PUT', '/data/order_line/B1~1', {
          body: { data: { orderId: 'B1', lineNo: 5, product: 'x', quantity: 1 } },
        });
        expect(response.status).toBe(200);
        expect((await service.request('GET', '/data/order_line/B1~1')).status).toBe(404);
        expect((await service.request('GET', '/data/order_line/B1~5')).status).toBe(200);
      });

      it('keys by DATE, ENUM, BOOL and SELECT with a custom separator', async () => {
        const data = {
          day: '2024-01-31',
          slot: 'morning',
          overtime: 'false',
          site: 'north',
          worker: 'Ada',
        };
        const inserted = await service.request('POST', '/data/shift', { body: { data } });
        expect(inserted.status).toBe(200);
        expect(inserted.body.data).toEqual({
          day: '2024-01-31',
          slot: 'MORNING',
          overtime: false,
          site: 'north',
          worker: 'Ada',
        });
        const response = await service.request('GET', '/data/shift/2024-01-31:MORNING:false:north');
        expect(response.status).toBe(200);
        expect(response.body.data.worker).toBe('Ada');
        const deleted = await service.request(
          'DELETE',
          '/data/shift/2024-01-31:MORNING:false:north',
        );
        expect(deleted.status).toBe(200);
      });

      it('bounds the whole record id of a composite key to 1 024 bytes, on every driver alike', async () => {
        // Random text does not compress: three parts that each fit make one index entry of the
        // primary key beyond PostgreSQL's limit (about 2 700 bytes), which answered 500 there.
        const part = (): string => randomBytes(750).toString('base64url'); // 1 000 characters
        const translation = (namespace: string) => ({
          namespace,
          messageKey: part(),
          locale: part(),
          text: 'Hello',
        });
        const reason =
          'The key of Entity TRANSLATION (namespace, messageKey, locale) is 3002 bytes long as a record id; a record id holds at most 1024 bytes';
        const one = await service.request('POST', '/data/translation', {
          body: { data: translation(part()) },
        });
        expect(one.status, one.text).toBe(400);
        expect(one.body.error.reason).toBe(reason);
        expect(one.body.error.issues).toEqual([{ path: [], code: 'invalid_key', message: reason }]);
        const list = await service.request('POST', '/data/translation', {
          body: {
            data: [
              { namespace: 'n', messageKey: 'k', locale: 'l', text: 'Hi' },
              translation(part()),
            ],
          },
        });
        expect(list.status, list.text).toBe(400);
        expect(list.body.error.issues).toEqual([
          { path: [1], code: 'invalid_key', message: reason },
        ]);
        const long = translation(part());
        const put = await service.request(
          'PUT',
          `/data/translation/${[long.namespace, long.messageKey, long.locale].join('~')}`,
          { body: { data: long } },
        );
        expect(put.status, put.text).toBe(400);
        expect(put.body.error.reason).toBe(reason);
        expect(
          (await service.request('GET', '/entity/translation/recordCounts')).body.data,
        ).toEqual({ count: 0 });

        // 340 + 340 + 340 characters and two separators: 1 022 bytes fit.
        const fits = {
          namespace: 'n'.repeat(340),
          messageKey: 'k'.repeat(340),
          locale: 'l'.repeat(340),
          text: 'Hi',
        };
        const stored = await service.request('POST', '/data/translation', { body: { data: fits } });
        expect(stored.status, stored.text).toBe(200);
        const id = [fits.namespace, fits.messageKey, fits.locale].join('~');
        expect((await service.request('GET', `/data/translation/${id}`)).body.data).toEqual(fits);
      });

      it('treats key fields as required even when the schema does not mark them', async () => {
        const response = await service.request('POST', '/data/shift', {
          body: { data: { day: '2024-01-31', slot: 'NIGHT', site: 'south', worker: 'Bo' } },
        });
        expect(response.status).toBe(400);
        expect(response.body.error.issues).toEqual([
          { path: ['overtime'], code: 'required', message: 'Field overtime is required' },
        ]);
      });
    });

    describe('INTEGER keys', () => {
      let service: BootedService;
      beforeAll(async () => {
        const driver = await makeDriver();
        service = await bootFixture('integer-key', {
          folder: `e2e-integer-key-${label}`,
          ...(driver === undefined ? {} : { driver }),
        });
      });
      afterAll(async () => {
        // (undefined when beforeAll failed; its error is the one to report)
        await service?.close();
      });

      it('stores, reads, replaces and deletes records keyed by an integer', async () => {
        const inserted = await service.request('POST', '/data/customer', {
          body: { data: { id: '42', name: 'Ada' } },
        });
        expect(inserted.status).toBe(200);
        expect(inserted.body.data).toEqual({ id: 42, name: 'Ada' });
        expect((await service.request('GET', '/data/customer/42')).body.data).toEqual({
          id: 42,
          name: 'Ada',
        });
        expect((await service.request('GET', '/data/customer/042')).body.data).toEqual({
          id: 42,
          name: 'Ada',
        });
        expect((await service.request('GET', '/data/customer/abc')).status).toBe(404);
        expect((await service.request('GET', '/data/customer/4.2')).status).toBe(404);
        const replaced = await service.request('PUT', '/data/customer/42', {
          body: { data: { id: 42, name: 'Ada L.' } },
        });
        expect(replaced.body.data).toEqual({ id: 42, name: 'Ada L.' });
        expect((await service.request('DELETE', '/data/customer/42')).body.data).toEqual({
          id: 42,
          name: 'Ada L.',
        });
      });

      it('rejects a fractional key and reports duplicates by the integer id', async () => {
        const fractional = await service.request('POST', '/data/customer', {
          body: { data: { id: 1.5, name: 'x' } },
        });
        expect(fractional.body.error.reason).toBe(
          'Unable to convert field id - INTEGER - for value 1.5',
        );
        await service.request('POST', '/data/customer', { body: { data: { id: 7, name: 'x' } } });
        const duplicate = await service.request('POST', '/data/customer', {
          body: { data: { id: '7', name: 'y' } },
        });
        expect(duplicate.body.error.reason).toBe(
          'Logical key 7 for Entity CUSTOMER already exists',
        );
      });

      it('references an integer-keyed entity by number', async () => {
        const response = await service.request('POST', '/data/invoice', {
          body: { data: { number: 1, customer: '42', total: '10.50', issuedOn: '2024-05-01' } },
        });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({
          number: 1,
          customer: 42,
          total: '10.5',
          issuedOn: '2024-05-01',
        });
        const bad = await service.request('POST', '/data/invoice', {
          body: { data: { number: 2, customer: 'c-42', total: 1, issuedOn: '2024-05-01' } },
        });
        expect(bad.body.error.reason).toBe(
          'Unable to convert field customer - ENTITY_REF - for value "c-42"',
        );
      });
    });
  });
}
