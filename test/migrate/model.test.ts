/**
 * What the schema phase and the model carry for migrations: `default` in canonical form,
 * `renamedFrom` on fields and entities, and where each top-level field is written.
 */
import { describe, expect, it } from 'vitest';
import { entity, modelOf, schema } from './helpers.js';

describe('default and renamedFrom in the model', () => {
  const model = modelOf(
    schema(
      entity(
        'ITEM',
        ['id'],
        [
          '{name: id, type: STRING}',
          '{name: price, type: DECIMAL, default: "019.990"}',
          '{name: unit, type: ENUM, enums: [CM, IN], default: cm}',
          '{name: at, type: DATE_TIME, default: "2024-01-01T01:00:00+01:00"}',
          '{name: spot, type: GEOHASH_LOCATION, default: {lat: 0, lng: 0}}',
          '{name: cost, type: INTEGER, renamedFrom: price_old}',
        ],
        'renamedFrom: ARTICLE',
      ),
    ),
  );
  const item = model.entities[0]!;
  const field = (name: string) => item.fields.find((candidate) => candidate.name === name)!;

  it.each([
    ['price', '19.99'],
    ['unit', 'CM'],
    ['at', '2024-01-01T00:00:00.000Z'],
    ['spot', { lat: 0, lng: 0, geohash: 's00000000000' }],
  ])('keeps the default of %s in canonical form', (name, want) => {
    expect(field(name).default).toEqual(want);
  });

  it('keeps renamedFrom and the document as written', () => {
    expect(item.renamedFrom).toBe('ARTICLE');
    expect(field('cost').renamedFrom).toBe('price_old');
    expect(field('id').default).toBeUndefined();
    expect(JSON.stringify(item.document)).toContain('"default":"019.990"');
  });

  it('knows where each top-level field is written', () => {
    expect(item.position).toEqual({ file: 'schema.yaml', line: 2, column: 1 });
    expect(field('price').position).toEqual({ file: 'schema.yaml', line: 8, column: 14 });
  });
});
