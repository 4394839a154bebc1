/**
 * Which optional list parameters a service offers, read from its OpenAPI document: the app uses
 * `q`, `count`, `fields` and `expand` only where the entity's list operation describes them.
 * No DOM here, so the unit tests can import it.
 */

/** The list parameters the app can use when a service has them. */
export const LIST_FEATURES = ['q', 'count', 'fields', 'expand'] as const;
export type ListFeature = (typeof LIST_FEATURES)[number];

type Document = { readonly [key: string]: unknown };

function objectAt(value: unknown, key: string): Document {
  const item = typeof value === 'object' && value !== null ? (value as Document)[key] : undefined;
  return typeof item === 'object' && item !== null && !Array.isArray(item)
    ? (item as Document)
    : {};
}

function listAt(value: Document, key: string): unknown[] {
  const item = value[key];
  return Array.isArray(item) ? item : [];
}

/** The names of the parameters of `GET <path>` (path-level and operation-level, `$ref`s resolved). */
export function parameterNames(document: Document, path: string): Set<string> {
  const item = objectAt(objectAt(document, 'paths'), path);
  const get = objectAt(item, 'get');
  const shared = objectAt(objectAt(document, 'components'), 'parameters');
  const names = new Set<string>();
  for (const raw of [...listAt(item, 'parameters'), ...listAt(get, 'parameters')]) {
    if (typeof raw !== 'object' || raw === null) continue;
    let parameter = raw as Document;
    const ref = parameter['$ref'];
    if (typeof ref === 'string' && ref.startsWith('#/components/parameters/'))
      parameter = objectAt(shared, ref.slice('#/components/parameters/'.length));
    if (typeof parameter['name'] === 'string') names.add(parameter['name']);
  }
  return names;
}

/** The optional list features `GET <path>` of the document offers. */
export function listFeatures(document: Document, path: string): Set<ListFeature> {
  const names = parameterNames(document, path);
  return new Set(LIST_FEATURES.filter((feature) => names.has(feature)));
}
