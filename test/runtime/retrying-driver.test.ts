/**
 * The driver `startServer` hands to a service forwards every method of the storage driver it
 * wraps (a hand-written copy once hid `listTexts`, so lists lost their fast path), answers
 * `StorageUnavailableError` until the storage is open, and offers an optional method only when
 * the wrapped driver has it.
 */
import { describe, expect, it } from 'vitest';
import type { StorageDriver, TableDescriptor } from '../../runtime/src/driver.js';
import { isStorageUnavailableError, StorageUnavailableError } from '../../runtime/src/errors.js';
import { createLogger } from '../../runtime/src/logger.js';
import {
  DRIVER_MEMBERS,
  RetryingOpenDriver,
  type GuardedMember,
} from '../../runtime/src/retrying-driver.js';

const TABLE: TableDescriptor = {
  entity: 'Product',
  table: 'product',
  key: ['id'],
  columns: [{ name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false }],
};

/** A driver with every member of the interface (`Required`: a new member must be added here). */
function fakeDriver(open: () => Promise<void>): {
  driver: Required<StorageDriver>;
  calls: { name: string; self: unknown; args: unknown[] }[];
} {
  const calls: { name: string; self: unknown; args: unknown[] }[] = [];
  const driver = {} as Record<string, unknown>;
  for (const name of GUARDED) {
    driver[name] = function (this: unknown, ...args: unknown[]): unknown {
      calls.push({ name, self: this, args });
      return name === 'getNow' ? `result of ${name}` : Promise.resolve(`result of ${name}`);
    };
  }
  Object.assign(driver, {
    dialect: 'fake',
    readAfter: false,
    open,
    secret: (_name: string, create: () => string) => Promise.resolve(`stored ${create()}`),
    changes: {
      read: () => Promise.resolve([]),
      bounds: () => Promise.resolve({ last: 0, first: 1 }),
      trim: () => Promise.resolve(0),
      watch: () => () => undefined,
    },
    close: () => Promise.resolve(),
  });
  return { driver: driver as unknown as Required<StorageDriver>, calls };
}

const GUARDED = (Object.keys(DRIVER_MEMBERS) as (keyof typeof DRIVER_MEMBERS)[]).filter(
  (name): name is GuardedMember => DRIVER_MEMBERS[name] === 'guarded',
);

function wrap(inner: StorageDriver): RetryingOpenDriver {
  return new RetryingOpenDriver(
    inner,
    [TABLE],
    {},
    createLogger({ level: 'silent' }),
    'fake storage',
    () => undefined,
  );
}

describe('RetryingOpenDriver', () => {
  it('lists every member of a driver with every member', () => {
    const { driver } = fakeDriver(() => Promise.resolve());
    expect(Object.keys(DRIVER_MEMBERS).sort()).toEqual(Object.keys(driver).sort());
  });

  it('forwards every driver method once the storage is open, with its arguments and result', async () => {
    const { driver, calls } = fakeDriver(() => Promise.resolve());
    const wrapper = wrap(driver);
    await wrapper.openOnce();
    for (const name of GUARDED) {
      const method = wrapper[name] as ((...args: unknown[]) => unknown) | undefined;
      expect(method, name).toBeTypeOf('function');
      const result = method!(TABLE, name, 3);
      expect(await result).toBe(`result of ${name}`);
      expect(calls.at(-1)).toEqual({ name, self: driver, args: [TABLE, name, 3] });
    }
    // getNow stays synchronous: the GET fast path answers in the tick its request arrived.
    expect(wrapper.getNow!(TABLE, ['a'])).toBe('result of getNow');
    expect(await wrapper.secret('cursor', () => 'made')).toBe('stored made');
    expect(wrapper.dialect).toBe('fake');
    await wrapper.close();
  });

  it('fails every call with StorageUnavailableError while the storage cannot be opened', async () => {
    const { driver, calls } = fakeDriver(() =>
      Promise.reject(new StorageUnavailableError('connection refused')),
    );
    const wrapper = wrap(driver);
    await wrapper.openOnce();
    for (const name of [...GUARDED, 'secret' as const]) {
      const method = wrapper[name] as (...args: unknown[]) => unknown;
      let failure: unknown;
      try {
        await method.call(wrapper, TABLE, [], () => 'x');
      } catch (error) {
        failure = error;
      }
      expect(isStorageUnavailableError(failure), name).toBe(true);
    }
    await expect(wrapper.changes!.read(0, 10)).rejects.toThrow(StorageUnavailableError);
    // The service asks for its cursor key at start: a rejection it retries, never a throw that
    // would stop the service from starting while the storage is down.
    let pending: Promise<string> | undefined;
    expect(() => {
      pending = wrapper.secret('cursor', () => 'x');
    }).not.toThrow();
    await expect(pending).rejects.toThrow(StorageUnavailableError);
    expect(calls).toEqual([]);
    await wrapper.close();
  });

  it('offers an optional method only when the wrapped driver has it', async () => {
    const { driver } = fakeDriver(() => Promise.resolve());
    const required: Record<string, unknown> = { ...driver };
    for (const name of ['getNow', 'listTexts', 'changes']) delete required[name];
    const wrapper = wrap(required as unknown as StorageDriver);
    await wrapper.openOnce();
    expect(wrapper.getNow).toBeUndefined();
    expect(wrapper.listTexts).toBeUndefined();
    expect(wrapper.changes).toBeUndefined();
    await wrapper.close();
  });
});
