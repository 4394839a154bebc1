/**
 * Strict JSON syntax checking with exact error offsets.
 *
 * Why not JSON.parse: its messages and positions differ between Node versions (and some have no
 * position at all), but diagnostics are committed as golden files. Why not the YAML parser: it
 * accepts what JSON forbids (trailing commas, unquoted keys, comments), and a `.json` file that
 * other tools reject must not pass here. The data itself is still read by the `yaml` package
 * (which gives every node a source range); this module only decides whether the text is JSON.
 */

/** The first syntax error of a JSON text. */
export interface JsonSyntaxError {
  /** UTF-16 offset into the text where the problem is. */
  readonly offset: number;
  readonly message: string;
}

/** Deeper nesting is refused so that hostile input cannot exhaust the stack. */
const MAX_DEPTH = 512;

/** RFC 8259 number, matched in place (sticky) so long texts are not copied. */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class JsonSyntaxFailure {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/**
 * Returns the first syntax error in `text` (RFC 8259 grammar, exactly one top-level value), or
 * `undefined` when the text is valid JSON.
 *
 * @example findJsonSyntaxError('{"a": 1,}') // { offset: 8, message: "trailing comma before '}' …" }
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const scanner = new JsonScanner(text);
  try {
    scanner.document();
    return undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxFailure) return { offset: error.offset, message: error.message };
    throw error;
  }
}

/** Recursive-descent recogniser; throws JsonSyntaxFailure at the first error. */
class JsonScanner {
  private offset = 0;

  constructor(private readonly text: string) {}

  document(): void {
    this.skipWhitespace();
    if (this.atEnd()) this.fail('the file is empty; expected a JSON object or array');
    this.value(0);
    this.skipWhitespace();
    if (!this.atEnd()) {
      this.fail(`unexpected ${this.describeHere()} after the end of the JSON value`);
    }
  }

  private value(depth: number): void {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    const char = this.text[this.offset];
    if (char === '{') this.object(depth);
    else if (char === '[') this.array(depth);
    else if (char === '"') this.string();
    else if (char === '-' || isDigit(char)) this.number();
    else this.literal();
  }

  /** `true`, `false` or `null`, or the failure to find a value. */
  private literal(): void {
    for (const literal of ['true', 'false', 'null']) {
      if (this.text.startsWith(literal, this.offset)) {
        this.offset += literal.length;
        return;
      }
    }
    this.fail(`expected a value but found ${this.describeHere()}`);
  }

  private object(depth: number): void {
    this.offset++; // '{'
    this.skipWhitespace();
    if (this.text[this.offset] === '}') {
      this.offset++;
      return;
    }
    for (;;) {
      this.propertyName();
      this.skipWhitespace();
      if (this.text[this.offset] !== ':') {
        this.fail(`expected ':' after the property name but found ${this.describeHere()}`);
      }
      this.offset++;
      this.skipWhitespace();
      this.value(depth + 1);
      this.skipWhitespace();
      if (this.text[this.offset] === '}') {
        this.offset++;
        return;
      }
      if (this.text[this.offset] !== ',') {
        this.fail(`expected ',' or '}' but found ${this.describeHere()}`);
      }
      const comma = this.offset;
      this.offset++;
      this.skipWhitespace();
      if (this.text[this.offset] === '}') {
        this.failAt(comma, "trailing comma before '}' is not allowed in JSON");
      }
    }
  }

  private propertyName(): void {
    if (this.text[this.offset] === '"') this.string();
    else this.fail(`expected a property name in double quotes but found ${this.describeHere()}`);
  }

  private array(depth: number): void {
    this.offset++; // '['
    this.skipWhitespace();
    if (this.text[this.offset] === ']') {
      this.offset++;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      this.skipWhitespace();
      if (this.text[this.offset] === ']') {
        this.offset++;
        return;
      }
      if (this.text[this.offset] !== ',') {
        this.fail(`expected ',' or ']' but found ${this.describeHere()}`);
      }
      const comma = this.offset;
      this.offset++;
      this.skipWhitespace();
      if (this.text[this.offset] === ']') {
        this.failAt(comma, "trailing comma before ']' is not allowed in JSON");
      }
    }
  }

  private string(): void {
    const start = this.offset;
    this.offset++; // opening quote
    for (;;) {
      const char = this.text[this.offset];
      if (char === undefined || char === '\n') this.failAt(start, 'unterminated string');
      if (char === '"') {
        this.offset++;
        return;
      }
      if (char === '\\') {
        this.escape();
        continue;
      }
      if (char.charCodeAt(0) < 0x20) {
        this.fail('control character in string; write it as an escape such as \\t');
      }
      this.offset++;
    }
  }

  private escape(): void {
    const next = this.text[this.offset + 1];
    if (next !== undefined && '"\\/bfnrt'.includes(next)) {
      this.offset += 2;
      return;
    }
    if (
      next === 'u' &&
      /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.offset + 2, this.offset + 6))
    ) {
      this.offset += 6;
      return;
    }
    this.fail(`invalid escape sequence '\\${next ?? ''}' in string`);
  }

  private number(): void {
    NUMBER.lastIndex = this.offset;
    const length = NUMBER.exec(this.text)?.[0].length ?? 0;
    // A valid number is never followed directly by a digit, letter or dot (e.g. `01`, `1.`, `1x`).
    const after = this.text[this.offset + length];
    if (length === 0 || (after !== undefined && /[0-9A-Za-z.]/.test(after))) {
      this.fail('invalid number');
    }
    this.offset += length;
  }

  private skipWhitespace(): void {
    while (this.offset < this.text.length) {
      const char = this.text[this.offset];
      if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
        this.offset++;
      } else if (
        char === '/' &&
        (this.text[this.offset + 1] === '/' || this.text[this.offset + 1] === '*')
      ) {
        this.fail('comments are not allowed in JSON');
      } else {
        return;
      }
    }
  }

  private atEnd(): boolean {
    return this.offset >= this.text.length;
  }

  /** Names the character at the current offset for a message. */
  private describeHere(): string {
    const char = this.text[this.offset];
    if (char === undefined) return 'the end of the file';
    if (char === '\n' || char === '\r') return 'a line break';
    const codePoint = this.text.codePointAt(this.offset)!;
    return `'${String.fromCodePoint(codePoint)}'`;
  }

  private fail(message: string): never {
    throw new JsonSyntaxFailure(this.offset, message);
  }

  private failAt(offset: number, message: string): never {
    throw new JsonSyntaxFailure(offset, message);
  }
}

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}
