import { describe, expect, it } from 'vitest';

import {
  GEOHASH_BASE32,
  decodeGeohash,
  decodeGeohashBounds,
  encodeGeohash,
  geohashContains,
  isGeohash,
} from '../../runtime/src/geohash.js';

describe('encodeGeohash', () => {
  const cases: [string, { given: [number, number, number?]; want: string }][] = [
    ['wikipedia example', { given: [57.64911, 10.40744, 11], want: 'u4pruydqqvj' }],
    ['wikipedia example, 5 chars', { given: [42.6, -5.6, 5], want: 'ezs42' }],
    ['origin', { given: [0, 0], want: 's00000000000' }],
    ['north-east corner', { given: [90, 180], want: 'zzzzzzzzzzzz' }],
    ['south-west corner', { given: [-90, -180], want: '000000000000' }],
    ['one character', { given: [-45, 100, 1], want: 'q' }],
    ['default precision is 12', { given: [48.8584, 2.2945], want: 'u09tunquc9zh' }],
    ['wikipedia example, 12 chars', { given: [57.64911, 10.40744], want: 'u4pruydqqvj8' }],
    // A point on a dividing line belongs to the upper half (documented; ngeohash differs here).
    ['on two dividing lines', { given: [22.5, -67.5], want: 'ds0000000000' }],
    ['on the first dividing lines', { given: [45, 90], want: 'y00000000000' }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(encodeGeohash(...given)).toBe(want);
  });

  const errors: [string, { given: [number, number, number?] }][] = [
    ['latitude above 90', { given: [90.0001, 0] }],
    ['latitude below -90', { given: [-91, 0] }],
    ['longitude above 180', { given: [0, 180.5] }],
    ['NaN', { given: [Number.NaN, 0] }],
    ['precision 0', { given: [0, 0, 0] }],
    ['precision 13', { given: [0, 0, 13] }],
    ['fractional precision', { given: [0, 0, 2.5] }],
  ];
  it.each(errors)('throws RangeError: %s', (_name, { given }) => {
    expect(() => encodeGeohash(...given)).toThrow(RangeError);
  });
});

describe('decodeGeohashBounds', () => {
  const cases: [string, { given: string; want: ReturnType<typeof decodeGeohashBounds> }][] = [
    ['s', { given: 's', want: { minLat: 0, maxLat: 45, minLng: 0, maxLng: 45 } }],
    ['0', { given: '0', want: { minLat: -90, maxLat: -45, minLng: -180, maxLng: -135 } }],
    ['upper case', { given: 'S', want: { minLat: 0, maxLat: 45, minLng: 0, maxLng: 45 } }],
    [
      'two characters',
      { given: 'sp', want: { minLat: 39.375, maxLat: 45, minLng: 0, maxLng: 11.25 } },
    ],
    ['empty', { given: '', want: undefined }],
    ['letter a', { given: 'a', want: undefined }],
    ['letter i', { given: 'u4pi', want: undefined }],
    ['13 characters', { given: 'u4pruydqqvjxx', want: undefined }],
    ['non-ascii', { given: 'u4p\u00e9', want: undefined }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(decodeGeohashBounds(given)).toEqual(want);
  });
});

describe('decodeGeohash', () => {
  it('returns the cell centre and error', () => {
    const p = decodeGeohash('ezs42');
    if (p === undefined) throw new Error('ezs42 is a valid geohash');
    expect(p.lat).toBeCloseTo(42.605, 3);
    expect(p.lng).toBeCloseTo(-5.603, 3);
    expect(p.latError).toBeCloseTo(0.022, 3);
    expect(p.lngError).toBeCloseTo(0.022, 3);
  });
  it('is undefined for an invalid geohash', () => {
    expect(decodeGeohash('abc')).toBeUndefined();
  });
});

describe('isGeohash', () => {
  const cases: [string, { given: string; want: boolean }][] = [
    ['whole alphabet slice', { given: GEOHASH_BASE32.slice(0, 12), want: true }],
    ['upper case', { given: 'U4PRUYDQQVJX', want: true }],
    ['one character', { given: 'z', want: true }],
    ['empty', { given: '', want: false }],
    ['13 characters', { given: 'u4pruydqqvjxx', want: false }],
    ['a', { given: 'a', want: false }],
    ['i', { given: 'i', want: false }],
    ['l', { given: 'l', want: false }],
    ['o', { given: 'o', want: false }],
    ['space', { given: 'u4 p', want: false }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(isGeohash(given)).toBe(want);
  });
});

describe('round trip', () => {
  it('every encoded point lies in the cell of its geohash at every precision', () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < 500; i++) {
      const lat = random() * 180 - 90;
      const lng = random() * 360 - 180;
      const full = encodeGeohash(lat, lng);
      for (let precision = 1; precision <= 12; precision++) {
        const hash = encodeGeohash(lat, lng, precision);
        expect(hash).toBe(full.slice(0, precision));
        expect(geohashContains(hash, lat, lng)).toBe(true);
      }
    }
  });

  it('geohashContains uses closed cells and rejects invalid hashes', () => {
    expect(geohashContains('s', 0, 0)).toBe(true);
    expect(geohashContains('k', 0, 0)).toBe(true);
    expect(geohashContains('7', 0, 0)).toBe(true);
    expect(geohashContains('e', 0, 0)).toBe(true);
    expect(geohashContains('s', -0.0001, 0)).toBe(false);
    expect(geohashContains('a', 0, 0)).toBe(false);
  });
});
