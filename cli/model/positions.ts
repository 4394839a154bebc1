/**
 * Source positions for a model built without them. The quick parse (cli/schema/parse.ts) leaves
 * them out, since a valid schema needs none; when a later phase finds a problem (the migrations
 * planner, say), the entities of a careful parse lend their positions to the model, by entity and
 * field name, without building the model again.
 */
import type { LoadedEntity } from '../schema/types.js';
import { modelPosition } from './normalize.js';
import type { ServiceModel } from './types.js';

/** `model` with the positions of `located` (the same schema, parsed with positions). */
export function withPositions(model: ServiceModel, located: readonly LoadedEntity[]): ServiceModel {
  const byName = new Map(located.map((loaded) => [loaded.entity.name, loaded]));
  return {
    ...model,
    entities: model.entities.map((entity) => {
      const loaded = byName.get(entity.name);
      if (loaded === undefined) return entity;
      const fields = loaded.fieldPositions ?? {};
      return {
        ...entity,
        position: modelPosition(loaded.position),
        fields: entity.fields.map((field) => {
          const at = fields[field.name];
          return at === undefined ? field : { ...field, position: modelPosition(at) };
        }),
      };
    }),
  };
}
