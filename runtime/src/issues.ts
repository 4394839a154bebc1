/** Where in a request body a problem was found: field names and list indexes. */
export type IssuePath = readonly (string | number)[];

/** Machine-readable kind of a validation problem. */
export type IssueCode =
  | 'conversion_failed'
  | 'required'
  | 'unknown_field'
  | 'invalid_key'
  | 'duplicate_key'
  /** An ENTITY_REF with `onDelete` names a record that does not exist (SPEC §11). */
  | 'missing_reference'
  /** A value breaks a constraint of its field: min/max, lengths, pattern, item counts (SPEC §16). */
  | 'constraint_violated'
  /** A value (or combination) of a unique rule is held by another record (SPEC §16). */
  | 'unique_violated'
  /** A value for a field the server sets or generates (SPEC §16). */
  | 'server_set';

/** One problem with one value of a request body. */
export interface Issue {
  readonly path: IssuePath;
  readonly code: IssueCode;
  readonly message: string;
}

/** Renders a path the way messages name a field: `location.lat`, `tags[2]`, `[3].id`. */
export function formatPath(path: IssuePath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}
