/** Naming rules for generated identifiers, files and tables; decided once, here. */

/** Splits `ORDER_LINE`, `orderLine` or `Order_line2` into lower-case words. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/_+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
}

/** `ORDER_LINE` → `OrderLine`. */
export function pascalCase(name: string): string {
  const joined = words(name)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return /^[0-9]/.test(joined) ? `_${joined}` : joined;
}

/** `ORDER_LINE` → `orderLine`. */
export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}

/** `ORDER_LINE` → `order-line`. */
export function kebabCase(name: string): string {
  return words(name).join('-');
}

const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends ' +
    'false finally for function if import in instanceof new null return super switch this throw ' +
    'true try typeof var void while with yield let static implements interface package private ' +
    'protected public await input body issues record parent key value path start'
  ).split(' '),
);

/**
 * The runtime functions and constants a generated reader calls: a field's variable must not
 * shadow them (a field named `missing` or `toText`).
 */
const READER_RUNTIME_NAMES = [
  'readRecordBody',
  'rejectUnknownFields',
  'missing',
  'toObjectBody',
  'checkKeyPart',
  'RECORD_ROOT',
  'toText',
  'toInteger',
  'toDouble',
  'toDecimal',
  'toBoolean',
  'toDate',
  'toDateTime',
  'toB64Image',
  'toAny',
  'toGeohashLocation',
  'toRefInteger',
  'toRefText',
  'enumConverter',
  'selectConverter',
  'arrayOf',
  'dictionaryOf',
];

/**
 * A local variable name for a field, safe even when the field is called `class`, `default`, like
 * a runtime function the reader calls, like one of `taken` (the module's own names: converters,
 * readers) or like a runtime name under another name (`runtime…`).
 */
export function variableName(fieldName: string, taken: ReadonlySet<string> = new Set()): string {
  const clashes = (name: string): boolean =>
    RESERVED_WORDS.has(name) ||
    READER_RUNTIME_NAMES.includes(name) ||
    taken.has(name) ||
    /^[Rr]untime/.test(name);
  if (!clashes(fieldName)) return fieldName;
  let variable = `${fieldName}Value`;
  for (let suffix = 2; clashes(variable); suffix++) variable = `${fieldName}Value${suffix}`;
  return variable;
}
