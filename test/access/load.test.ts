/**
 * The access file (`--access`): every validation rule as a table (`line:col CODE` per case), in
 * YAML and in JSON, and the resolved rules (defaults filled in; the same from either format). The
 * CLI's `file:line:col` output: test/cli/access.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadAccess } from '../../cli/access/index.js';
import { ROOT } from '../helpers/generate.js';
import { modelOf } from '../migrate/helpers.js';

const MODEL = modelOf(
  await readFile(join(ROOT, 'fixtures/access/schema.yaml'), 'utf8'),
  'schema.yaml',
);

function problems(text: string, file = 'access.yaml'): string[] {
  return loadAccess({ file, text }, MODEL).diagnostics.map(
    (d) => `${d.line}:${d.column} ${d.code}`,
  );
}

describe('access file validation', () => {
  it.each<[string, { given: string; want: string[] }]>([
    ['the fixture', { given: 'entities:\n  PRODUCT:\n    GET_LIST: [public]\n', want: [] }],
    ['not a mapping', { given: '- a\n', want: ['1:1 ACCESS_INVALID_VALUE'] }],
    ['unknown top-level key', { given: 'entitys: {}\n', want: ['1:1 ACCESS_UNKNOWN_KEY'] }],
    [
      'unknown entity',
      { given: 'entities:\n  PRODUCTS: {}\n', want: ['2:3 ACCESS_UNKNOWN_ENTITY'] },
    ],
    [
      'entity listed twice (case-insensitively)',
      { given: 'entities:\n  order: {}\n  ORDER: {}\n', want: ['3:3 ACCESS_DUPLICATE_ENTITY'] },
    ],
    [
      'unknown method',
      {
        given: 'entities:\n  ORDER:\n    GET_ALL: [public]\n',
        want: ['3:5 ACCESS_UNKNOWN_METHOD'],
      },
    ],
    [
      'roles that are not a list',
      { given: 'entities:\n  ORDER:\n    NEW: admin\n', want: ['3:10 ACCESS_INVALID_VALUE'] },
    ],
    [
      'a role that is not a string',
      {
        given: 'entities:\n  ORDER:\n    NEW: [admin, 3, ""]\n',
        want: ['3:18 ACCESS_INVALID_ROLE', '3:21 ACCESS_INVALID_ROLE'],
      },
    ],
    [
      'default that is not a list',
      { given: 'default: admin\n', want: ['1:10 ACCESS_INVALID_VALUE'] },
    ],
    [
      'owner that is not a field',
      { given: 'entities:\n  ORDER:\n    owner: custmer\n', want: ['3:12 ACCESS_INVALID_OWNER'] },
    ],
    [
      'owner of a type that cannot hold a subject',
      { given: 'entities:\n  ORDER:\n    owner: total\n', want: ['3:12 ACCESS_INVALID_OWNER'] },
    ],
    ['broken YAML', { given: 'entities: [\n', want: ['2:1 ACCESS_PARSE_ERROR'] }],
  ])('%s', (_name, { given, want }) => {
    expect(problems(given)).toEqual(want);
  });

  it('says what was meant', () => {
    const [unknown] = loadAccess(
      { file: 'access.yaml', text: 'entities:\n  ORDR:\n    GET_LST: [public]\n' },
      MODEL,
    ).diagnostics;
    expect(unknown?.message).toBe(
      "Entity ORDR is not defined in the schema; did you mean 'ORDER'?",
    );
  });

  it('resolves every method of every entity, the default filling the gaps', async () => {
    const text = await readFile(join(ROOT, 'fixtures/access/access.yaml'), 'utf8');
    const { access, diagnostics } = loadAccess({ file: 'access.yaml', text }, MODEL);
    expect(diagnostics).toEqual([]);
    expect(Object.fromEntries(access!)).toEqual({
      AUDIT: {
        methods: {
          GET_LIST: ['admin'],
          GET_BYID: ['admin'],
          NEW: ['admin'],
          UPDATE: ['admin'],
          DELETE: ['admin'],
        },
      },
      CUSTOMER: {
        methods: {
          GET_LIST: ['admin'],
          GET_BYID: ['admin'],
          NEW: ['admin'],
          UPDATE: ['admin'],
          DELETE: ['admin'],
        },
      },
      NOTE: {
        methods: {
          GET_LIST: ['public'],
          GET_BYID: ['public'],
          NEW: ['public'],
          UPDATE: ['authenticated'],
          DELETE: ['authenticated'],
        },
        owner: 'author',
      },
      ORDER: {
        methods: {
          GET_LIST: ['authenticated'],
          GET_BYID: ['authenticated'],
          NEW: ['authenticated'],
          UPDATE: ['authenticated'],
          DELETE: ['admin'],
        },
        owner: 'customer',
      },
      PRODUCT: {
        methods: {
          GET_LIST: ['public'],
          GET_BYID: ['public'],
          NEW: ['editor', 'admin'],
          UPDATE: ['editor', 'admin', 'reviewer'],
          DELETE: ['admin'],
        },
      },
      SETTINGS: {
        methods: {
          GET_LIST: ['public'],
          GET_BYID: ['public'],
          NEW: ['admin'],
          UPDATE: ['editor', 'admin'],
          DELETE: ['admin'],
        },
      },
      WISHLIST: {
        methods: {
          GET_LIST: ['authenticated'],
          GET_BYID: ['authenticated'],
          NEW: ['authenticated'],
          UPDATE: ['authenticated'],
          DELETE: ['authenticated'],
        },
        owner: 'customer',
      },
    });
    expect(loadAccess(undefined, MODEL)).toEqual({ access: undefined, diagnostics: [] });
  });
});

describe('access file written in JSON', () => {
  it.each<[string, { given: string; want: string[] }]>([
    ['valid', { given: '{"entities": {"PRODUCT": {"GET_LIST": ["public"]}}}', want: [] }],
    ['not an object', { given: '["a"]', want: ['1:1 ACCESS_INVALID_VALUE'] }],
    ['unknown top-level key', { given: '{\n  "entitys": {}\n}', want: ['2:3 ACCESS_UNKNOWN_KEY'] }],
    [
      'unknown entity',
      {
        given: '{\n  "entities": {\n    "PRODUCTS": {}\n  }\n}',
        want: ['3:5 ACCESS_UNKNOWN_ENTITY'],
      },
    ],
    [
      'unknown method and an owner of the wrong type',
      {
        given:
          '{\n  "entities": {\n    "ORDER": {\n      "owner": "total",\n      "GET": ["x"]\n    }\n  }\n}',
        want: ['4:16 ACCESS_INVALID_OWNER', '5:7 ACCESS_UNKNOWN_METHOD'],
      },
    ],
    [
      'a role that is not a string',
      {
        given: '{"entities": {"ORDER": {\n  "NEW": ["admin", 3, ""]}}}',
        want: ['2:20 ACCESS_INVALID_ROLE', '2:23 ACCESS_INVALID_ROLE'],
      },
    ],
    [
      'roles that are not a list',
      { given: '{"default":\n  "admin"}', want: ['2:3 ACCESS_INVALID_VALUE'] },
    ],
    [
      'a key given twice',
      {
        given: '{\n  "default": ["a"],\n  "default": ["b"]\n}',
        want: ['3:3 ACCESS_DUPLICATE_KEY'],
      },
    ],
    ['broken JSON', { given: '{\n  "entities": {,\n}', want: ['2:16 ACCESS_PARSE_ERROR'] }],
  ])('%s', (_name, { given, want }) => {
    expect(problems(given, 'access.json')).toEqual(want);
  });

  it('resolves to the same rules as the same file in YAML', async () => {
    const yamlText = await readFile(join(ROOT, 'fixtures/access/access.yaml'), 'utf8');
    const fromYaml = loadAccess({ file: 'access.yaml', text: yamlText }, MODEL);
    const jsonText = JSON.stringify(parseYaml(yamlText), null, 2);
    const fromJson = loadAccess({ file: 'access.json', text: jsonText }, MODEL);
    expect(fromJson.diagnostics).toEqual([]);
    expect(fromJson.access).toEqual(fromYaml.access);
  });
});

describe('the shop example', () => {
  it('has a valid access file, which the README shows as it is', async () => {
    const shop = modelOf(
      await readFile(join(ROOT, 'fixtures/shop/shop.yaml'), 'utf8'),
      'shop.yaml',
    );
    const text = await readFile(join(ROOT, 'fixtures/shop/access.yaml'), 'utf8');
    const { access, diagnostics } = loadAccess({ file: 'access.yaml', text }, shop);
    expect(diagnostics).toEqual([]);
    expect(access?.get('CATEGORY')?.methods.NEW).toEqual(['editor', 'admin']);
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`\`\`\`yaml\n${text}\`\`\``);
  });
});
