/**
 * `entityRef.onDelete` in the schema (SPEC §11): the rules it accepts, the diagnostics where it
 * cannot hold, and the rule reaching the runtime's table description.
 */
import { describe, expect, it } from 'vitest';
import { loadSchemas } from '../../cli/schema/index.js';
import { tableOf } from '../../runtime/src/schema.js';

const CATEGORY = [
  'type: ENTITY',
  'entity:',
  '  name: CATEGORY',
  '  lk: [name]',
  '  fields:',
  '    - {name: name, type: STRING}',
  '    - {name: parent, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: EMPTY}}',
].join('\n');

/** PRODUCT keyed by code, with the given field lines, next to CATEGORY. */
function productWith(fieldLines: string[], entityLines: string[] = []): string {
  return [
    CATEGORY,
    '---',
    'type: ENTITY',
    'entity:',
    '  name: PRODUCT',
    '  lk: [code]',
    ...entityLines,
    '  fields:',
    '    - {name: code, type: STRING}',
    ...fieldLines,
  ].join('\n');
}

function load(text: string): ReturnType<typeof loadSchemas> {
  return loadSchemas([{ file: 's.yaml', text }]);
}

/** `line:col CODE: message` of every diagnostic. */
function problems(text: string): string[] {
  return load(text).diagnostics.map((d) => `${d.line}:${d.column} ${d.code}: ${d.message}`);
}

describe('entityRef.onDelete in the schema', () => {
  it.each(['RESTRICT', 'EMPTY', 'DELETE'])(
    'accepts %s on a scalar and an array reference',
    (rule) => {
      const text = productWith([
        `    - {name: category, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: ${rule}}}`,
        `    - {name: also, type: ARRAY, array: {type: ENTITY_REF, entityRef: {entity: category, onDelete: ${rule}}}}`,
      ]);
      const loaded = load(text);
      expect(loaded.diagnostics).toEqual([]);
      const product = loaded.entities.find((e) => e.entity.name === 'PRODUCT')!.entity;
      expect(tableOf(product, new Set()).references).toEqual([
        { field: 'category', entity: 'CATEGORY', array: false, onDelete: rule },
        { field: 'also', entity: 'CATEGORY', array: true, onDelete: rule },
      ]);
    },
  );

  it('accepts self references and cycles (CATEGORY.parent, A → B → A)', () => {
    const text = productWith(
      [
        '    - {name: category, type: ENTITY_REF, required: true, entityRef: {entity: CATEGORY, onDelete: DELETE}}',
      ],
      [],
    ).replace(
      '  fields:\n    - {name: name, type: STRING}',
      '  fields:\n    - {name: name, type: STRING}\n    - {name: top, type: ENTITY_REF, entityRef: {entity: PRODUCT, onDelete: RESTRICT}}',
    );
    expect(problems(text)).toEqual([]);
  });

  it('reports an unknown rule with the allowed values', () => {
    const text = productWith([
      '    - {name: category, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: CASCADE}}',
    ]);
    const found = problems(text);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^15:\d+ INVALID_VALUE: 'onDelete' of field 'category' of entity PRODUCT must be RESTRICT, EMPTY or DELETE, not 'CASCADE'; did you mean 'DELETE'\?$/,
    );
  });

  it('reports an unknown target with a did-you-mean', () => {
    const text = productWith([
      '    - {name: category, type: ENTITY_REF, entityRef: {entity: CATEGORIE, onDelete: RESTRICT}}',
    ]);
    expect(problems(text)).toEqual([
      "15:62 UNKNOWN_ENTITY_REF: Field 'category' of entity PRODUCT refers to unknown entity 'CATEGORIE'; did you mean 'CATEGORY'?",
    ]);
  });

  it('reports EMPTY on a required field and on a key field', () => {
    const text = productWith(
      [
        '    - {name: category, type: ENTITY_REF, required: true, entityRef: {entity: CATEGORY, onDelete: EMPTY}}',
        '    - {name: shelf, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: EMPTY}}',
      ],
      [],
    ).replace('  lk: [code]', '  lk: [code, shelf]');
    expect(problems(text)).toEqual([
      "15:98 INVALID_ON_DELETE: 'onDelete' of field 'category' of entity PRODUCT is EMPTY, but the field is required and cannot be cleared; use RESTRICT or DELETE",
      "16:79 INVALID_ON_DELETE: 'onDelete' of field 'shelf' of entity PRODUCT is EMPTY, but the field is part of the key and cannot be cleared; use RESTRICT or DELETE",
    ]);
  });

  it('reports onDelete inside an OBJECT field and on a reference to a single-record entity', () => {
    const text = productWith([
      '    - name: place',
      '      type: OBJECT',
      '      object:',
      '        fields:',
      '          - {name: category, type: ENTITY_REF, entityRef: {entity: CATEGORY, onDelete: DELETE}}',
      '    - {name: settings, type: ENTITY_REF, entityRef: {entity: SETTINGS, onDelete: RESTRICT}}',
      '---',
      'type: ENTITY',
      'entity:',
      '  name: SETTINGS',
      '  singleRecord: true',
      '  fields:',
      '    - {name: motto, type: STRING}',
    ]);
    const found = problems(text);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(
      /^19:\d+ INVALID_ON_DELETE: 'onDelete' of field 'place\.category' of entity PRODUCT is on a nested reference/,
    );
    expect(found[1]).toMatch(
      /^20:\d+ INVALID_ON_DELETE: 'onDelete' of field 'settings' of entity PRODUCT has no effect: SETTINGS is a single-record entity/,
    );
  });
});
