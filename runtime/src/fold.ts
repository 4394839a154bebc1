/**
 * Case folding of the case-insensitive filter operators (IEQUALS, ICONTAINS, ISTARTS_WITH,
 * IENDS_WITH; `~*` in filter expressions): each character is mapped to its uppercase, then to its
 * lowercase, where each mapping gives one character (a character whose mapping would give
 * several, like `ß` → `SS`, keeps its own). So `É`/`é`, `Σ`/`σ`/`ς`, `K` (Kelvin)/`k` meet, the
 * length in characters never changes. PostgreSQL folds with `lower(upper(x))` under the
 * database's locale, the same simple mappings for a UTF-8 locale.
 */
/** Text beyond ASCII: folded character by character. */
const BEYOND_ASCII = /[^\x20-\x7e\t\n\r]/;

export function foldCase(text: string): string {
  if (!BEYOND_ASCII.test(text)) return text.toLowerCase();
  let folded = '';
  for (const char of text) {
    const upper = char.toUpperCase();
    const single = [...upper].length === 1 ? upper : char;
    const lower = single.toLowerCase();
    folded += [...lower].length === 1 ? lower : single;
  }
  return folded;
}
