import { describe, expect, it } from 'vitest';
import { FIELD_TYPES, didYouMean, editDistance } from '../../cli/schema/index.js';

const FIELD_KEYS = [
  'name',
  'type',
  'required',
  'displayName',
  'description',
  'index',
  'enums',
  'select',
];

describe('editDistance', () => {
  it.each<[string, { a: string; b: string; want: number }]>([
    ['equal', { a: 'type', b: 'type', want: 0 }],
    ['empty left', { a: '', b: 'abc', want: 3 }],
    ['empty right', { a: 'abc', b: '', want: 3 }],
    ['one deletion', { a: 'requird', b: 'required', want: 1 }],
    ['one insertion', { a: 'enumss', b: 'enums', want: 1 }],
    ['one substitution', { a: 'strinG', b: 'string', want: 1 }],
    ['adjacent swap counts once', { a: 'tpye', b: 'type', want: 1 }],
    ['two swaps', { a: 'fiedls', b: 'fields', want: 1 }],
    ['swap plus deletion', { a: 'reuqird', b: 'required', want: 2 }],
    ['unrelated', { a: 'lk', b: 'name', want: 4 }],
    ['OSA does not edit a substring twice', { a: 'ca', b: 'abc', want: 3 }],
  ])('%s', (_name, { a, b, want }) => {
    expect(editDistance(a, b)).toBe(want);
    expect(editDistance(b, a)).toBe(want);
  });
});

describe('didYouMean', () => {
  it.each<[string, { word: string; candidates: readonly string[]; want: string | undefined }]>([
    ['case-insensitive match wins', { word: 'string', candidates: FIELD_TYPES, want: 'STRING' }],
    [
      'case-insensitive match of a short word',
      { word: 'lK', candidates: ['lk', 'name'], want: 'lk' },
    ],
    ['missing letter', { word: 'requird', candidates: FIELD_KEYS, want: 'required' }],
    ['swapped letters', { word: 'tpye', candidates: FIELD_KEYS, want: 'type' }],
    ['distance two', { word: 'descriptoin', candidates: FIELD_KEYS, want: 'description' }],
    [
      'distance two in another case',
      { word: 'datetim', candidates: FIELD_TYPES, want: 'DATE_TIME' },
    ],
    ['distance three is too far', { word: 'requ', candidates: FIELD_KEYS, want: undefined }],
    ['short words get a tighter limit', { word: 'id', candidates: ['lk'], want: undefined }],
    ['one edit on a three-letter word', { word: 'nam', candidates: FIELD_KEYS, want: 'name' }],
    ['closest candidate wins', { word: 'enum', candidates: ['ENUMS_X', 'enums'], want: 'enums' }],
    [
      'ties go to the first candidate',
      { word: 'abcd', candidates: ['abce', 'abcf'], want: 'abce' },
    ],
    ['no candidates', { word: 'type', candidates: [], want: undefined }],
  ])('%s', (_name, { word, candidates, want }) => {
    expect(didYouMean(word, candidates)).toBe(want);
  });
});
