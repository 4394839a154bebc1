/** The history version of a change (SPEC §13) through the outbox's op text and into events. */
import { describe, expect, it } from 'vitest';
import { changeEvent, opOfStored, storedOp } from '../../runtime/src/events/change.js';
import { changeMessage } from '../../runtime/src/events/sse.js';

describe('the version of a change', () => {
  it('round-trips through the op text the outbox stores, with and without a soft mark', () => {
    for (const change of [
      { op: 'created' as const },
      { op: 'updated' as const, version: 3 },
      { op: 'deleted' as const, soft: true, version: 12 },
      { op: 'deleted' as const, soft: true },
      { op: 'purged' as const, version: 7 },
    ]) {
      expect(opOfStored(storedOp(change))).toEqual(change);
    }
    expect(storedOp({ op: 'deleted', soft: true, version: 4 })).toBe('deleted.soft#4');
  });

  it('is in the event object and the SSE message when the change has one', () => {
    const stored = {
      seq: 9,
      entity: 'CUSTOMER',
      id: 'c1',
      op: 'updated' as const,
      version: 2,
      record: '{"id":"c1"}',
      timeUnix: 1000,
    };
    expect(changeEvent(stored)).toEqual({
      seq: 9,
      entity: 'CUSTOMER',
      id: 'c1',
      op: 'updated',
      version: 2,
      record: { id: 'c1' },
      timeUnix: 1000,
      timeISO: '1970-01-01T00:00:01.000Z',
    });
    const data = changeMessage(stored).split('\n')[2]!.slice('data: '.length);
    expect(JSON.parse(data)).toEqual(changeEvent(stored));
    const { version: _, ...plain } = stored;
    expect(changeMessage(plain)).not.toContain('version');
  });
});
