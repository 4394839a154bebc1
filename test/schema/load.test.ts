import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import {
  loadSchemas,
  type EntityDoc,
  type LoadedEntity,
  type SchemaSource,
} from '../../cli/schema/index.js';

/** Loads sources that must be valid; fails the test with the diagnostics otherwise. */
function loadValid(...sources: SchemaSource[]): LoadedEntity[] {
  const { entities, diagnostics } = loadSchemas(sources);
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  return entities;
}

const ID_FIELD = { name: 'id', type: 'STRING' } as const;

describe('loadSchemas on valid input', () => {
  it('reads a JSON array of ENTITY documents', () => {
    const text = JSON.stringify(
      [
        { type: 'ENTITY', entity: { name: 'A', lk: ['id'], fields: [ID_FIELD] } },
        {
          type: 'ENTITY',
          entity: {
            name: 'B',
            lk: ['id'],
            fields: [ID_FIELD, { name: 'n', type: 'INTEGER', required: true }],
          },
        },
      ],
      null,
      2,
    );
    const entities = loadValid({ file: 'schema.json', text });
    expect(entities.map((loaded) => loaded.entity)).toEqual<EntityDoc[]>([
      { name: 'A', lk: ['id'], fields: [ID_FIELD] },
      { name: 'B', lk: ['id'], fields: [ID_FIELD, { name: 'n', type: 'INTEGER', required: true }] },
    ]);
    expect(entities.map((loaded) => loaded.position)).toEqual([
      { file: 'schema.json', line: 4, column: 5 },
      { file: 'schema.json', line: 19, column: 5 },
    ]);
  });

  it('reads a single JSON document object', () => {
    const text =
      '{"type": "ENTITY", "entity": {"name": "A", "lk": ["id"], "fields": [{"name": "id", "type": "STRING"}]}}';
    const [loaded] = loadValid({ file: 'a.json', text });
    expect(loaded?.entity).toEqual({ name: 'A', lk: ['id'], fields: [ID_FIELD] });
    expect(loaded?.position).toEqual({ file: 'a.json', line: 1, column: 20 });
  });

  it('reads every document of a multi-document YAML file, in order', () => {
    const text = [
      '# leading comment',
      '---',
      'type: ENTITY',
      'entity:',
      '  name: FIRST',
      '  lk: [id]',
      '  fields: [{name: id, type: STRING}]',
      '---',
      'type: ENTITY',
      'entity: {name: SECOND, lk: [id], fields: [{name: id, type: STRING}]}',
      '---',
      '',
    ].join('\n');
    const entities = loadValid({ file: 'schema.yml', text });
    expect(
      entities.map((loaded) => [loaded.entity.name, loaded.position.line, loaded.position.column]),
    ).toEqual([
      ['FIRST', 4, 1],
      ['SECOND', 10, 1],
    ]);
  });

  it('keeps file order, then document order, across several files', () => {
    const entity = (name: string, ref?: string): string =>
      `type: ENTITY\nentity:\n  name: ${name}\n  lk: [id]\n  fields:\n    - {name: id, type: STRING}\n` +
      (ref === undefined
        ? ''
        : `    - {name: ref, type: ENTITY_REF, entityRef: {entity: ${ref}}}\n`);
    const entities = loadValid(
      { file: 'z.yaml', text: `${entity('ZULU', 'alpha')}---\n${entity('YANKEE')}` },
      { file: 'a.yaml', text: entity('ALPHA', 'Zulu') },
    );
    expect(entities.map((loaded) => `${loaded.position.file}:${loaded.entity.name}`)).toEqual([
      'z.yaml:ZULU',
      'z.yaml:YANKEE',
      'a.yaml:ALPHA',
    ]);
    // References resolve case-insensitively and come out in the declared spelling.
    expect(entities[0]?.entity.fields[1]).toEqual({
      name: 'ref',
      type: 'ENTITY_REF',
      entityRef: { entity: 'ALPHA' },
    });
    expect(entities[2]?.entity.fields[1]).toEqual({
      name: 'ref',
      type: 'ENTITY_REF',
      entityRef: { entity: 'ZULU' },
    });
    // The document stays exactly as written.
    expect(entities[0]?.document).toEqual({
      type: 'ENTITY',
      entity: {
        name: 'ZULU',
        lk: ['id'],
        fields: [ID_FIELD, { name: 'ref', type: 'ENTITY_REF', entityRef: { entity: 'alpha' } }],
      },
    });
  });

  it('reads a file with another extension as YAML unless it starts with { or [', () => {
    const yaml = 'type: ENTITY\nentity: {name: A, lk: [id], fields: [{name: id, type: STRING}]}\n';
    expect(loadValid({ file: 'schema.txt', text: yaml })).toHaveLength(1);
    const json =
      '  [{"type": "ENTITY", "entity": {"name": "A", "lk": ["id"], "fields": [{"name": "id", "type": "STRING"}]}}]';
    expect(loadValid({ file: 'schema', text: json })).toHaveLength(1);
  });

  it('accepts YAML anchors and aliases for shared definitions', () => {
    const text = [
      'type: ENTITY',
      'entity:',
      '  name: SHOP',
      '  lk: [id]',
      '  fields:',
      '    - {name: id, type: STRING}',
      '    - name: billing',
      '      type: OBJECT',
      '      object: &address {fields: [{name: city, type: STRING}]}',
      '    - name: shipping',
      '      type: OBJECT',
      '      object: *address',
    ].join('\n');
    const [loaded] = loadValid({ file: 's.yaml', text });
    expect(loaded?.entity.fields[2]).toEqual({
      name: 'shipping',
      type: 'OBJECT',
      object: { fields: [{ name: 'city', type: 'STRING' }] },
    });
  });

  it('ignores a byte-order mark', () => {
    const text =
      '\uFEFFtype: ENTITY\nentity: {name: A, lk: [id], fields: [{name: id, type: STRING}]}\n';
    expect(loadValid({ file: 's.yaml', text })[0]?.position).toEqual({
      file: 's.yaml',
      line: 2,
      column: 1,
    });
  });

  it('loads nested arrays, objects and dictionaries with every type configuration', () => {
    const text = [
      'type: ENTITY',
      'entity:',
      '  name: DEEP',
      '  lk: [id]',
      '  fields:',
      '    - {name: id, type: INTEGER, index: true}',
      '    - name: grid',
      '      type: ARRAY',
      '      array:',
      '        type: ARRAY',
      '        array:',
      '          type: OBJECT',
      '          object:',
      '            fields:',
      '              - {name: level, type: ENUM, enums: [LOW, HIGH], required: true}',
      '              - {name: props, type: DICTIONARY, dict: {fields: [{name: v, type: ANY}]}}',
      '    - {name: kinds, type: ARRAY, array: {type: SELECT, select: {elems: [{value: a}]}}}',
      '    - {name: refs, type: ARRAY, array: {type: ENTITY_REF, entityRef: {entity: deep}}}',
    ].join('\n');
    const [loaded] = loadValid({ file: 'deep.yaml', text });
    expect(loaded?.entity.fields).toEqual([
      { name: 'id', type: 'INTEGER', index: true },
      {
        name: 'grid',
        type: 'ARRAY',
        array: {
          type: 'ARRAY',
          array: {
            type: 'OBJECT',
            object: {
              fields: [
                { name: 'level', type: 'ENUM', enums: ['LOW', 'HIGH'], required: true },
                {
                  name: 'props',
                  type: 'DICTIONARY',
                  dict: { fields: [{ name: 'v', type: 'ANY' }] },
                },
              ],
            },
          },
        },
      },
      {
        name: 'kinds',
        type: 'ARRAY',
        array: { type: 'SELECT', select: { elems: [{ value: 'a' }] } },
      },
      { name: 'refs', type: 'ARRAY', array: { type: 'ENTITY_REF', entityRef: { entity: 'DEEP' } } },
    ]);
  });
});

describe('Gemini compatibility', () => {
  const GEMINI = fileURLToPath(new URL('../../fixtures/gemini/schema.json', import.meta.url));

  it('loads the Gemini fixture with zero diagnostics', () => {
    const text = readFileSync(GEMINI, 'utf8');
    const entities = loadValid({ file: 'schema.json', text });
    expect(entities.map((loaded) => loaded.entity.name)).toEqual([
      'CATEGORY',
      'PRODUCT',
      'SINGLEREC',
      'SITE_SETTINGS',
      'REGION_DEFAULTS',
    ]);
    expect(entities.map((loaded) => loaded.document)).toEqual(JSON.parse(text));
    const [category, product] = entities.map((loaded) => loaded.entity);
    expect(category?.tree).toEqual({ enabled: true, parentField: 'parent' });
    expect(category?.refDisplayFields).toEqual(['name']);
    expect(product?.refDisplaySeparator).toBe(' - ');
    const field = (name: string) => product?.fields.find((candidate) => candidate.name === name);
    expect(field('category')?.entityRef).toEqual({ entity: 'CATEGORY' });
    expect(field('kind')?.select?.elems[0]).toEqual({
      value: 'PHYSICAL',
      displayName: 'Physical good',
      driveFields: ['weight'],
    });
    expect(field('attributes')?.dict?.fields[1]).toEqual({
      name: 'value',
      type: 'ANY',
      any: { typeField: 'type' },
    });
    expect(field('warehouse')?.geoHashLocation).toEqual({ includeGooglePlaceId: false });
    expect(field('name')?.index).toBe(true);
  });

  it('accepts a single-record entity without lk or key field, as Gemini declares one', () => {
    const text =
      'type: ENTITY\nentity:\n  name: S\n  singleRecord: true\n  fields:\n    - {name: a, type: STRING}\n';
    const { entities, diagnostics } = loadSchemas([{ file: 's.yaml', text }]);
    expect(diagnostics).toEqual([]);
    expect(entities[0]?.entity.lk).toEqual([]);
  });

  it('says how to spell an lkValue that names an ENUM key value in another case', () => {
    const text = [
      'type: ENTITY',
      'entity:',
      '  name: MODE',
      '  singleRecord: true',
      '  lk: [mode]',
      '  lkValue: dark',
      '  fields:',
      '    - {name: mode, type: ENUM, enums: [LIGHT, DARK]}',
    ].join('\n');
    const { diagnostics } = loadSchemas([{ file: 's.yaml', text }]);
    expect(diagnostics.map((d) => d.message)).toEqual([
      `'lkValue' "dark" of entity MODE is not a valid ENUM for its key field 'mode'; write it as the schema spells it: 'DARK'`,
    ]);
  });

  it('accepts Gemini habits: names in any case, default tree parent', () => {
    const text = [
      'type: ENTITY',
      'entity:',
      '  name: Settings',
      '  singleRecord: true',
      '  lkValue: default',
      '  lk: [ID]',
      '  fields:',
      '    - {name: id, type: STRING}',
      '    - {name: appName, type: STRING}',
      '---',
      'type: ENTITY',
      'entity:',
      '  name: Menu',
      '  lk: [ID]',
      '  lkSeparator: _',
      '  tree: {enabled: true}',
      '  refDisplayFields: [TITLE]',
      '  fields:',
      '    - {name: id, type: STRING}',
      '    - {name: parent, type: STRING}',
      '    - {name: title, type: STRING}',
      '    - {name: settings, type: ENTITY_REF, entityRef: {entity: SETTINGS}}',
      '    - name: props',
      '      type: DICTIONARY',
      '      dict:',
      '        fields:',
      '          - {name: type, type: STRING}',
      '          - {name: value, type: ANY, any: {typeField: TYPE}}',
    ].join('\n');
    const [settings, menu] = loadValid({ file: 'gemini.yaml', text }).map(
      (loaded) => loaded.entity,
    );
    expect(settings).toEqual({
      name: 'Settings',
      lk: ['id'],
      singleRecord: true,
      lkValue: 'default',
      fields: [
        { name: 'id', type: 'STRING' },
        { name: 'appName', type: 'STRING' },
      ],
    });
    // Names that Gemini matches case-insensitively come out in their declared spelling.
    expect(menu?.lk).toEqual(['id']);
    expect(menu?.refDisplayFields).toEqual(['title']);
    expect(menu?.tree).toEqual({ enabled: true });
    expect(menu?.fields[3]?.entityRef).toEqual({ entity: 'Settings' });
    expect(menu?.fields[4]?.dict?.fields[1]?.any).toEqual({ typeField: 'type' });
  });
});

describe('loadSchemas safety', () => {
  it('does not let a __proto__ key reach a prototype', () => {
    const text = '{"type": "ENTITY", "__proto__": {"polluted": true}, "entity": {}}';
    const { entities, diagnostics } = loadSchemas([{ file: 'p.json', text }]);
    expect(entities).toEqual([]);
    expect(diagnostics.map((diagnostic) => diagnostic.code)).toContain('UNKNOWN_KEY');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not mutate its input and gives the same result twice', () => {
    const sources = Object.freeze([
      Object.freeze({
        file: 'a.yaml',
        text: 'type: ENTITY\nentity: {name: A, lk: [id], fields: [{name: id, type: STRING}]}',
      }),
    ]);
    expect(loadSchemas(sources)).toEqual(loadSchemas(sources));
  });
});
