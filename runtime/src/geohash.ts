/**
 * Geohash encoding and decoding (https://en.wikipedia.org/wiki/Geohash).
 *
 * A geohash is a base32 string (alphabet `0123456789bcdefghjkmnpqrstuvwxyz`) whose bits
 * alternately halve the longitude range [-180, 180] (first bit) and the latitude range
 * [-90, 90]. A point on a dividing line belongs to the upper half, so the cell of a geohash is
 * the closed box returned by {@link decodeGeohashBounds}. Hashes of 1 to {@link
 * GEOHASH_MAX_PRECISION} characters are supported; decoding is case-insensitive, encoding
 * produces lower case.
 */

/** The geohash base32 alphabet, in value order. */
export const GEOHASH_BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz';

/** Longest supported geohash: 12 characters = 60 bits, well below a double's resolution limit. */
export const GEOHASH_MAX_PRECISION = 12;

/** The cell of a geohash: every point with minLat ≤ lat ≤ maxLat and minLng ≤ lng ≤ maxLng. */
export interface GeohashBounds {
  readonly minLat: number;
  readonly maxLat: number;
  readonly minLng: number;
  readonly maxLng: number;
}

/** The centre of a geohash cell and the half-size of the cell in each direction. */
export interface GeohashPoint {
  readonly lat: number;
  readonly lng: number;
  readonly latError: number;
  readonly lngError: number;
}

/** Character code → 5-bit value, or -1 for characters outside the alphabet (either case). */
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < GEOHASH_BASE32.length; i++) {
  DECODE[GEOHASH_BASE32.charCodeAt(i)] = i;
  DECODE[GEOHASH_BASE32.toUpperCase().charCodeAt(i)] = i;
}

/** Whether `hash` is a geohash of 1 to 12 alphabet characters (either case). */
export function isGeohash(hash: string): boolean {
  const n = hash.length;
  if (n < 1 || n > GEOHASH_MAX_PRECISION) return false;
  for (let i = 0; i < n; i++) {
    const c = hash.charCodeAt(i);
    if (c >= 128 || (DECODE[c] as number) < 0) return false;
  }
  return true;
}

/**
 * Encodes a point as a geohash of `precision` characters (default 12).
 *
 * @throws RangeError when lat is not in [-90, 90], lng not in [-180, 180], or precision is not an
 * integer from 1 to 12.
 */
export function encodeGeohash(lat: number, lng: number, precision = GEOHASH_MAX_PRECISION): string {
  if (!(lat >= -90 && lat <= 90)) throw new RangeError(`Latitude out of range: ${lat}`);
  if (!(lng >= -180 && lng <= 180)) throw new RangeError(`Longitude out of range: ${lng}`);
  if (!Number.isInteger(precision) || precision < 1 || precision > GEOHASH_MAX_PRECISION) {
    throw new RangeError(`Geohash precision must be an integer from 1 to 12: ${precision}`);
  }
  let minLat = -90;
  let maxLat = 90;
  let minLng = -180;
  let maxLng = 180;
  let hash = '';
  let lngBit = true;
  for (let c = 0; c < precision; c++) {
    let value = 0;
    for (let b = 0; b < 5; b++) {
      if (lngBit) {
        const mid = (minLng + maxLng) / 2;
        if (lng >= mid) {
          value = value * 2 + 1;
          minLng = mid;
        } else {
          value *= 2;
          maxLng = mid;
        }
      } else {
        const mid = (minLat + maxLat) / 2;
        if (lat >= mid) {
          value = value * 2 + 1;
          minLat = mid;
        } else {
          value *= 2;
          maxLat = mid;
        }
      }
      lngBit = !lngBit;
    }
    hash += GEOHASH_BASE32[value];
  }
  return hash;
}

/** The cell of a geohash, or `undefined` when `hash` is not a valid geohash ({@link isGeohash}). */
export function decodeGeohashBounds(hash: string): GeohashBounds | undefined {
  if (!isGeohash(hash)) return undefined;
  let minLat = -90;
  let maxLat = 90;
  let minLng = -180;
  let maxLng = 180;
  let lngBit = true;
  for (let i = 0; i < hash.length; i++) {
    const value = DECODE[hash.charCodeAt(i)] as number;
    for (let mask = 16; mask >= 1; mask >>= 1) {
      const upper = (value & mask) !== 0;
      if (lngBit) {
        const mid = (minLng + maxLng) / 2;
        if (upper) minLng = mid;
        else maxLng = mid;
      } else {
        const mid = (minLat + maxLat) / 2;
        if (upper) minLat = mid;
        else maxLat = mid;
      }
      lngBit = !lngBit;
    }
  }
  return { minLat, maxLat, minLng, maxLng };
}

/** The centre of a geohash's cell, or `undefined` when `hash` is not a valid geohash. */
export function decodeGeohash(hash: string): GeohashPoint | undefined {
  const b = decodeGeohashBounds(hash);
  if (b === undefined) return undefined;
  return {
    lat: (b.minLat + b.maxLat) / 2,
    lng: (b.minLng + b.maxLng) / 2,
    latError: (b.maxLat - b.minLat) / 2,
    lngError: (b.maxLng - b.minLng) / 2,
  };
}

/** Whether the point lies in the (closed) cell of `hash`; false for an invalid geohash. */
export function geohashContains(hash: string, lat: number, lng: number): boolean {
  const b = decodeGeohashBounds(hash);
  return (
    b !== undefined && lat >= b.minLat && lat <= b.maxLat && lng >= b.minLng && lng <= b.maxLng
  );
}
