/**
 * The JSON text of a listed record, written straight from its raw row (in a reader, or on the main
 * thread without readers): byte for byte `JSON.stringify` of the record `TableLayout.decode`
 * makes, so a page is answered without building and cloning its records.
 */

/** How a column appears in a record's JSON. */
export const TextKind = {
  /** Written as `JSON.stringify` of the column's value (text, numbers). */
  Plain: 0,
  /** 0/1 written as `false`/`true`. */
  Boolean: 1,
  /** JSON text, written as `JSON.stringify(JSON.parse(text))` (see `canonicalJson`). */
  Json: 2,
  /** Not part of the record (a fixed column). */
  Hidden: 3,
} as const;
export type TextKind = (typeof TextKind)[keyof typeof TextKind];

/** The columns of a table's rows, in select-list order: `"name":` prefixes and kinds. */
export interface RecordShape {
  readonly keys: readonly string[];
  readonly kinds: readonly TextKind[];
}

/** A page of records as JSON texts, with one record's raw row kept for the caller. */
export interface RowTexts {
  readonly texts: string[];
  /** The raw row at the index asked for, when there is one. */
  readonly row: unknown[] | undefined;
}

/** The JSON text of the record of a raw row (NULL columns and hidden ones left out). */
export function recordText(shape: RecordShape, row: readonly unknown[]): string {
  const { keys, kinds } = shape;
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const value = row[i];
    const kind = kinds[i];
    if (value === null || value === undefined || kind === TextKind.Hidden) continue;
    if (text.length > 1) text += ',';
    text += keys[i];
    if (kind === TextKind.Boolean) text += value !== 0 && value !== 0n ? 'true' : 'false';
    else if (kind === TextKind.Json) text += canonicalJson(value as string);
    else text += JSON.stringify(value);
  }
  return `${text}}`;
}

/** The texts of every row, and the raw row at `keep` (if any). */
export function rowTexts(shape: RecordShape, rows: readonly unknown[][], keep: number): RowTexts {
  const texts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) texts[i] = recordText(shape, rows[i]!);
  return { texts, row: rows[keep] };
}

/**
 * `JSON.stringify(JSON.parse(text))`: what a JSON column looks like in a response. The stored text
 * is usually that already (the driver writes `JSON.stringify` of the value); text another program
 * or a migration wrote may not be.
 */
export function canonicalJson(text: string): string {
  return JSON.stringify(JSON.parse(text));
}
