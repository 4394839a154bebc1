/**
 * The admin app uses `q`, `count`, `fields` and `expand` on a list only where the service's OpenAPI
 * document describes them (runtime/admin/src/features.ts): a service of today's generator has none,
 * and one whose list operation names them (directly or through `$ref`) gets each.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listFeatures, parameterNames } from '../../runtime/admin/src/features.js';

const shop = JSON.parse(
  readFileSync(new URL('../golden/shop/openapi.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

describe('the list features the admin app detects', () => {
  it('reads the list parameters of a generated document, resolving $refs', () => {
    const names = parameterNames(shop, '/data/product');
    for (const name of ['orderBy', 'limit', 'cursor']) expect(names).toContain(name);
  });

  it('finds none of the optional ones where the document names none', () => {
    const names = parameterNames(shop, '/data/product');
    const optional = ['q', 'count', 'fields', 'expand'].filter((name) => names.has(name));
    expect(listFeatures(shop, '/data/product')).toEqual(new Set(optional));
    expect(listFeatures(shop, '/nowhere')).toEqual(new Set());
  });

  it('finds each one a list operation describes', () => {
    const document = {
      paths: {
        '/data/product': {
          get: {
            parameters: [
              { name: 'q', in: 'query' },
              { $ref: '#/components/parameters/Count' },
              { name: 'orderBy', in: 'query' },
            ],
          },
        },
        '/data/category': { get: { parameters: [{ name: 'expand', in: 'query' }] } },
      },
      components: { parameters: { Count: { name: 'count', in: 'query' } } },
    };
    expect(listFeatures(document, '/data/product')).toEqual(new Set(['q', 'count']));
    expect(listFeatures(document, '/data/category')).toEqual(new Set(['expand']));
  });
});
