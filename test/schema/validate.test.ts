/**
 * One row per validation rule: a small YAML entity and the diagnostics it must give, as
 * `line:col CODE`. Full messages are pinned by the golden fixtures under fixtures/invalid.
 */
import { describe, expect, it } from 'vitest';
import { loadSchemas } from '../../cli/schema/index.js';

/** Wraps field lines (already indented for a fields list) into an entity PRODUCT keyed by id. */
function entityWith(fieldLines: string[], entityLines: string[] = []): string {
  return [
    'type: ENTITY',
    'entity:',
    '  name: PRODUCT',
    '  lk: [id]',
    ...entityLines,
    '  fields:',
    '    - {name: id, type: STRING}',
    ...fieldLines,
  ].join('\n');
}

/** `line:col CODE` of every diagnostic for one YAML file. */
function problems(text: string): string[] {
  return loadSchemas([{ file: 's.yaml', text }]).diagnostics.map(
    (d) => `${d.line}:${d.column} ${d.code}`,
  );
}

describe('validation rules', () => {
  it.each<[string, { given: string; want: string[] }]>([
    ['a valid entity', { given: entityWith([]), want: [] }],
    [
      'search over STRING fields, with a language',
      {
        given: entityWith(
          ['    - {name: t, type: STRING}', '    - {name: b, type: STRING}'],
          ['  search: [t, b]', '  searchLanguage: english'],
        ),
        want: [],
      },
    ],
    [
      'search over a non-text field, an unknown one, or none',
      {
        given: entityWith(['    - {name: n, type: DECIMAL}'], ['  search: [n, x]']),
        want: ['5:12 INVALID_SEARCH', '5:15 UNKNOWN_FIELD'],
      },
    ],
    [
      'empty search, and a language that is no configuration name',
      {
        given: entityWith([], ['  search: []', "  searchLanguage: 'pg_catalog.english'"]),
        want: ['5:11 INVALID_SEARCH', '6:19 INVALID_SEARCH'],
      },
    ],
    ['field without type', { given: entityWith(['    - {name: x}']), want: ['7:7 MISSING_KEY'] }],
    [
      'array element without type',
      {
        given: entityWith(['    - {name: x, type: ARRAY, array: {}}']),
        want: ['7:37 MISSING_KEY'],
      },
    ],
    [
      'index: false on an inner field is fine',
      {
        given: entityWith([
          '    - {name: o, type: OBJECT, object: {fields: [{name: a, type: STRING, index: false}]}}',
        ]),
        want: [],
      },
    ],
    [
      'index: true on a GEOHASH_LOCATION',
      {
        given: entityWith(['    - {name: g, type: GEOHASH_LOCATION, index: true}']),
        want: ['7:48 INVALID_INDEX'],
      },
    ],
    [
      'index: ci on text fields, the first key field included',
      {
        given: entityWith([
          '    - {name: s, type: STRING, index: ci}',
          '    - {name: e, type: ENUM, enums: [A, B], index: ci}',
        ]).replace('{name: id, type: STRING}', '{name: id, type: STRING, index: ci}'),
        want: [],
      },
    ],
    [
      'index: ci on a field that is not text',
      {
        given: entityWith([
          '    - {name: n, type: INTEGER, index: ci}',
          '    - {name: d, type: DATE, index: ci}',
        ]),
        want: ['7:39 INVALID_INDEX', '8:36 INVALID_INDEX'],
      },
    ],
    [
      'index: ci on a nested field',
      {
        given: entityWith([
          '    - {name: o, type: OBJECT, object: {fields: [{name: a, type: STRING, index: ci}]}}',
        ]),
        want: ['7:80 INVALID_INDEX'],
      },
    ],
    [
      'index: another word',
      {
        given: entityWith(['    - {name: s, type: STRING, index: CI}']),
        want: ['7:38 INVALID_VALUE'],
      },
    ],
    [
      'composite indexes: ascending and descending fields',
      {
        given: entityWith(
          ['    - {name: c, type: STRING}', '    - {name: p, type: DECIMAL}'],
          ['  indexes: [[c, -p], [p]]'],
        ),
        want: [],
      },
    ],
    [
      'composite index naming an unknown field',
      {
        given: entityWith(['    - {name: c, type: STRING}'], ['  indexes: [[c, -price]]']),
        want: ['5:17 UNKNOWN_FIELD'],
      },
    ],
    [
      'composite index naming a field twice',
      {
        given: entityWith(['    - {name: c, type: STRING}'], ['  indexes: [[c, -c]]']),
        want: ['5:17 INVALID_INDEX'],
      },
    ],
    [
      'composite index declared twice',
      {
        given: entityWith(['    - {name: c, type: STRING}'], ['  indexes: [[c], [c]]']),
        want: ['5:18 INVALID_INDEX'],
      },
    ],
    [
      'empty composite index',
      {
        given: entityWith([], ['  indexes: [[]]']),
        want: ['5:13 INVALID_INDEX'],
      },
    ],
    [
      'composite index on a type that cannot be indexed',
      {
        given: entityWith(
          [
            '    - {name: g, type: GEOHASH_LOCATION}',
            '    - {name: t, type: ARRAY, array: {type: STRING}}',
          ],
          ['  indexes: [[id, g], [t]]'],
        ),
        want: ['5:18 INVALID_INDEX', '5:23 INVALID_INDEX'],
      },
    ],
    [
      'indexes that are not lists of names',
      {
        given: entityWith([], ['  indexes: [id, [{a: 1}]]']),
        want: ['5:13 INVALID_VALUE', '5:18 INVALID_VALUE'],
      },
    ],
    [
      'composite index with a field spelled in another case',
      {
        given: entityWith(['    - {name: price, type: DECIMAL}'], ['  indexes: [[-Price]]']),
        want: ['5:14 UNKNOWN_FIELD'],
      },
    ],
    [
      'empty enum value',
      {
        given: entityWith(['    - {name: e, type: ENUM, enums: [A, ""]}']),
        want: ['7:40 INVALID_VALUE'],
      },
    ],
    [
      'empty select value',
      {
        given: entityWith(['    - {name: s, type: SELECT, select: {elems: [{value: ""}]}}']),
        want: ['7:56 INVALID_VALUE'],
      },
    ],
    [
      'unknown key in select',
      {
        given: entityWith([
          '    - {name: s, type: SELECT, select: {elemz: [], elems: [{value: a}]}}',
        ]),
        want: ['7:40 UNKNOWN_KEY'],
      },
    ],
    [
      'entityRef without entity',
      {
        given: entityWith(['    - {name: r, type: ENTITY_REF, entityRef: {}}']),
        want: ['7:46 MISSING_KEY'],
      },
    ],
    [
      'any without typeField',
      { given: entityWith(['    - {name: a, type: ANY, any: {}}']), want: ['7:33 MISSING_KEY'] },
    ],
    [
      'any.typeField in an array element names a sibling of the array',
      {
        given: entityWith([
          '    - {name: kind, type: STRING}',
          '    - {name: vals, type: ARRAY, array: {type: ANY, any: {typeField: kind}}}',
        ]),
        want: [],
      },
    ],
    [
      'ENTITY_REF to a missing entity',
      {
        given: entityWith(['    - {name: r, type: ENTITY_REF, entityRef: {entity: NOPE}}']),
        want: ['7:55 UNKNOWN_ENTITY_REF'],
      },
    ],
    [
      'type config key of another type',
      {
        given: entityWith(['    - {name: s, type: STRING, object: {fields: []}}']),
        want: ['7:31 INVALID_VALUE'],
      },
    ],
    [
      'separator with % and ?',
      { given: entityWith([], ['  lkSeparator: "%?"']), want: ['5:16 INVALID_SEPARATOR'] },
    ],
    [
      'single record with a composite lk: accepted as Gemini does, addressed by lkValue alone',
      {
        given: entityWith(
          ['    - {name: part, type: STRING}'],
          ['  singleRecord: true', '  lk: [id, part]', '  lkValue: only~one'],
        ).replace('  lk: [id]\n', ''),
        want: [],
      },
    ],
    [
      'single record without lk or key field, as Gemini declares one',
      {
        given:
          'type: ENTITY\nentity:\n  name: S\n  singleRecord: true\n  fields:\n    - {name: a, type: STRING}\n',
        want: [],
      },
    ],
    [
      'single record whose ENUM key cannot hold lkValue',
      {
        given: [
          'type: ENTITY',
          'entity:',
          '  name: MODE',
          '  singleRecord: true',
          '  lk: [mode]',
          '  lkValue: AUTO',
          '  fields:',
          '    - {name: mode, type: ENUM, enums: [LIGHT, DARK]}',
        ].join('\n'),
        want: ['6:12 SINGLE_RECORD'],
      },
    ],
    [
      'single record whose SELECT key holds lkValue',
      {
        given: [
          'type: ENTITY',
          'entity:',
          '  name: MODE',
          '  singleRecord: true',
          '  lk: [mode]',
          '  lkValue: dark',
          '  fields:',
          '    - {name: mode, type: SELECT, select: {elems: [{value: light}, {value: dark}]}}',
        ].join('\n'),
        want: [],
      },
    ],
    [
      'tree parent is the key field',
      {
        given: entityWith([], ['  tree: {enabled: true, parentField: id}']),
        want: ['5:38 INVALID_TREE'],
      },
    ],
    [
      'tree without parentField and no parent field',
      { given: entityWith([], ['  tree: {enabled: true}']), want: ['5:9 INVALID_TREE'] },
    ],
    [
      'disabled tree is not checked',
      { given: entityWith([], ['  tree: {enabled: false, parentField: nope}']), want: [] },
    ],
    [
      'unknown key in tree',
      { given: entityWith([], ['  tree: {enabeld: true}']), want: ['5:10 UNKNOWN_KEY'] },
    ],
    [
      'mapping key that is not a string',
      {
        given: entityWith(['    - {name: x, type: STRING, [a]: 1}']),
        want: ['7:31 INVALID_VALUE'],
      },
    ],
    [
      '.inf is not JSON',
      {
        given: entityWith([
          '    - {name: e, type: SELECT, select: {elems: [{value: a, driveFields: .inf}]}}',
        ]),
        want: ['7:72 INVALID_VALUE'],
      },
    ],
    [
      'unresolved YAML tag',
      { given: entityWith(['    - {name: x, type: !custom STRING}']), want: ['7:23 PARSE_ERROR'] },
    ],
    [
      'recursive alias',
      {
        given: entityWith(['    - &f {name: x, type: OBJECT, object: {fields: [*f]}}']),
        want: ['7:52 PARSE_ERROR'],
      },
    ],
    [
      'document type that is not a string',
      { given: 'type: [ENTITY]\nentity: {}', want: ['1:7 NOT_AN_ENTITY'] },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(problems(given)).toEqual(want);
  });

  it('stops alias expansion that would explode ("billion laughs")', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level <= 6; level++) {
      lines.push(
        `a${level}: &a${level} [${Array(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    }
    const codes = loadSchemas([{ file: 'bomb.yaml', text: lines.join('\n') }]).diagnostics.map(
      (d) => d.code,
    );
    expect(codes).toContain('PARSE_ERROR');
  });

  it('reports an invalid file without hiding problems in the other files', () => {
    const { diagnostics } = loadSchemas([
      { file: 'a.json', text: '{' },
      { file: 'b.yaml', text: entityWith(['    - {name: x, type: TEXT}']) },
    ]);
    expect(diagnostics.map((d) => `${d.file} ${d.code}`)).toEqual([
      'a.json PARSE_ERROR',
      'b.yaml UNKNOWN_TYPE',
    ]);
  });
});
