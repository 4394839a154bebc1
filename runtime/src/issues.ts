/** Where in a request body a problem was found: field names and list indexes. */
export type IssuePath = readonly (string | number)[];

/** Machine-readable kind of a validation problem. */
export type IssueCode =
  'conversion_failed' | 'required' | 'unknown_field' | 'invalid_key' | 'duplicate_key';

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
