/**
 * The storage-driver contract of references that keep their integrity (SPEC §11), run by each
 * driver's test file. Pinned here, the same on every driver:
 *
 * - A written value (insert, list insert, update, rename) that names no record of the target
 *   throws `ReferenceMissingError` (400) and writes nothing; a list insert names the record's
 *   position, an array its element. A record may name itself or another record of its own list.
 * - Deleting a referenced record: RESTRICT throws `ReferencedRecordError` (409, with the number
 *   of referencing records) and deletes nothing; EMPTY clears the field or removes the array
 *   elements; DELETE deletes the referencing records, recursively, through cycles without
 *   looping. Renaming a referenced record rewrites the references.
 * - Every record a cascade changes or deletes gets its change event, in the same commit as the
 *   delete or rename (consecutive seqs), and its version moves on.
 * - Under concurrent inserts and deletes no reference to a missing record ever commits.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ColumnDescriptor,
  ReferenceDescriptor,
  StorageDriver,
  StoredChange,
  StoredFields,
  TableDescriptor,
} from '../../runtime/src/driver.js';
import { isHttpError } from '../../runtime/src/errors.js';

const text = (name: string, required = false): ColumnDescriptor => ({
  name,
  kind: 'text',
  fieldType: 'STRING',
  required,
  indexed: false,
});
const ref = (
  name: string,
  kind: 'text' | 'integer' = 'text',
  required = false,
): ColumnDescriptor => ({
  name,
  kind,
  fieldType: 'ENTITY_REF',
  required,
  indexed: true,
});
const refs = (name: string): ColumnDescriptor => ({
  name,
  kind: 'json',
  fieldType: 'ARRAY',
  required: false,
  indexed: false,
});
const link = (
  field: string,
  entity: string,
  onDelete: ReferenceDescriptor['onDelete'],
  array = false,
): ReferenceDescriptor => ({ field, entity, onDelete, array });

export const CATEGORY: TableDescriptor = {
  entity: 'CATEGORY',
  table: 'category',
  key: ['name'],
  columns: [text('name', true), ref('parent')],
  references: [link('parent', 'CATEGORY', 'EMPTY')],
};
export const SHELF: TableDescriptor = {
  entity: 'SHELF',
  table: 'shelf',
  key: ['aisle', 'slot'],
  keySeparator: '~',
  columns: [
    text('aisle', true),
    { name: 'slot', kind: 'integer', fieldType: 'INTEGER', required: true, indexed: false },
  ],
};
export const PRODUCT: TableDescriptor = {
  entity: 'PRODUCT',
  table: 'product',
  key: ['code'],
  columns: [
    text('code', true),
    ref('category'),
    ref('home'),
    refs('extra'),
    ref('shelf'),
    ref('node'),
    text('name'),
  ],
  references: [
    link('node', 'NODE', 'RESTRICT'),
    link('category', 'CATEGORY', 'RESTRICT'),
    link('home', 'CATEGORY', 'EMPTY'),
    link('extra', 'CATEGORY', 'EMPTY', true),
    link('shelf', 'SHELF', 'RESTRICT'),
  ],
};
export const ORDER: TableDescriptor = {
  entity: 'ORDER',
  table: 'order',
  key: ['id'],
  columns: [{ name: 'id', kind: 'integer', fieldType: 'INTEGER', required: true, indexed: false }],
};
/** Keyed by its order and a line number: the reference is part of the key. */
export const LINE: TableDescriptor = {
  entity: 'LINE',
  table: 'line',
  key: ['order', 'no'],
  keySeparator: '~',
  columns: [
    ref('order', 'integer', true),
    { name: 'no', kind: 'integer', fieldType: 'INTEGER', required: true, indexed: false },
    text('note'),
  ],
  references: [link('order', 'ORDER', 'DELETE')],
};
/** Self references that delete through a cycle; `links` is an ARRAY that deletes too. */
export const NODE: TableDescriptor = {
  entity: 'NODE',
  table: 'node',
  key: ['id'],
  columns: [text('id', true), ref('next'), refs('links')],
  references: [link('next', 'NODE', 'DELETE'), link('links', 'NODE', 'DELETE', true)],
};
export const REFERENCE_TABLES = [CATEGORY, SHELF, PRODUCT, ORDER, LINE, NODE];

/** The HTTP status and reason of a rejected promise. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; reason: string; issues: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (!isHttpError(error)) throw error;
    return { status: error.status, reason: error.reason, issues: error.issues };
  }
  throw new Error('expected the write to fail');
}

export function describeReferenceContract(
  name: string,
  makeDriver: () => Promise<StorageDriver>,
): void {
  describe(`storage driver contract, references: ${name}`, () => {
    let driver: StorageDriver;
    let now = 1_000;

    beforeEach(async () => {
      driver = await makeDriver();
      await driver.open(REFERENCE_TABLES);
    });

    afterEach(async () => {
      await driver.close();
    });

    const insert = (table: TableDescriptor, ...records: StoredFields[]): Promise<void> =>
      driver.insert(table, records, ++now);
    const get = async (table: TableDescriptor, ...key: (string | number)[]) =>
      (await driver.get(table, key))?.record;
    const all = async (table: TableDescriptor) =>
      (await driver.list(table, { filters: [], orderBy: [] })).map((stored) => stored.record);
    const changesAfter = async (seq: number): Promise<StoredChange[]> =>
      (await driver.changes!.read(seq, 1000)).map((change) => change);
    const lastSeq = async (): Promise<number> => (await driver.changes!.bounds()).last;

    describe('writes must name existing records', () => {
      it('refuses an insert naming a missing record, and writes nothing', async () => {
        await insert(CATEGORY, { name: 'tools' });
        expect(await failure(insert(PRODUCT, { code: 'p1', category: 'toys' }))).toEqual({
          status: 400,
          reason: 'Field category references CATEGORY record "toys", which does not exist',
          issues: [
            {
              path: ['category'],
              code: 'missing_reference',
              message: 'Field category references CATEGORY record "toys", which does not exist',
            },
          ],
        });
        expect(await all(PRODUCT)).toEqual([]);
        await insert(PRODUCT, { code: 'p1', category: 'tools' });
        expect(await get(PRODUCT, 'p1')).toEqual({ code: 'p1', category: 'tools' });
      });

      it('names the record of a list insert by position and the array element', async () => {
        await insert(CATEGORY, { name: 'tools' });
        const result = await failure(
          insert(
            PRODUCT,
            { code: 'p1', extra: ['tools'] },
            { code: 'p2', extra: ['tools', 'toys'] },
          ),
        );
        expect(result.status).toBe(400);
        expect(result.reason).toBe(
          'Record 1 of the list: Field extra references CATEGORY record "toys", which does not exist',
        );
        expect(result.issues).toMatchObject([{ path: [1, 'extra', 1], code: 'missing_reference' }]);
        expect(await all(PRODUCT)).toEqual([]);
      });

      it('checks composite and integer ids', async () => {
        await insert(SHELF, { aisle: 'A', slot: 1 });
        await insert(ORDER, { id: 7 });
        await insert(PRODUCT, { code: 'p1', shelf: 'A~1' });
        expect((await failure(insert(PRODUCT, { code: 'p2', shelf: 'A~2' }))).status).toBe(400);
        expect((await failure(insert(PRODUCT, { code: 'p3', shelf: 'A' }))).status).toBe(400);
        await insert(LINE, { order: 7, no: 1 });
        expect((await failure(insert(LINE, { order: 8, no: 1 }))).reason).toBe(
          'Field order references ORDER record "8", which does not exist',
        );
      });

      it('lets a record name itself or another record of the same list', async () => {
        await insert(NODE, { id: 'a', next: 'b' }, { id: 'b', next: 'a', links: ['a', 'b'] });
        expect(await all(NODE)).toHaveLength(2);
      });

      it('checks updates and renames, and changes nothing when they fail', async () => {
        await insert(CATEGORY, { name: 'tools' });
        await insert(PRODUCT, { code: 'p1', category: 'tools' });
        const stored = await driver.get(PRODUCT, ['p1']);
        const failed = await failure(
          driver.update(PRODUCT, ['p1'], { code: 'p2', category: 'toys' }, stored!.version, ++now),
        );
        expect(failed.status).toBe(400);
        expect(await driver.get(PRODUCT, ['p1'])).toEqual(stored);
        expect(await get(PRODUCT, 'p2')).toBeUndefined();
      });
    });

    describe('deleting a referenced record', () => {
      it('RESTRICT: refuses with 409 and the number of referencing records', async () => {
        await insert(CATEGORY, { name: 'tools' });
        await insert(
          PRODUCT,
          { code: 'p1', category: 'tools' },
          { code: 'p2', category: 'tools' },
          { code: 'p3', category: 'tools' },
        );
        const before = await lastSeq();
        expect(await failure(driver.delete(CATEGORY, ['tools'], undefined, ++now))).toEqual({
          status: 409,
          reason: 'CATEGORY record "tools" is referenced by 3 PRODUCT records (field category)',
          issues: undefined,
        });
        expect(await get(CATEGORY, 'tools')).toEqual({ name: 'tools' });
        expect(await lastSeq()).toBe(before);
        await insert(SHELF, { aisle: 'A', slot: 1 });
        await insert(PRODUCT, { code: 'p4', shelf: 'A~1' });
        expect((await failure(driver.delete(SHELF, ['A', 1], undefined, ++now))).reason).toBe(
          'SHELF record "A~1" is referenced by 1 PRODUCT record (field shelf)',
        );
      });

      it('EMPTY: clears the field and removes array elements, with an event each, in the same commit', async () => {
        await insert(CATEGORY, { name: 'tools' }, { name: 'toys' });
        await insert(
          PRODUCT,
          { code: 'p1', home: 'tools', name: 'hammer' },
          { code: 'p2', extra: ['toys', 'tools', 'tools'] },
          { code: 'p3', home: 'toys' },
        );
        const before = await lastSeq();
        const deletedAt = ++now;
        const deleted = await driver.delete(CATEGORY, ['tools'], undefined, deletedAt);
        expect(deleted?.record).toEqual({ name: 'tools' });
        expect(await all(PRODUCT)).toEqual([
          { code: 'p1', name: 'hammer' },
          { code: 'p2', extra: ['toys'] },
          { code: 'p3', home: 'toys' },
        ]);
        const p1 = await driver.get(PRODUCT, ['p1']);
        expect(p1).toMatchObject({ version: 2, updatedAt: deletedAt });
        const changes = await changesAfter(before);
        expect(changes.map((c) => [c.seq - before, c.entity, c.id, c.op, c.timeUnix])).toEqual([
          [1, 'CATEGORY', 'tools', 'deleted', deletedAt],
          [2, 'PRODUCT', 'p1', 'updated', deletedAt],
          [3, 'PRODUCT', 'p2', 'updated', deletedAt],
        ]);
        expect(JSON.parse(changes[2]!.record)).toEqual({ code: 'p2', extra: ['toys'] });
      });

      it('EMPTY on a self reference clears the children', async () => {
        await insert(CATEGORY, { name: 'root' }, { name: 'child', parent: 'root' });
        await driver.delete(CATEGORY, ['root'], undefined, ++now);
        expect(await all(CATEGORY)).toEqual([{ name: 'child' }]);
      });

      it('DELETE: deletes the referencing records, recursively, through a cycle', async () => {
        await insert(
          NODE,
          { id: 'a', next: 'b' },
          { id: 'b', next: 'c' },
          { id: 'c', next: 'a' },
          { id: 'd', links: ['x', 'c'] },
          { id: 'x' },
          { id: 'e' },
        );
        const before = await lastSeq();
        await driver.delete(NODE, ['a'], undefined, ++now);
        expect(await all(NODE)).toEqual([{ id: 'e' }, { id: 'x' }]);
        const changes = await changesAfter(before);
        expect(changes.map((c) => `${c.id} ${c.op}`).sort()).toEqual([
          'a deleted',
          'b deleted',
          'c deleted',
          'd deleted',
        ]);
        expect(changes.map((c) => c.seq - before)).toEqual([1, 2, 3, 4]);
      });

      it('DELETE: deletes records whose key holds the reference', async () => {
        await insert(ORDER, { id: 7 }, { id: 8 });
        await insert(LINE, { order: 7, no: 1 }, { order: 7, no: 2 }, { order: 8, no: 1 });
        await driver.delete(ORDER, [7], undefined, ++now);
        expect(await all(LINE)).toEqual([{ order: 8, no: 1 }]);
      });

      it('rolls everything back when a cascade meets a RESTRICT reference', async () => {
        await insert(NODE, { id: 'a' }, { id: 'b', next: 'a' });
        await insert(PRODUCT, { code: 'p1', node: 'b' });
        const before = await lastSeq();
        expect(await failure(driver.delete(NODE, ['a'], undefined, ++now))).toMatchObject({
          status: 409,
          reason: 'NODE record "b" is referenced by 1 PRODUCT record (field node)',
        });
        expect(await all(NODE)).toEqual([{ id: 'a' }, { id: 'b', next: 'a' }]);
        expect(await lastSeq()).toBe(before);
      });
    });

    describe('renaming a referenced record', () => {
      it('rewrites scalar and array references, with their events', async () => {
        await insert(CATEGORY, { name: 'tools' }, { name: 'sub', parent: 'tools' });
        await insert(
          PRODUCT,
          { code: 'p1', category: 'tools', home: 'tools' },
          { code: 'p2', extra: ['sub', 'tools'] },
        );
        const before = await lastSeq();
        const stored = await driver.get(CATEGORY, ['tools']);
        const result = await driver.update(
          CATEGORY,
          ['tools'],
          { name: 'hand-tools' },
          stored!.version,
          ++now,
        );
        expect(result.status).toBe('updated');
        expect(await all(PRODUCT)).toEqual([
          { code: 'p1', category: 'hand-tools', home: 'hand-tools' },
          { code: 'p2', extra: ['sub', 'hand-tools'] },
        ]);
        expect(await get(CATEGORY, 'sub')).toEqual({ name: 'sub', parent: 'hand-tools' });
        const changes = await changesAfter(before);
        expect(changes.map((c) => `${c.entity} ${c.id} ${c.op}`)).toEqual([
          'CATEGORY tools deleted',
          'CATEGORY hand-tools created',
          'CATEGORY sub updated',
          'PRODUCT p1 updated',
          'PRODUCT p2 updated',
        ]);
      });

      it('renames records whose key holds the reference', async () => {
        await insert(ORDER, { id: 7 });
        await insert(LINE, { order: 7, no: 1, note: 'x' });
        const stored = await driver.get(ORDER, [7]);
        await driver.update(ORDER, [7], { id: 9 }, stored!.version, ++now);
        expect(await all(LINE)).toEqual([{ order: 9, no: 1, note: 'x' }]);
      });
    });

    it('commits no dangling reference under 50 concurrent insert/delete pairs', async () => {
      const n = 50;
      await insert(CATEGORY, ...Array.from({ length: n }, (_, i) => ({ name: `c${i}` })));
      const outcomes = await Promise.allSettled(
        Array.from({ length: n }, (_, i) => [
          driver.insert(PRODUCT, [{ code: `p${i}`, category: `c${i}`, home: `c${i}` }], ++now),
          driver.delete(CATEGORY, [`c${i}`], undefined, ++now),
        ]).flat(),
      );
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') {
          expect(isHttpError(outcome.reason) ? outcome.reason.status : outcome.reason).toBeOneOf([
            400, 409,
          ]);
        }
      }
      const categories = new Set((await all(CATEGORY)).map((c) => c.name));
      const products = await all(PRODUCT);
      for (const product of products) {
        expect(categories.has(product.category as string)).toBe(true);
        expect(categories.has(product.home as string)).toBe(true);
      }
      // Each pair ended one way or the other: the product and its category, or neither.
      expect(products.length + (n - categories.size)).toBe(n);
    });
  });
}
