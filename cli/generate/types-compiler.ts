/**
 * One call of json-schema-to-typescript: the declarations of a set of named JSON Schemas. Runs in
 * the generator's worker thread (../worker) or, from the sources, in the calling thread.
 */
import type { JsonSchema } from './json-schema.js';

/** A name no entity type can have (entity type names are PascalCase identifiers). */
export const TYPES_ROOT = '__EntityGenTypes';

/**
 * The compiled text of `$defs`: every definition declared (the root too, which the caller drops).
 * The library's own formatting is off, since the format step lays out every file anyway.
 */
export async function compileDefinitions($defs: Record<string, JsonSchema>): Promise<string> {
  const { compile } = await import('json-schema-to-typescript');
  return compile({ title: TYPES_ROOT, type: 'object', $defs }, TYPES_ROOT, {
    bannerComment: '',
    format: false,
    unreachableDefinitions: true,
    additionalProperties: false,
    unknownAny: true,
    // minItems/maxItems (SPEC §16 constraints) are checked at runtime; as tuple types they would
    // make every array a fixed-length one.
    ignoreMinAndMaxItems: true,
    // Our schemas carry no $ids or file references; nothing to resolve outside the document.
    $refOptions: { resolve: { file: false, http: false } },
  });
}
