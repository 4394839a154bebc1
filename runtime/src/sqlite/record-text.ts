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
    if (kind === TextKind.Boolean) text += value !== 0 && value !== 0n ? 'true' : 'false';
    else if (kind === TextKind.Json) text += canonicalJson(value as string);
    else if (typeof value === 'number')
      text += Number.isFinite(value) ? String(value) : 'null'; // as JSON.stringify writes it
    else text += JSON.stringify(value);
  }
  return `${text}}`;
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
