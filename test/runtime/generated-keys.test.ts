/**
 * Generated keys (SPEC §16): UUID version 7 values are well-formed (version 7, RFC 9562 variant),
 * carry the time they were made in, are distinct and sort in the order they were made, also when
 * many are made within one millisecond.
 */
import { describe, expect, it } from 'vitest';
import { ulid, uuidv7 } from '../../runtime/src/generated.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('makes distinct version 7 UUIDs that sort in the order they were made', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('holds the Unix milliseconds in its first 48 bits', () => {
    const ms = Date.UTC(2400, 0, 2, 3, 4, 5, 678); // later than any id made so far
    const id = uuidv7(ms);
    expect(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)).toBe(ms);
    // Made within the same millisecond: the same time, counted up.
    const next = uuidv7(ms);
    expect(next.slice(0, 13)).toBe(id.slice(0, 13));
    expect(next > id).toBe(true);
  });

  it('borrows the next millisecond when one millisecond runs out of counter values', () => {
    const ms = Date.UTC(2500, 0, 1);
    const ids = Array.from({ length: 5000 }, () => uuidv7(ms));
    expect([...ids].sort()).toEqual(ids);
    const last = Number.parseInt(ids.at(-1)!.replaceAll('-', '').slice(0, 12), 16);
    expect(last).toBeGreaterThan(ms);
  });
});

describe('ulid', () => {
  it('makes distinct ULIDs that sort in the order they were made', () => {
    const ids = Array.from({ length: 5000 }, () => ulid());
    for (const id of ids) expect(id).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('holds the Unix milliseconds in its first 10 digits, and counts up within one', () => {
    const ms = Date.UTC(2400, 0, 2, 3, 4, 5, 678);
    const id = ulid(ms);
    const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const time = [...id.slice(0, 10)].reduce((sum, digit) => sum * 32 + digits.indexOf(digit), 0);
    expect(time).toBe(ms);
    const next = ulid(ms);
    expect(next.slice(0, 10)).toBe(id.slice(0, 10));
    expect(next > id).toBe(true);
  });
});
