/**
 * Geohash encoding and decoding (https://en.wikipedia.org/wiki/Geohash).
 *
 * A geohash is a base32 string (alphabet `0123456789bcdefghjkmnpqrstuvwxyz`) whose bits
 * alternately halve the longitude range [-180, 180] (first bit) and the latitude range
 * [-90, 90]. A point on a dividing line belongs to the upper half, so the cell of a geohash is
 * the closed box returned by {@link decodeGeohashBounds}. Hashes of 1 to {@link
 * GEOHASH_MAX_PRECISION} characters are supported; decoding is case-insensitive, encoding
 * produces lower case.
 *
 * The bit work is latlon-geohash's, which follows the same upper-half rule (ngeohash puts a point
 * on a dividing line in the lower half, so `(0, 0)` would become `7zzz…` instead of `s000…`);
 * the range, precision and alphabet checks are ours, as that library checks none of them.
 */
import Geohash from 'latlon-geohash';

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

/** 1 to 12 characters of the alphabet, either case. */
const GEOHASH_TEXT = new RegExp(`^[${GEOHASH_BASE32}]{1,${GEOHASH_MAX_PRECISION}}$`, 'i');

/** Whether `hash` is a geohash of 1 to 12 alphabet characters (either case). */
export function isGeohash(hash: string): boolean {
  return GEOHASH_TEXT.test(hash);
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
  return Geohash.encode(lat, lng, precision);
}

/** The cell of a geohash, or `undefined` when `hash` is not a valid geohash ({@link isGeohash}). */
export function decodeGeohashBounds(hash: string): GeohashBounds | undefined {
  if (!isGeohash(hash)) return undefined;
  const { sw, ne } = Geohash.bounds(hash);
  return { minLat: sw.lat, maxLat: ne.lat, minLng: sw.lon, maxLng: ne.lon };
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
