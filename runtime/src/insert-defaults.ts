/**
 * Insert defaults (SPEC §16): a top-level field's `default` is also the value an insert — POST,
 * one record or a list, and a PUT that creates the record — gives the field when the body leaves
 * it out (absent or `null`). A PUT that replaces and a PATCH never fill defaults.
 */
import type { EntityDefinition } from './definition.js';
import type { JsonValue } from './schema.js';

const cache = new WeakMap<object, readonly (readonly [string, JsonValue])[]>();

/** The top-level fields of the entity that declare a default, with it, in field order. */
export function insertDefaultsOf(
  definition: EntityDefinition<object>,
): readonly (readonly [string, JsonValue])[] {
  const document = definition.document;
  let defaults = cache.get(document);
  if (defaults === undefined) {
    defaults = document.entity.fields.flatMap((field) =>
      field.default === undefined ? [] : [[field.name, field.default] as const],
    );
    cache.set(document, defaults);
  }
  return defaults;
}

/**
 * `input` with every absent (or `null`) field that has a default set to a copy of it; `input`
 * itself when nothing is filled or it is not an object (the validator then names the problem).
 */
export function withInsertDefaults(definition: EntityDefinition<object>, input: unknown): unknown {
  const defaults = insertDefaultsOf(definition);
  if (defaults.length === 0 || typeof input !== 'object' || input === null || Array.isArray(input))
    return input;
  const body = input as Record<string, unknown>;
  let filled: Record<string, unknown> | undefined;
  for (const [name, value] of defaults) {
    const given = Object.hasOwn(body, name) ? body[name] : undefined;
    if (given !== undefined && given !== null) continue;
    filled ??= { ...body };
    filled[name] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  }
  return filled ?? input;
}
