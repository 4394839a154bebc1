/** The words of `q=` and the query texts both drivers bind for them (runtime/src/search.ts). */
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../runtime/src/errors.js';
import {
  foldDiacritics,
  MAX_SEARCH_WORDS,
  postgresQueryText,
  searchWords,
  sqliteMatchText,
} from '../../runtime/src/search.js';

describe('searchWords', () => {
  it('keeps runs of letters, marks and digits, whatever separates them', () => {
    expect(searchWords('  Steel-hammer "OR" NEAR(x*) 42;')).toEqual([
      'Steel',
      'hammer',
      'OR',
      'NEAR',
      'x',
      '42',
    ]);
    expect(searchWords('Café crème')).toEqual(['Café', 'crème']);
    expect(searchWords("it's")).toEqual(['it', 's']);
  });

  it('refuses a q without a word, with too many words or too long', () => {
    for (const text of ['', '  ', '"*"', '-()', "'; --"])
      expect(() => searchWords(text)).toThrow(BadRequestError);
    expect(() => searchWords('w '.repeat(MAX_SEARCH_WORDS + 1))).toThrow(/at most 16/);
    expect(() => searchWords('x'.repeat(501))).toThrow(/at most 500/);
  });
});

describe('query texts', () => {
  it('SQLite: every word a quoted phrase, the last a prefix', () => {
    expect(sqliteMatchText(['steel', 'ham'])).toBe('"steel" "ham" *');
    expect(sqliteMatchText(['OR'])).toBe('"OR" *');
  });

  it('PostgreSQL: every word a quoted lexeme, ANDed, the last a prefix, diacritics folded', () => {
    expect(postgresQueryText(['steel', 'ham'])).toBe("'steel' & 'ham':*");
    expect(postgresQueryText(['Café', 'Über'])).toBe("'Cafe' & 'Uber':*");
  });

  it('folds Latin diacritics, precomposed or combining', () => {
    expect(foldDiacritics('naïve résumé ệ Ångström')).toBe('naive resume e Angstrom');
    expect(foldDiacritics('e\u0301')).toBe('e');
  });
});
