/**
 * A text encoding of decimal numbers whose byte order (SQLite's BINARY collation) is their
 * numeric order, exactly, for any number of digits. The SQLite driver stores a DECIMAL field's
 * exact text in its column and this key in a hidden shadow column used for comparison, ordering
 * and indexing; filters on DECIMAL values inside JSON use it through the SQL function
 * `eg_decimal_key`.
 *
 * Layout, with the value written as ±0.d1d2…dn × 10^e (d1 ≠ 0, dn ≠ 0):
 * - zero:     `1`
 * - positive: `2` + (e + 50000, five digits) + d1…dn
 * - negative: `0` + (50000 − e, five digits) + nine's complement of d1…dn + `~`
 * The trailing `~` (above every digit) makes a shorter negative mantissa sort after a longer one
 * with the same prefix (−0.5 > −0.55). Numerically equal inputs (`1.5`, `1.50`, `15e-1`) give the
 * same key. Supported exponents: |e| < 50000 (values up to about 10^49999).
 */

const DECIMAL = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const EXPONENT_BIAS = 50_000;

/** The sortable key of a decimal string (or finite number); `undefined` when it is not one. */
export function decimalSortKey(value: string | number): string | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value);
  } else {
    text = value.trim();
  }
  const match = DECIMAL.exec(text);
  if (match === null) return undefined;
  const [, sign, integerPart = '', fractionPart = '', exponentPart] = match;
  if (integerPart === '' && fractionPart === '') return undefined;
  const digits = integerPart + fractionPart;
  const first = digits.search(/[1-9]/);
  if (first < 0) return '1';
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === 48 /* 0 */) last--;
  const mantissa = digits.slice(first, last + 1);
  const exponent =
    integerPart.length - first + (exponentPart === undefined ? 0 : Number(exponentPart));
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) >= EXPONENT_BIAS) return undefined;
  if (sign !== '-') {
    return `2${String(exponent + EXPONENT_BIAS).padStart(5, '0')}${mantissa}`;
  }
  let complement = '';
  for (let i = 0; i < mantissa.length; i++) {
    complement += String.fromCharCode(105 /* '0' + '9' */ - mantissa.charCodeAt(i));
  }
  return `0${String(EXPONENT_BIAS - exponent).padStart(5, '0')}${complement}~`;
}

/** Like `decimalSortKey`, but throws for a value that is not a decimal. */
export function requireDecimalSortKey(value: unknown, what: string): string {
  const key =
    typeof value === 'string' || typeof value === 'number' ? decimalSortKey(value) : undefined;
  if (key === undefined) {
    throw new TypeError(`${what}: ${JSON.stringify(value)} is not a decimal number`);
  }
  return key;
}
