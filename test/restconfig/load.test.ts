/**
 * loadRestConfig on valid input: the exact effective map (defaults included) for YAML, JSON and
 * MULTIPLE_ENTITIES configs, against fixtures/shop/shop.yaml.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { normalize } from '../../cli/model/normalize.js';
import type { SchemaModel } from '../../cli/model/types.js';
import {
  DEFAULT_ENTITY_REST_CONFIG,
  DEFAULT_START_LIMIT,
  loadRestConfig,
  type EntityRestConfig,
  type RestConfigSource,
} from '../../cli/restconfig/index.js';
import { loadSchemas } from '../../cli/schema/index.js';
import type { RestConfig } from '../../runtime/src/service.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function shopModel(): SchemaModel {
  const file = 'shop.yaml';
  const text = readFileSync(path.join(FIXTURES, 'shop', file), 'utf8');
  const { entities, diagnostics } = loadSchemas([{ file, text }]);
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  const { model } = normalize(entities);
  if (model === undefined) throw new Error('shop.yaml did not normalize');
  return model;
}

const model = shopModel();

const ALL_METHODS = ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'];
const DEFAULTS = { allowedMethods: ALL_METHODS, getListStrategy: 'ALL' };

/** Loads a config that must be valid and returns the map as a plain object. */
function effective(source: RestConfigSource | undefined): Record<string, EntityRestConfig> {
  const { configs, diagnostics } = loadRestConfig(source, model);
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  return Object.fromEntries(configs);
}

function fixture(name: string): RestConfigSource {
  return {
    file: name,
    text: readFileSync(path.join(FIXTURES, 'restconfig', 'valid', name), 'utf8'),
  };
}

const SHOP_EXPECTED = {
  CATEGORY: { allowedMethods: ['GET_LIST', 'GET_BYID'], getListStrategy: 'ALL' },
  PRODUCT: {
    allowedMethods: ALL_METHODS,
    getListStrategy: 'START_LIMIT',
    defaultLimit: 50,
    maxWindow: 10000,
    defaultOrder: ['name', '-price'],
    allowedOrderingFields: ['name', 'price', 'releaseDate', 'status'],
  },
  SHOP_SETTINGS: DEFAULTS,
};

describe('loadRestConfig on valid input', () => {
  it('gives every entity the defaults when there is no REST config', () => {
    const { configs, diagnostics } = loadRestConfig(undefined, model);
    expect(diagnostics).toEqual([]);
    expect([...configs.keys()]).toEqual(['CATEGORY', 'PRODUCT', 'SHOP_SETTINGS']);
    for (const config of configs.values()) expect(config).toBe(DEFAULT_ENTITY_REST_CONFIG);
    expect(DEFAULT_ENTITY_REST_CONFIG).toEqual(DEFAULTS);
  });

  it.each([
    ['the YAML fixture', 'shop.yaml'],
    ['the JSON fixture (array of documents)', 'shop.json'],
  ])('reads %s', (_, name) => {
    const configs = effective(fixture(name));
    expect(configs).toEqual(SHOP_EXPECTED);
    // Key order is part of the output: the generator bakes JSON.stringify(config) in.
    expect(JSON.stringify(configs['PRODUCT'])).toBe(
      '{"allowedMethods":["GET_LIST","GET_BYID","NEW","UPDATE","DELETE"],"getListStrategy":"START_LIMIT","defaultLimit":50,"maxWindow":10000,"defaultOrder":["name","-price"],"allowedOrderingFields":["name","price","releaseDate","status"]}',
    );
  });

  it('applies a MULTIPLE_ENTITIES document to each entity it lists', () => {
    const shared = {
      allowedMethods: ['GET_LIST', 'GET_BYID'],
      getListStrategy: 'START_LIMIT',
      defaultLimit: DEFAULT_START_LIMIT,
      defaultOrder: ['-name'],
    };
    expect(effective(fixture('multiple-entities.yaml'))).toEqual({
      CATEGORY: shared,
      PRODUCT: shared,
      SHOP_SETTINGS: DEFAULTS,
    });
  });

  const cases: [string, string, Record<string, unknown>][] = [
    ['an empty config keeps the defaults', 'type: ENTITY\nentity: PRODUCT\nconfig: {}\n', DEFAULTS],
    [
      'allowedMethods come out in canonical order',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  allowedMethods: [DELETE, GET_BYID, NEW]\n',
      { allowedMethods: ['GET_BYID', 'NEW', 'DELETE'], getListStrategy: 'ALL' },
    ],
    [
      'an empty allowedMethods switches every method off',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  allowedMethods: []\n',
      { allowedMethods: [], getListStrategy: 'ALL' },
    ],
    [
      'START_LIMIT without defaultLimit pages by 100',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  getListStrategy: START_LIMIT\n',
      { allowedMethods: ALL_METHODS, getListStrategy: 'START_LIMIT', defaultLimit: 100 },
    ],
    [
      'the default page is capped at a smaller maxWindow',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  getListStrategy: START_LIMIT\n  maxWindow: 40\n',
      {
        allowedMethods: ALL_METHODS,
        getListStrategy: 'START_LIMIT',
        defaultLimit: 40,
        maxWindow: 40,
      },
    ],
    [
      'defaultLimit may equal maxWindow',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  getListStrategy: START_LIMIT\n  defaultLimit: 500\n  maxWindow: 500\n',
      {
        allowedMethods: ALL_METHODS,
        getListStrategy: 'START_LIMIT',
        defaultLimit: 500,
        maxWindow: 500,
      },
    ],
    [
      'an explicit ALL is the default',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  getListStrategy: ALL\n',
      DEFAULTS,
    ],
    [
      'every sortable type may be ordered by; +name is stored as name',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  defaultOrder: [+code, -category, price, -stock, weightKg, available, releaseDate, lastRestock, status, size]\n',
      {
        ...DEFAULTS,
        defaultOrder: [
          'code',
          '-category',
          'price',
          '-stock',
          'weightKg',
          'available',
          'releaseDate',
          'lastRestock',
          'status',
          'size',
        ],
      },
    ],
    [
      'an empty defaultOrder is left out',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  defaultOrder: []\n',
      DEFAULTS,
    ],
    [
      'an empty allowedOrderingFields forbids orderBy and is kept',
      'type: ENTITY\nentity: PRODUCT\nconfig:\n  allowedOrderingFields: []\n',
      { ...DEFAULTS, allowedOrderingFields: [] },
    ],
    [
      'entity names match case-insensitively',
      'type: ENTITY\nentity: Product\nconfig:\n  allowedMethods: [GET_LIST]\n',
      { allowedMethods: ['GET_LIST'], getListStrategy: 'ALL' },
    ],
    [
      'a top-level YAML list of documents works like several documents',
      '- type: ENTITY\n  entity: PRODUCT\n  config:\n    allowedMethods: [NEW]\n',
      { allowedMethods: ['NEW'], getListStrategy: 'ALL' },
    ],
  ];

  it.each(cases)('%s', (_, text, expected) => {
    const configs = effective({ file: 'restconfig.yaml', text });
    expect(configs).toEqual({ CATEGORY: DEFAULTS, PRODUCT: expected, SHOP_SETTINGS: DEFAULTS });
  });

  it('reads a single JSON object, and JSON by content when the name has no extension', () => {
    const text = JSON.stringify({
      type: 'MULTIPLE_ENTITIES',
      entities: ['SHOP_SETTINGS', 'category'],
      config: { allowedMethods: ['GET_BYID', 'UPDATE'] },
    });
    const expected = {
      CATEGORY: { allowedMethods: ['GET_BYID', 'UPDATE'], getListStrategy: 'ALL' },
      PRODUCT: DEFAULTS,
      SHOP_SETTINGS: { allowedMethods: ['GET_BYID', 'UPDATE'], getListStrategy: 'ALL' },
    };
    expect(effective({ file: 'rest.json', text })).toEqual(expected);
    expect(effective({ file: 'rest-config', text })).toEqual(expected);
  });

  it.each([
    ['an empty YAML file', 'restconfig.yaml', ''],
    ['a YAML file with only comments', 'restconfig.yaml', '# nothing configured yet\n'],
    ['an empty JSON array', 'restconfig.json', '[]'],
  ])('configures nothing from %s', (_, file, text) => {
    expect(effective({ file, text })).toEqual({
      CATEGORY: DEFAULTS,
      PRODUCT: DEFAULTS,
      SHOP_SETTINGS: DEFAULTS,
    });
  });

  it('returns frozen configs, sorted by entity name', () => {
    const { configs } = loadRestConfig(fixture('shop.yaml'), model);
    expect([...configs.keys()]).toEqual(['CATEGORY', 'PRODUCT', 'SHOP_SETTINGS']);
    for (const config of configs.values()) {
      expect(Object.isFrozen(config)).toBe(true);
      expect(Object.isFrozen(config.allowedMethods)).toBe(true);
    }
  });

  it('produces configs the runtime accepts', () => {
    expectTypeOf<EntityRestConfig>().toExtend<RestConfig>();
    const config: RestConfig | undefined = loadRestConfig(fixture('shop.yaml'), model).configs.get(
      'PRODUCT',
    );
    expect(config?.getListStrategy).toBe('START_LIMIT');
  });
});

describe('loadRestConfig on invalid input', () => {
  it('returns no configs when there is any diagnostic', () => {
    const text = 'type: ENTITY\nentity: PRODUCT\nconfig:\n  getListStrategy: PAGED\n';
    const { configs, diagnostics } = loadRestConfig({ file: 'rest.yaml', text }, model);
    expect(configs.size).toBe(0);
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      `rest.yaml:4:20: 'getListStrategy' of entity PRODUCT must be ALL or START_LIMIT, not the string "PAGED" (REST_INVALID_VALUE)`,
    ]);
  });

  it('reports a problem of an aliased config for each entity that uses it', () => {
    const text = [
      '- type: ENTITY',
      '  entity: CATEGORY',
      '  config: &shared',
      '    allowedMethods: [GET_LST]',
      '- type: ENTITY',
      '  entity: PRODUCT',
      '  config: *shared',
      '',
    ].join('\n');
    const { diagnostics } = loadRestConfig({ file: 'rest.yaml', text }, model);
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      "rest.yaml:4:22: Unknown method 'GET_LST' in 'allowedMethods' of entity CATEGORY; did you mean 'GET_LIST'? (REST_INVALID_VALUE)",
      "rest.yaml:4:22: Unknown method 'GET_LST' in 'allowedMethods' of entity PRODUCT; did you mean 'GET_LIST'? (REST_INVALID_VALUE)",
    ]);
  });
});
