/**
 * `filter=<expression>` of a list or count request (SPEC §17): a small recursive-descent parser
 * (no parser library: the grammar is a dozen rules, and a hand-written parser gives the exact
 * column and wording of each error) and the step that checks the parsed expression against the
 * schema and turns it into the driver's `FilterExpression`.
 *
 * Grammar (keywords case-insensitive, whitespace between tokens free):
 *
 *     expression := or
 *     or         := and ( "or" and )*
 *     and        := unary ( "and" unary )*
 *     unary      := "not" unary | primary
 *     primary    := "(" expression ")" | comparison
 *     comparison := path ( operator value
 *                        | [ "not" ] "in" "(" value ( "," value )* ")"
 *                        | "is" [ "not" ] "null" )
 *     operator   := "=" | "!=" | ">" | ">=" | "<" | "<=" | "~" | "!~" | "~*" | "!~*"
 *     path       := name ( "." name )*          name := [A-Za-z_][A-Za-z0-9_]*
 *     value      := string | number | "true" | "false"
 *     string     := '"' ( any character but '"' and '\' | '\"' | '\\' )* '"'
 *     number     := [ "-" ] digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ]
 *
 * `~` is CONTAINS (membership on an ARRAY), `!~` NOT_CONTAINS, `~*` ICONTAINS (contains, case
 * folded) and `!~*` its negation. A value is converted by the
 * field's type exactly as the bracket syntax converts it (the number `10.50` is the text
 * `10.50`: a DECIMAL keeps it exactly); a string on a number field is converted too (`qty =
 * "5"`). A field named like a keyword (`and`, `or`, `not`, `in`, `is`) cannot start a comparison
 * here; use the bracket syntax for it.
 *
 * Logic is two-valued: a comparison with an absent field is false, except `!=` and `!~` (true,
 * as in the bracket syntax) and `is null`; `not` of a false comparison is true.
 *
 * Bounds (each a 400): at most {@link MAX_EXPRESSION_LENGTH} characters, nesting (parentheses and
 * `not`) at most {@link MAX_EXPRESSION_DEPTH} deep, at most {@link MAX_EXPRESSION_CONDITIONS}
 * conditions (an `in` list counts one per value).
 */
import type { EntityDefinition } from '../definition.js';
import type { FilterCondition, FilterExpression } from '../driver.js';
import { BadRequestError, quoteInput } from '../errors.js';
import { parseCondition, type ReferenceTargets } from './filters.js';

export const MAX_EXPRESSION_LENGTH = 4000;
export const MAX_EXPRESSION_DEPTH = 16;
export const MAX_EXPRESSION_CONDITIONS = 200;

/** A comparison operator as written. */
export type ComparisonOperator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~' | '!~' | '~*' | '!~*';

/** A literal value: its kind and text (a string's content after escapes). */
export interface Literal {
  readonly kind: 'string' | 'number' | 'boolean';
  readonly text: string;
  /** 1-based column of the literal in the expression. */
  readonly column: number;
}

/** The parsed expression, before it meets the schema. */
export type ExpressionNode =
  | { readonly type: 'and'; readonly operands: readonly ExpressionNode[] }
  | { readonly type: 'or'; readonly operands: readonly ExpressionNode[] }
  | { readonly type: 'not'; readonly operand: ExpressionNode }
  | {
      readonly type: 'compare';
      readonly path: readonly string[];
      readonly operator: ComparisonOperator;
      readonly value: Literal;
      readonly column: number;
    }
  | {
      readonly type: 'in';
      readonly path: readonly string[];
      readonly values: readonly Literal[];
      readonly negated: boolean;
      readonly column: number;
    }
  | {
      readonly type: 'null';
      readonly path: readonly string[];
      readonly negated: boolean;
      readonly column: number;
    };

type TokenType = 'name' | 'string' | 'number' | 'operator' | '(' | ')' | ',' | '.' | 'end';

interface Token {
  readonly type: TokenType;
  /** The token as written (a string's content after escapes). */
  readonly text: string;
  readonly column: number;
}

// Longest first: `!~*` before `!~`, `~*` before `~`.
const OPERATORS: readonly ComparisonOperator[] = [
  '!~*',
  '!=',
  '>=',
  '<=',
  '!~',
  '~*',
  '=',
  '>',
  '<',
  '~',
];
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'true', 'false']);
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A syntax or bound error, as the 400's reason words it. */
export class ExpressionError extends BadRequestError {
  constructor(message: string, column: number) {
    super(`filter: ${message} at column ${column}`);
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const column = index + 1;
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      index++;
      continue;
    }
    if (char === '(' || char === ')' || char === ',' || char === '.') {
      tokens.push({ type: char, text: char, column });
      index++;
      continue;
    }
    if (char === '"') {
      let value = '';
      index++;
      for (;;) {
        if (index >= text.length) throw new ExpressionError('unterminated string starting', column);
        const next = text[index]!;
        if (next === '"') break;
        if (next === '\\') {
          const escaped = text[index + 1];
          if (escaped !== '"' && escaped !== '\\') {
            throw new ExpressionError(
              'unknown escape in a string (only \\" and \\\\ are escapes)',
              index + 1,
            );
          }
          value += escaped;
          index += 2;
          continue;
        }
        value += next;
        index++;
      }
      index++;
      tokens.push({ type: 'string', text: value, column });
      continue;
    }
    NUMBER.lastIndex = index;
    const number = NUMBER.exec(text);
    if (number !== null && (char === '-' || (char >= '0' && char <= '9'))) {
      tokens.push({ type: 'number', text: number[0], column });
      index += number[0].length;
      continue;
    }
    NAME.lastIndex = index;
    const name = NAME.exec(text);
    if (name !== null) {
      tokens.push({ type: 'name', text: name[0], column });
      index += name[0].length;
      continue;
    }
    const operator = OPERATORS.find((candidate) => text.startsWith(candidate, index));
    if (operator !== undefined) {
      tokens.push({ type: 'operator', text: operator, column });
      index += operator.length;
      continue;
    }
    throw new ExpressionError(`unexpected character ${JSON.stringify(char)}`, column);
  }
  tokens.push({ type: 'end', text: '', column: text.length + 1 });
  return tokens;
}

/** Parses `text` as a filter expression (syntax only); throws `ExpressionError` with a column. */
export function parseExpression(text: string): ExpressionNode {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new BadRequestError(
      `filter: the expression is ${text.length} characters long, more than the ${MAX_EXPRESSION_LENGTH} allowed`,
    );
  }
  if (text.includes('\u0000')) {
    throw new ExpressionError(
      'the character U+0000, which stored values cannot hold,',
      text.indexOf('\u0000') + 1,
    );
  }
  if (text.trim() === '') throw new BadRequestError('filter: the expression is empty');
  return new Parser(tokenize(text)).parse();
}

class Parser {
  private position = 0;
  private depth = 0;
  private conditions = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parse(): ExpressionNode {
    const node = this.or();
    const token = this.peek();
    if (token.type !== 'end') {
      throw new ExpressionError(
        token.type === ')'
          ? "unexpected ')' without a matching '('"
          : `expected 'and', 'or' or the end, not ${describe(token)}`,
        token.column,
      );
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.position]!;
  }

  private next(): Token {
    const token = this.tokens[this.position]!;
    if (token.type !== 'end') this.position++;
    return token;
  }

  private keyword(token: Token, word: string): boolean {
    return token.type === 'name' && token.text.toLowerCase() === word;
  }

  private or(): ExpressionNode {
    const operands = [this.and()];
    while (this.keyword(this.peek(), 'or')) {
      this.next();
      operands.push(this.and());
    }
    return operands.length === 1 ? operands[0]! : { type: 'or', operands };
  }

  private and(): ExpressionNode {
    const operands = [this.unary()];
    while (this.keyword(this.peek(), 'and')) {
      this.next();
      operands.push(this.unary());
    }
    return operands.length === 1 ? operands[0]! : { type: 'and', operands };
  }

  private enter(column: number): void {
    if (++this.depth > MAX_EXPRESSION_DEPTH) {
      throw new ExpressionError(
        `the expression is nested more than ${MAX_EXPRESSION_DEPTH} deep`,
        column,
      );
    }
  }

  private unary(): ExpressionNode {
    const token = this.peek();
    if (this.keyword(token, 'not')) {
      this.next();
      this.enter(token.column);
      const operand = this.unary();
      this.depth--;
      return { type: 'not', operand };
    }
    if (token.type === '(') {
      this.next();
      this.enter(token.column);
      const inner = this.or();
      const close = this.next();
      if (close.type !== ')') {
        throw new ExpressionError(
          `expected ')' to close the '(' of column ${token.column}, not ${describe(close)}`,
          close.column,
        );
      }
      this.depth--;
      return inner;
    }
    return this.comparison();
  }

  private count(column: number, by = 1): void {
    this.conditions += by;
    if (this.conditions > MAX_EXPRESSION_CONDITIONS) {
      throw new ExpressionError(
        `the expression has more than ${MAX_EXPRESSION_CONDITIONS} conditions`,
        column,
      );
    }
  }

  private comparison(): ExpressionNode {
    const first = this.next();
    if (first.type !== 'name' || KEYWORDS.has(first.text.toLowerCase())) {
      throw new ExpressionError(`expected a field name, not ${describe(first)}`, first.column);
    }
    const path = [first.text];
    while (this.peek().type === '.') {
      const dot = this.next();
      const name = this.next();
      if (name.type !== 'name') {
        throw new ExpressionError(
          `expected a field name after '.' of column ${dot.column}, not ${describe(name)}`,
          name.column,
        );
      }
      path.push(name.text);
    }
    const dotted = path.join('.');
    const token = this.next();
    if (token.type === 'operator') {
      const value = this.value(`'${token.text}'`);
      this.count(first.column);
      return {
        type: 'compare',
        path,
        operator: token.text as ComparisonOperator,
        value,
        column: first.column,
      };
    }
    if (this.keyword(token, 'is')) {
      let negated = false;
      let word = this.next();
      if (this.keyword(word, 'not')) {
        negated = true;
        word = this.next();
      }
      if (!this.keyword(word, 'null')) {
        throw new ExpressionError(
          `expected 'null' after '${negated ? 'is not' : 'is'}', not ${describe(word)}`,
          word.column,
        );
      }
      this.count(first.column);
      return { type: 'null', path, negated, column: first.column };
    }
    let negated = false;
    let word = token;
    if (this.keyword(word, 'not')) {
      negated = true;
      word = this.next();
      if (!this.keyword(word, 'in')) {
        throw new ExpressionError(
          `expected 'in' after '${dotted} not', not ${describe(word)}`,
          word.column,
        );
      }
    }
    if (this.keyword(word, 'in')) {
      const open = this.next();
      if (open.type !== '(') {
        throw new ExpressionError(`expected '(' after 'in', not ${describe(open)}`, open.column);
      }
      const values = [this.value("'('")];
      for (;;) {
        const separator = this.next();
        if (separator.type === ')') break;
        if (separator.type !== ',') {
          throw new ExpressionError(
            `expected ',' or ')' in the list of 'in', not ${describe(separator)}`,
            separator.column,
          );
        }
        values.push(this.value("','"));
      }
      this.count(first.column, values.length);
      return { type: 'in', path, values, negated, column: first.column };
    }
    throw new ExpressionError(
      `expected an operator (=, !=, >, >=, <, <=, ~, !~, ~*, !~*, in, is null) after '${dotted}', not ${describe(token)}`,
      token.column,
    );
  }

  private value(after: string): Literal {
    const token = this.next();
    if (token.type === 'string' || token.type === 'number') {
      return { kind: token.type, text: token.text, column: token.column };
    }
    if (this.keyword(token, 'true') || this.keyword(token, 'false')) {
      return { kind: 'boolean', text: token.text.toLowerCase(), column: token.column };
    }
    throw new ExpressionError(
      `expected a value after ${after}${token.type === 'end' ? '' : `, not ${describe(token)}`}`,
      token.column,
    );
  }
}

function describe(token: Token): string {
  switch (token.type) {
    case 'end':
      return 'the end of the expression';
    case 'string':
      return `the string ${JSON.stringify(quoteInput(token.text))}`;
    case 'number':
      return `the number ${quoteInput(token.text)}`;
    default:
      return `'${quoteInput(token.text)}'`;
  }
}

const BRACKET_OPERATOR: Readonly<Record<ComparisonOperator, string>> = {
  '=': 'EQUALS',
  '!=': 'NOT_EQUALS',
  '>': 'GT',
  '>=': 'GTE',
  '<': 'LT',
  '<=': 'LTE',
  '~': 'CONTAINS',
  '!~': 'NOT_CONTAINS',
  '~*': 'ICONTAINS',
  '!~*': 'ICONTAINS',
};

/**
 * Parses `text` and checks it against the schema of `definition`: the driver's expression, every
 * value converted by its field's type. A field, operator or value the bracket syntax would refuse
 * is a 400 naming its column.
 */
export function compileExpression(
  definition: EntityDefinition<object>,
  text: string,
  targets?: ReferenceTargets,
): FilterExpression {
  return compile(definition, parseExpression(text), targets);
}

function compile(
  definition: EntityDefinition<object>,
  node: ExpressionNode,
  targets: ReferenceTargets | undefined,
): FilterExpression {
  switch (node.type) {
    case 'and':
      return { and: node.operands.map((operand) => compile(definition, operand, targets)) };
    case 'or':
      return { or: node.operands.map((operand) => compile(definition, operand, targets)) };
    case 'not':
      return { not: compile(definition, node.operand, targets) };
    case 'compare': {
      const compared: FilterExpression = {
        condition: condition(
          definition,
          node.path,
          BRACKET_OPERATOR[node.operator],
          node.value,
          node.column,
          targets,
        ),
      };
      // `!~*` is NOT of `~*`: true for an absent field, as `!~` is.
      return node.operator === '!~*' ? { not: compared } : compared;
    }
    case 'in': {
      const any: FilterExpression = {
        or: node.values.map((value) => ({
          condition: condition(definition, node.path, 'EQUALS', value, node.column, targets),
        })),
      };
      return node.negated ? { not: any } : any;
    }
    case 'null':
      return { condition: nullCondition(definition, node.path, node.negated, node.column) };
  }
}

/** One comparison, checked and converted by the bracket syntax's own rules. */
function condition(
  definition: EntityDefinition<object>,
  path: readonly string[],
  operator: string,
  value: Literal,
  column: number,
  targets: ReferenceTargets | undefined,
): FilterCondition {
  const name = `${path.join('.')}[${operator}]`;
  try {
    return parseCondition(definition, name, value.text, targets).condition;
  } catch (error) {
    if (error instanceof BadRequestError) {
      // The bracket syntax names its parameter; here the column says where.
      const reason = error.reason
        .replace(/ \(parameter [^)]*\)/g, '')
        .replace(/, parameter [^)]*\)/g, ')')
        .replace(/(?:of )?query parameter [^ ]+ /g, '');
      throw new BadRequestError(`filter: ${reason} at column ${column}`, error.issues);
    }
    throw error;
  }
}

/** `path is [not] null`: any field of this record, OBJECT and ARRAY fields included. */
function nullCondition(
  definition: EntityDefinition<object>,
  path: readonly string[],
  negated: boolean,
  column: number,
): FilterCondition {
  let fields = definition.fields;
  for (let index = 0; index < path.length; index++) {
    const name = path[index]!;
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field === undefined) {
      const where =
        index === 0 ? `Entity ${definition.name}` : `field ${path.slice(0, index).join('.')}`;
      throw new ExpressionError(
        `unknown field ${quoteInput(path.slice(0, index + 1).join('.'))} in ${where}`,
        column,
      );
    }
    if (index < path.length - 1) {
      if (field.type !== 'OBJECT' || field.fields === undefined) {
        throw new ExpressionError(
          `field ${path.slice(0, index + 1).join('.')} is ${field.type === 'ENTITY_REF' ? 'a reference; is null tests this record’s own fields' : 'not an OBJECT'}, so ${quoteInput(path.join('.'))} cannot be tested`,
          column,
        );
      }
      fields = field.fields;
    }
  }
  return {
    path,
    operator: negated ? 'IS_NOT_NULL' : 'IS_NULL',
    kind: 'text',
    value: '',
  };
}
