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
  /** Whether each row ends with the number of records the list's filters match (`count=true`). */
  readonly counted?: boolean;
}

/**
 * The SQL function (registered on every connection) that writes one value as `recordText` does,
 * `(value, kind)`: what `recordTextSql` hands back to JavaScript (JSON columns, and the values
 * whose text SQLite would write differently).
 */
export const RECORD_VALUE_FUNCTION = 'eg_record_value';

/** A page of records as JSON texts, with one record's raw row kept for the caller. */
export interface RowTexts {
  readonly texts: string[];
  /** The raw row at the index asked for, when there is one. */
  readonly row: unknown[] | undefined;
  /** A `counted` shape's count, read from the first row (none without rows). */
  readonly count?: number;
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
    text += valueText(value, kind!);
  }
  return `${text}}`;
}

/** How `recordText` writes a value that is not NULL, of a column of `kind`. */
export function valueText(value: unknown, kind: TextKind): string {
  if (kind === TextKind.Boolean) return value !== 0 && value !== 0n ? 'true' : 'false';
  if (kind === TextKind.Json) return canonicalJson(value as string);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null'; // as JSON.stringify writes it
  return JSON.stringify(value);
}

/** `RECORD_VALUE_FUNCTION` itself: `valueText` of a value SQLite hands over. */
export function recordValueSql(value: unknown, kind: unknown): string {
  return valueText(value, kind as TextKind);
}

/** A column of `recordTextSql`: how to refer to it, its `"name":` prefix and what it holds. */
export interface TextColumn {
  /** The column in SQL (`"table"."column"`). */
  readonly ref: string;
  /** `JSON.stringify(name)` followed by `:`. */
  readonly key: string;
  /** `TextKind.Plain`, `Boolean` or `Json` (hidden columns are not passed). */
  readonly kind: TextKind;
  /** What SQLite stores in the column: `integer`, `double`, or text. */
  readonly storage: 'integer' | 'double' | 'text';
  /** Never NULL (a key column). */
  readonly notNull: boolean;
}

/** A SQL string literal. */
function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The SQL expression of a record's JSON text: byte for byte `recordText` of its row. SQLite
 * writes what it writes exactly as `JSON.stringify` does: text through `json_quote` (it escapes
 * as `JSON.stringify` does, checked for every code point), integers within the safe range, and
 * 0/1 booleans. The rest goes through `RECORD_VALUE_FUNCTION`, which is `valueText` itself: DOUBLE
 * values (SQLite writes `100.0`, `1.0e-05` and 17 digits where JavaScript writes `100`, `0.00001`
 * and the shortest digits that read back; checking in SQL which values it writes the same way
 * cost more than the call), JSON columns, and values of an unexpected type another program
 * stored. A BLOB in a text column makes the statement fail (`json_quote` refuses it); the driver
 * then writes that page record by record (`refusesBlob`).
 */
export function recordTextSql(columns: readonly TextColumn[]): string {
  const call = (ref: string, kind: TextKind): string => `${RECORD_VALUE_FUNCTION}(${ref}, ${kind})`;
  const pieces = columns.map((column, index) => {
    const { ref, kind } = column;
    // The first piece opens the record when it is never NULL; otherwise every piece starts with a
    // comma, and the first comma is cut off at the end.
    const key = index === 0 && column.notNull ? `{${column.key}` : `,${column.key}`;
    const orNull = (written: string): string =>
      column.notNull ? written : `CASE WHEN ${ref} IS NULL THEN '' ELSE ${written} END`;
    if (kind === TextKind.Boolean)
      return (
        `CASE ${ref} WHEN 0 THEN ${sqlText(`${key}false`)} WHEN 1 THEN ${sqlText(`${key}true`)} ` +
        `ELSE ${orNull(`${sqlText(key)} || ${call(ref, kind)}`)} END`
      );
    let value: string;
    if (kind === TextKind.Json || column.storage === 'double') value = call(ref, kind);
    else if (column.storage === 'integer')
      value =
        `CASE WHEN typeof(${ref}) = 'integer' AND ${ref} BETWEEN -9007199254740991 AND 9007199254740991 ` +
        `THEN CAST(${ref} AS TEXT) ELSE ${call(ref, kind)} END`;
    else value = `json_quote(${ref})`;
    return orNull(`${sqlText(key)} || ${value}`);
  });
  if (pieces.length === 0) return `'{}'`;
  const body = pieces.join(' || ');
  return columns[0]!.notNull ? `${body} || '}'` : `'{' || substr(${body}, 2) || '}'`;
}

/**
 * Where the last record of `page` (record texts joined with commas, ending at `end`) starts. A
 * record begins after `},` and with `{"`. Inside a record the same four characters `},{"` can
 * only end a string value that ends with `},{` (its closing quote then follows `{`, and a comma
 * or a brace follows the quote), or start a nested object of a JSON column. With `nested` (the
 * records may hold JSON columns, or a field name starting with a comma or a brace), a candidate
 * counts only when the text from it to `end` is one JSON value; without, when no comma or brace
 * follows it.
 */
export function lastRecordStart(page: string, end: number, nested: boolean): number {
  // A candidate lies wholly before `end`.
  let from = end - 4;
  for (;;) {
    const at = from < 0 ? -1 : page.lastIndexOf('},{"', from);
    if (at < 0) return 0;
    if (!nested) {
      const next = page.charCodeAt(at + 4);
      if (next !== 0x2c && next !== 0x7d) return at + 2;
    } else {
      try {
        JSON.parse(page.slice(at + 2, end));
        return at + 2;
      } catch {
        // inside the record: look further back
      }
    }
    from = at - 1;
  }
}

/** The texts of every row, and the raw row at `keep` (if any). */
export function rowTexts(shape: RecordShape, rows: readonly unknown[][], keep: number): RowTexts {
  const texts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) texts[i] = recordText(shape, rows[i]!);
  const first = rows[0];
  if (shape.counted !== true || first === undefined) return { texts, row: rows[keep] };
  return { texts, row: rows[keep], count: Number(first[first.length - 1]) };
}

/**
 * `JSON.stringify(JSON.parse(text))`: what a JSON column looks like in a response. The stored text
 * is usually that already (the driver writes `JSON.stringify` of the value), which a single scan
 * confirms (`isCanonicalJson`); text another program or a migration wrote may not be, and is parsed
 * and written again (invalid JSON throws, as parsing it always did).
 */
export function canonicalJson(text: string): string {
  return isCanonicalJson(text) ? text : JSON.stringify(JSON.parse(text));
}

/**
 * Whether `JSON.stringify(JSON.parse(text)) === text` — when in doubt, `false`. True only for
 * valid JSON without whitespace, with numbers as JavaScript writes them, strings holding no
 * control character, lone or paired surrogate or escape other than `\"`, `\\`, `\b`, `\f`,
 * `\n`, `\r`, `\t`, and objects without repeated keys.
 */
export function isCanonicalJson(text: string): boolean {
  const scanner = new Scanner(text);
  try {
    return scanner.value() && scanner.at === text.length;
  } catch {
    return false; // nested too deeply for the stack: parsing decides
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

class Scanner {
  at = 0;
  constructor(private readonly text: string) {}

  value(): boolean {
    const { text } = this;
    const c = text.charCodeAt(this.at);
    if (c === QUOTE) return this.string() !== undefined;
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    return this.number();
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  /** A number exactly as `String(Number(token))` writes it (so no `-0`, `1.0`, `1e2`, `01`). */
  private number(): boolean {
    const { text } = this;
    const start = this.at;
    let end = start;
    let digitsOnly = true;
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end);
      if (c >= 0x30 && c <= 0x39) continue;
      if (c === 0x2d && end === start) continue; // leading minus
      if (c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d) {
        digitsOnly = false;
        continue;
      }
      break;
    }
    const length = end - start;
    if (length === 0) return false;
    this.at = end;
    const first = text.charCodeAt(start) === 0x2d ? start + 1 : start;
    if (digitsOnly && end - first >= 1 && end - first <= 15) {
      // A plain integer: canonical unless it has a leading zero or is -0.
      if (text.charCodeAt(first) === 0x30) return end - first === 1 && first === start;
      return true;
    }
    const token = text.slice(start, end);
    const number = Number(token);
    return Number.isFinite(number) && String(number) === token;
  }

  /** A string without escapes JSON.stringify would write otherwise; its raw text, or undefined. */
  private string(): string | undefined {
    const { text } = this;
    const start = ++this.at;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        this.at = i + 1;
        return text.slice(start, i);
      }
      if (c < 0x20 || (c >= 0xd800 && c <= 0xdfff)) return undefined;
      if (c === BACKSLASH) {
        const next = text.charCodeAt(++i);
        // \u escapes and \/ are written differently (or not at all) by JSON.stringify.
        if (
          next !== QUOTE &&
          next !== BACKSLASH &&
          next !== 0x62 &&
          next !== 0x66 &&
          next !== 0x6e &&
          next !== 0x72 &&
          next !== 0x74
        )
          return undefined;
      }
    }
    return undefined;
  }

  private array(): boolean {
    const { text } = this;
    this.at++;
    if (text.charCodeAt(this.at) === 0x5d) {
      this.at++;
      return true;
    }
    for (;;) {
      if (!this.value()) return false;
      const c = text.charCodeAt(this.at++);
      if (c === 0x5d) return true;
      if (c !== 0x2c) return false;
    }
  }

  private object(): boolean {
    const { text } = this;
    this.at++;
    if (text.charCodeAt(this.at) === 0x7d) {
      this.at++;
      return true;
    }
    const keys: string[] = [];
    for (;;) {
      if (text.charCodeAt(this.at) !== QUOTE) return false;
      const key = this.string();
      // A repeated key keeps one value when parsed; escaped keys are compared as written.
      if (key === undefined || keys.includes(key)) return false;
      keys.push(key);
      if (text.charCodeAt(this.at++) !== 0x3a) return false;
      if (!this.value()) return false;
      const c = text.charCodeAt(this.at++);
      if (c === 0x7d) return true;
      if (c !== 0x2c) return false;
    }
  }
}
