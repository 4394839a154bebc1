// Small statistics helpers.

export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `{median, min, max}` of the finite values. */
export function spread(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  return {
    median: median(finite),
    min: finite.length === 0 ? NaN : Math.min(...finite),
    max: finite.length === 0 ? NaN : Math.max(...finite),
    n: finite.length,
  };
}

/** The p-th percentile (0–100) of a list of numbers, nearest-rank on the sorted list. */
export function percentile(sortedValues, p) {
  if (sortedValues.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sortedValues.length);
  return sortedValues[Math.min(sortedValues.length - 1, Math.max(0, rank - 1))];
}

/** Formats a number with a fixed count of significant-ish decimals. */
export function fmt(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** `median (min–max)` */
export function fmtSpread(s, digits = 0, unit = '') {
  if (!Number.isFinite(s.median)) return 'n/a';
  if (s.n <= 1 || s.min === s.max) return `${fmt(s.median, digits)}${unit}`;
  return `${fmt(s.median, digits)}${unit} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}
