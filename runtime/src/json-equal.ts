/** Whether two JSON values are equal, whatever the order of their objects' properties. */
export function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonValue(a[i], other[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // The same defined properties with the same values (an upsert compares 10 000 records: no
  // arrays of names are built).
  let count = 0;
  for (const name of Object.keys(left)) {
    const value = left[name];
    if (value === undefined) continue;
    if (!Object.hasOwn(right, name) || !sameJsonValue(value, right[name])) return false;
    count++;
  }
  for (const name of Object.keys(right)) if (right[name] !== undefined) count--;
  return count === 0;
}
