/**
 * How `pg` parses the values the driver reads back: BIGINT as numbers, NUMERIC, DATE and
 * timestamps as their canonical text.
 */
import pg from 'pg';
import type { CustomTypesConfig } from 'pg';

/** Type OIDs of the built-in PostgreSQL types the driver reads. */
export const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  timestamptz: 1184,
  timestamp: 1114,
} as const;

/**
 * `int8` (BIGINT, `count(*)`) as a JS number. The driver stores only safe integers in BIGINT
 * columns; a parser must not throw (it runs inside pg's protocol handler).
 */
export function parseInt8(text: string): number {
  return Number(text);
}

const ISO_TIMESTAMP =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?|Z)?( BC)?$/;

/**
 * TIMESTAMPTZ in the ISO DateStyle (`2024-05-01 10:20:30.123+02`, any session time zone) as the
 * canonical UTC string `YYYY-MM-DDTHH:mm:ss.sssZ`. Values the pattern does not cover
 * (`infinity`, other DateStyles) are returned unchanged.
 */
export function canonicalTimestamptz(text: string): string {
  const match = ISO_TIMESTAMP.exec(text);
  if (match === null) return text;
  const [, y, mo, d, h, mi, s, fraction, sign, oh, om, os, bc] = match;
  let year = Number(y);
  if (bc !== undefined) year = 1 - year;
  const date = new Date(0);
  date.setUTCFullYear(year, Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(`${fraction ?? ''}000`.slice(0, 3)));
  let ms = date.getTime();
  if (sign !== undefined) {
    const offset = (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0)) * 1000;
    ms += sign === '+' ? -offset : offset;
  }
  return new Date(ms).toISOString();
}

const identity = (text: string): string => text;

/**
 * Per-pool type parsers, so the process-wide `pg.types` of other code stay untouched: int8 as
 * number; NUMERIC as the exact string PostgreSQL stores, which for the canonical decimal strings
 * the converter writes (no exponent, no leading `+`, no `-0`) is exactly the input, scale included
 * (`'1.10'` reads back as `'1.10'`, as in SQLite); DATE as `YYYY-MM-DD` (no JS Date);
 * TIMESTAMPTZ as the canonical ISO string. JSON/JSONB, BOOLEAN, DOUBLE PRECISION and INTEGER keep pg's parsers.
 */
export const driverTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === undefined || format === 'text') {
      switch (oid) {
        case OID.int8:
          return parseInt8;
        case OID.numeric:
        case OID.date:
        case OID.timestamp:
          return identity;
        case OID.timestamptz:
          return canonicalTimestamptz;
      }
    }
    return pg.types.getTypeParser(oid, format as 'text');
  }) as CustomTypesConfig['getTypeParser'],
};
