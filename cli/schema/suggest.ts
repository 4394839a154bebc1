/**
 * "Did you mean …?" suggestions for misspelt keys, types, field and entity names.
 */

/** Largest edit distance a suggestion may have. */
const MAX_DISTANCE = 2;

/**
 * Optimal-string-alignment distance (Damerau-Levenshtein restricted to non-overlapping edits):
 * insertions, deletions, substitutions and swaps of two adjacent characters each cost 1.
 *
 * Hand-written because fastest-levenshtein and leven compute plain Levenshtein distance, where a
 * swap costs 2: `reuqird` would no longer suggest `required`, and swaps are the commonest typo.
 *
 * @example editDistance('requird', 'required') === 1; editDistance('tpye', 'type') === 1
 */
export function editDistance(a: string, b: string): number {
  // Three rolling rows: the swap rule looks two rows back.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

/**
 * The candidate the user most likely meant by `word`: one equal to it ignoring case, else the
 * closest one within edit distance 2 (compared ignoring case). Short words get a tighter limit
 * (at most half their length) so that e.g. `id` does not suggest `lk`. Ties go to the earlier
 * candidate, so callers list candidates in the order they want preferred.
 *
 * @example didYouMean('string', FIELD_TYPES) === 'STRING'
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const limit = Math.min(MAX_DISTANCE, Math.floor(word.length / 2));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const distance =
      candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `"; did you mean 'x'?"` when there is a close candidate, else `fallback` (default empty). */
export function suggestionSuffix(
  word: string,
  candidates: Iterable<string>,
  fallback = '',
): string {
  const suggestion = didYouMean(word, candidates);
  return suggestion === undefined ? fallback : `; did you mean '${suggestion}'?`;
}
