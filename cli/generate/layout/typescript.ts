// Builders for the TypeScript constructs the generator prints, laid out as prettier lays them out
// (printWidth 100, single quotes, trailing commas). Each mirrors one of prettier's printers for the
// shapes the generated code uses; test/generate checks the whole output with prettier itself.
import type { JsonValue } from '../../schema/types.js';
import {
  align,
  conditionalGroup,
  fill,
  group,
  hardline,
  ifBreak,
  indent,
  indentIfBreak,
  join,
  line,
  printDoc,
  softline,
  textWidth,
  type Doc,
} from './doc.js';

export { hardline, join, line, printDoc, type Doc } from './doc.js';

/** A string literal: single quotes unless the text holds more single than double quotes. */
export function stringLiteral(text: string): string {
  const json = JSON.stringify(text);
  const singles = (text.match(/'/g) ?? []).length;
  const doubles = (text.match(/"/g) ?? []).length;
  if (singles > doubles) return json;
  const inner = json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'");
  return `'${inner}'`;
}

/** A number as prettier prints it (`1e+21` → `1e21`). */
function numberLiteral(value: number): string {
  return String(value).toLowerCase().replace('e+', 'e');
}

const IDENTIFIER = /^[\p{L}$_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}$_]*$/u;

/** An object key: bare when it is an identifier name, quoted otherwise. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && !/[\u{10000}-\u{10ffff}]/u.test(name)
    ? name
    : stringLiteral(name);
}

/** What a property's value is, which decides whether the line may break after the colon. */
export type ValueKind = 'string' | 'keyword' | 'other';

/** `key: value` in an object literal (prettier's assignment layouts for properties). */
export function property(key: string, value: Doc, kind: ValueKind = 'other'): Doc {
  const printedKey = propertyKey(key);
  // Keys shorter than five columns never break after the colon: the overlap would be too small.
  if (kind === 'keyword' || textWidth(printedKey) < 5) return [printedKey, ': ', value];
  if (kind === 'string') return group([printedKey, ':', group(indent([line, value]))]);
  return fluid([printedKey, ':'], value);
}

/** Prettier's "fluid" assignment: the value moves to the next line only if its head does not fit. */
function fluid(left: Doc, value: Doc): Doc {
  const id = Symbol('assignment');
  return group([left, group(indent(line), { id }), indentIfBreak(value, id)]);
}

/** `{ a, b }` or one member per line, with a trailing comma. */
export function objectLiteral(members: readonly Doc[]): Doc {
  if (members.length === 0) return '{}';
  return group(['{', indent([line, join([',', line], members)]), ifBreak(','), line, '}']);
}

/** `[a, b]` or one item per line; number lists fill lines; lists of lists or objects always break. */
export function arrayLiteral(
  items: readonly Doc[],
  options: { broken?: boolean; numbers?: boolean } = {},
): Doc {
  if (items.length === 0) return '[]';
  const separated =
    options.numbers === true ? fill(join([',', line], items)) : join([',', line], items);
  return group(['[', indent([softline, separated]), ifBreak(','), softline, ']'], {
    broken: options.broken === true,
  });
}

/** A JSON value as a TypeScript literal. */
export function jsonLiteral(value: JsonValue): Doc {
  if (value === null) return 'null';
  if (typeof value === 'string') return stringLiteral(value);
  if (typeof value === 'number') return numberLiteral(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const numbers = value.length > 0 && value.every((item) => typeof item === 'number');
    // Prettier breaks a list of two or more objects (or lists) that each have two or more entries.
    const broken =
      value.length > 1 &&
      (value.every((item) => isObject(item) && Object.keys(item).length > 1) ||
        value.every((item) => Array.isArray(item) && item.length > 1));
    return arrayLiteral(value.map(jsonLiteral), { broken, numbers });
  }
  return objectLiteral(
    Object.entries(value).map(([key, item]) => property(key, jsonLiteral(item), valueKind(item))),
  );
}

function isObject(value: JsonValue): value is { readonly [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueKind(value: JsonValue): ValueKind {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number' || typeof value === 'boolean') return 'keyword';
  return 'other';
}

/** An argument of a call; objects and arrays in last place are "hugged". */
export interface Argument {
  readonly doc: Doc;
  readonly huggable?: boolean;
}

/** `callee(args)`: flat, or hugging a last object/array argument, or one argument per line. */
export function call(callee: Doc, args: readonly (Doc | Argument)[]): Doc {
  const list = args.map((arg): Argument => (isArgument(arg) ? arg : { doc: arg }));
  if (list.length === 0) return [callee, '()'];
  const docs = list.map((arg) => arg.doc);
  const brokenOut = group(['(', indent([line, join([',', line], docs)]), ifBreak(','), line, ')'], {
    broken: true,
  });
  const last = list[list.length - 1] as Argument;
  const hugLast = last.huggable === true && list.slice(0, -1).every((arg) => arg.huggable !== true);
  if (!hugLast)
    return [
      callee,
      group(['(', indent([softline, join([',', line], docs)]), ifBreak(','), softline, ')']),
    ];
  const leading = docs.slice(0, -1).map((doc) => [doc, ', ']);
  return [
    callee,
    conditionalGroup([
      ['(', ...leading, last.doc, ')'],
      ['(', ...leading, group(last.doc, { broken: true }), ')'],
      brokenOut,
    ]),
  ];
}

function isArgument(arg: Doc | Argument): arg is Argument {
  return typeof arg === 'object' && !Array.isArray(arg) && 'doc' in arg;
}

/** `import { a, type B } from 'x';` or one name per line (a single name never breaks). */
export function importDeclaration(names: readonly string[], from: string, typeOnly = false): Doc {
  const head = typeOnly ? 'import type ' : 'import ';
  const tail = [' from ', stringLiteral(from), ';'];
  if (names.length === 1) return [head, '{ ', names[0] as string, ' }', ...tail];
  return [
    head,
    group(['{', indent([line, join([',', line], [...names])]), ifBreak(','), line, '}']),
    ...tail,
  ];
}

/** `<head> = <value>;` with prettier's layout for the kind of value. */
export function declaration(
  head: string,
  value: Doc,
  kind: 'fluid' | 'break-after-operator' = 'fluid',
): Doc {
  if (kind === 'break-after-operator')
    return [group([head, ' =', group(indent([line, value]))]), ';'];
  return [fluid([head, ' ='], value), ';'];
}

/** `test ? consequent : alternate`, broken as prettier breaks conditional expressions. */
export function conditional(test: Doc, consequent: Doc, alternate: Doc): Doc {
  return group([test, indent([line, '? ', align(2, consequent), line, ': ', align(2, alternate)])]);
}

/** `left op right` as an operand of a logical expression or a conditional test. */
export function comparison(left: Doc, operator: string, right: Doc): Doc {
  return group([left, ' ', group([operator, line, right])]);
}

/** `a || b || c` as the test of a conditional expression (broken operands are not indented). */
export function logicalTest(operator: '||' | '&&', operands: readonly Doc[]): Doc {
  const [first, ...others] = operands;
  if (first === undefined) throw new Error('a logical expression needs operands');
  return group([first, others.map((operand) => [' ', group([operator, line, operand])])]);
}

/** `if (a || b || c) statement` with the operands on their own lines when it does not fit. */
export function ifStatement(
  operator: '||' | '&&',
  operands: readonly Doc[],
  statement: string,
): Doc {
  const chain = join([' ', operator, line], [...operands]);
  return group([
    'if (',
    group([indent([softline, chain]), softline]),
    ')',
    indent([line, statement]),
  ]);
}

/** `head(params): returnType {` with one parameter per line when it does not fit. */
export function functionSignature(
  head: string,
  params: readonly string[],
  returnTypes: readonly string[],
): Doc {
  // The parameters are not a group of their own: they break before the return type does.
  return group([
    head,
    '(',
    indent([softline, join([',', line], [...params])]),
    ifBreak(','),
    softline,
    ')',
    ': ',
    returnTypes.length === 1 ? (returnTypes[0] as string) : unionType(returnTypes, 'type'),
    ' {',
  ]);
}

/** `(params) => body` where the body moves to the next line when it does not fit. */
export function arrowFunction(params: string, body: Doc, bodyKind: 'hug' | 'expression'): Doc {
  if (bodyKind === 'hug') return group([params, ' => ', body]);
  return group([params, ' =>', group(indent([line, body]))]);
}

/**
 * A union type. It first moves to a line of its own (inside parentheses for an array's element
 * type), then breaks with a leading `|` per member.
 */
export function unionType(members: readonly Doc[], where: 'type' | 'array-element'): Doc {
  const code = group([ifBreak('| '), join([line, '| '], [...members])]);
  if (where === 'array-element') return group(['(', indent([softline, code]), softline, ')']);
  return group(indent([softline, code]));
}

/** `Name<A, B>`, with one type argument per line when it does not fit. */
export function genericType(name: string, args: readonly Doc[]): Doc {
  return group([name, '<', indent([softline, join([',', line], [...args])]), softline, '>']);
}

/**
 * Whether `text` is an argument short enough that a call taking only it is "poorly breakable":
 * prettier then moves the whole call to the next line rather than breaking its parentheses.
 */
export function isShortArgument(text: string): boolean {
  return /^[A-Za-z_$][\w$]*$/.test(text) && text.length <= 25;
}

/** Prints a list of statements, one per line, at `column`. */
export function printStatements(docs: readonly Doc[], column = 0): string {
  return printDoc(join(hardline, [...docs]), { column });
}
