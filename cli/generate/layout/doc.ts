// A small document layout engine for the generated TypeScript, after Wadler's "prettier printer"
// and the algorithm of the prettier formatter: a document is text with groups that are printed on
// one line when they fit in the line width and broken at their line breaks otherwise.
//
// The generator lays out its code with it instead of running a formatter over every file (that
// cost about 8 ms per file, most of a run; docs/benchmarks.md). The builders in ./typescript.ts
// mirror prettier's choices for the few constructs the templates print, so the output is what
// prettier would write, which a test checks on every golden fixture.

/** A layout document. */
export type Doc = string | readonly Doc[] | Group | Indent | Line | IfBreak | Fill;

interface Group {
  readonly kind: 'group';
  /** Names the group for `ifBreak`/`indentIfBreak` elsewhere in the document. */
  readonly id?: symbol;
  readonly contents: Doc;
  /** Broken whatever the width: it holds a hard line, or the construct always breaks. */
  readonly broken: boolean;
  /** Alternative layouts, tried in order when the flat one does not fit (prettier's conditionalGroup). */
  readonly alternatives?: readonly Doc[];
}

interface Indent {
  readonly kind: 'indent';
  readonly contents: Doc;
  readonly by: number;
}

interface Line {
  readonly kind: 'line';
  /** `soft` prints nothing when flat, `normal` a space; `hard` always breaks. */
  readonly mode: 'soft' | 'normal' | 'hard';
}

interface IfBreak {
  readonly kind: 'if-break';
  readonly broken: Doc;
  readonly flat: Doc;
  /** Decide by this group's mode instead of the enclosing one's. */
  readonly groupId?: symbol;
}

/** Items separated by lines, each line broken only when the next item does not fit. */
interface Fill {
  readonly kind: 'fill';
  readonly parts: readonly Doc[];
}

/** A space when the enclosing group is flat, a new line when it is broken. */
export const line: Doc = { kind: 'line', mode: 'normal' };
/** Nothing when the enclosing group is flat, a new line when it is broken. */
export const softline: Doc = { kind: 'line', mode: 'soft' };
/** Always a new line; breaks every enclosing group. */
export const hardline: Doc = { kind: 'line', mode: 'hard' };

export function group(contents: Doc, options: { broken?: boolean; id?: symbol } = {}): Doc {
  const broken = options.broken === true || mustBreak(contents);
  return options.id === undefined
    ? { kind: 'group', contents, broken }
    : { kind: 'group', contents, broken, id: options.id };
}

/** Tries `states` in order: the first that fits is printed flat, else the last one broken. */
export function conditionalGroup(states: readonly Doc[]): Doc {
  const first = states[0];
  if (first === undefined) throw new Error('conditionalGroup needs at least one state');
  return { kind: 'group', contents: first, broken: false, alternatives: states };
}

export function indent(contents: Doc): Doc {
  return { kind: 'indent', contents, by: 2 };
}

/** Indents by a number of columns (the branches of a broken conditional expression). */
export function align(by: number, contents: Doc): Doc {
  return { kind: 'indent', contents, by };
}

export function ifBreak(broken: Doc, flat: Doc = '', groupId?: symbol): Doc {
  return groupId === undefined
    ? { kind: 'if-break', broken, flat }
    : { kind: 'if-break', broken, flat, groupId };
}

/** Indents `contents` when the group `groupId` is broken. */
export function indentIfBreak(contents: Doc, groupId: symbol): Doc {
  return ifBreak(indent(contents), contents, groupId);
}

export function fill(parts: readonly Doc[]): Doc {
  return { kind: 'fill', parts };
}

/** `items` with `separator` between them. */
export function join(separator: Doc, items: readonly Doc[]): Doc[] {
  const parts: Doc[] = [];
  items.forEach((item, index) => {
    if (index > 0) parts.push(separator);
    parts.push(item);
  });
  return parts;
}

/**
 * Whether a document must break: it holds a hard line or a broken group. The walk stops at
 * groups (their `broken` was settled when they were made), so each part is visited about once.
 */
function mustBreak(doc: Doc): boolean {
  if (typeof doc === 'string') return false;
  if (isDocArray(doc)) return doc.some(mustBreak);
  switch (doc.kind) {
    case 'line':
      return doc.mode === 'hard';
    case 'group':
      // A broken group breaks its parents too, as in prettier (conditional groups stop it).
      return doc.broken;
    case 'indent':
      return mustBreak(doc.contents);
    case 'if-break':
      return mustBreak(doc.broken) || mustBreak(doc.flat);
    case 'fill':
      return doc.parts.some(mustBreak);
  }
}

function isDocArray(doc: Doc): doc is readonly Doc[] {
  return Array.isArray(doc);
}

type Mode = 'flat' | 'break';

interface Command {
  readonly indent: number;
  readonly mode: Mode;
  readonly doc: Doc;
}

/**
 * Prints a document. `column` is where the first line starts (the template's own indentation);
 * continuation lines are indented from `column` too. Lines never end in spaces.
 */
export function printDoc(doc: Doc, options: { width?: number; column?: number } = {}): string {
  const width = options.width ?? 100;
  const start = options.column ?? 0;
  const out: string[] = [];
  const groupModes = new Map<symbol, Mode>();
  let position = start;
  const commands: Command[] = [{ indent: start, mode: 'break', doc }];

  /** Prints a group flat when it fits, else its first alternative that fits, else broken. */
  function printGroup(group: Group, level: number, mode: Mode): void {
    if (mode === 'flat' && !group.broken) {
      commands.push({ indent: level, mode: 'flat', doc: group.contents });
      return;
    }
    const flat: Command = { indent: level, mode: 'flat', doc: group.contents };
    if (!group.broken && fits(flat, commands, width - position, false, groupModes)) {
      commands.push(flat);
      return;
    }
    const alternatives = group.alternatives;
    if (alternatives === undefined) {
      commands.push({ indent: level, mode: 'break', doc: group.contents });
      return;
    }
    const last = alternatives[alternatives.length - 1] as Doc;
    if (group.broken) {
      commands.push({ indent: level, mode: 'break', doc: last });
      return;
    }
    for (let index = 1; index < alternatives.length; index++) {
      const state: Command = { indent: level, mode: 'flat', doc: alternatives[index] as Doc };
      if (fits(state, commands, width - position, false, groupModes)) {
        commands.push(state);
        return;
      }
    }
    commands.push({ indent: level, mode: 'break', doc: last });
  }

  for (;;) {
    const command = commands.pop();
    if (command === undefined) break;
    const { indent: level, mode, doc: current } = command;
    if (typeof current === 'string') {
      out.push(current);
      position += textWidth(current);
      continue;
    }
    if (isDocArray(current)) {
      for (let index = current.length - 1; index >= 0; index--)
        commands.push({ indent: level, mode, doc: current[index] as Doc });
      continue;
    }
    switch (current.kind) {
      case 'indent':
        commands.push({ indent: level + current.by, mode, doc: current.contents });
        break;
      case 'if-break': {
        const decisive =
          current.groupId === undefined ? mode : (groupModes.get(current.groupId) ?? 'flat');
        commands.push({
          indent: level,
          mode,
          doc: decisive === 'break' ? current.broken : current.flat,
        });
        break;
      }
      case 'group': {
        printGroup(current, level, mode);
        if (current.id !== undefined)
          groupModes.set(current.id, (commands[commands.length - 1] as Command).mode);
        break;
      }
      case 'fill':
        printFill(current, level, mode, commands, width - position);
        break;
      case 'line':
        if (mode === 'flat' && current.mode !== 'hard') {
          if (current.mode === 'normal') {
            out.push(' ');
            position += 1;
          }
          break;
        }
        trimTrailingSpaces(out);
        out.push(`\n${' '.repeat(level)}`);
        position = level;
        break;
    }
  }
  return out.join('');
}

/** Prettier's fill: each separator breaks only when the item after it does not fit. */
function printFill(doc: Fill, level: number, mode: Mode, commands: Command[], rest: number): void {
  const [content, separator, ...others] = doc.parts;
  if (content === undefined) return;
  const contentFlat: Command = { indent: level, mode: 'flat', doc: content };
  const contentFits = fits(contentFlat, [], rest, true);
  if (separator === undefined) {
    commands.push(contentFits ? contentFlat : { indent: level, mode: 'break', doc: content });
    return;
  }
  const next = others[0];
  const remaining: Command = { indent: level, mode, doc: fill(others) };
  if (next === undefined) {
    commands.push(remaining, {
      indent: level,
      mode: contentFits ? 'flat' : 'break',
      doc: separator,
    });
    commands.push(contentFits ? contentFlat : { indent: level, mode: 'break', doc: content });
    return;
  }
  const pairFits = fits(
    { indent: level, mode: 'flat', doc: [content, separator, next] },
    [],
    rest,
    true,
  );
  commands.push(remaining, { indent: level, mode: pairFits ? 'flat' : 'break', doc: separator });
  commands.push(contentFits ? contentFlat : { indent: level, mode: 'break', doc: content });
}

/**
 * Whether `next` printed flat fits in `width` columns, counting what follows it up to the next
 * line break of the enclosing broken groups (`rest`, consumed from its end).
 */
function fits(
  next: Command,
  rest: readonly Command[],
  width: number,
  mustBeFlat: boolean,
  groupModes: ReadonlyMap<symbol, Mode> = new Map(),
): boolean {
  let remaining = width;
  let restIndex = rest.length;
  const stack: { mode: Mode; doc: Doc }[] = [{ mode: next.mode, doc: next.doc }];
  while (remaining >= 0) {
    let item = stack.pop();
    if (item === undefined) {
      if (restIndex === 0) return true;
      const restCommand = rest[--restIndex] as Command;
      item = { mode: restCommand.mode, doc: restCommand.doc };
    }
    const { mode, doc } = item;
    if (typeof doc === 'string') {
      remaining -= textWidth(doc);
      continue;
    }
    if (isDocArray(doc)) {
      for (let index = doc.length - 1; index >= 0; index--)
        stack.push({ mode, doc: doc[index] as Doc });
      continue;
    }
    switch (doc.kind) {
      case 'indent':
        stack.push({ mode, doc: doc.contents });
        break;
      case 'if-break': {
        const decisive = doc.groupId === undefined ? mode : (groupModes.get(doc.groupId) ?? 'flat');
        stack.push({ mode, doc: decisive === 'break' ? doc.broken : doc.flat });
        break;
      }
      case 'group': {
        if (mustBeFlat && doc.broken) return false;
        const groupMode: Mode = doc.broken ? 'break' : mode;
        const contents =
          doc.alternatives !== undefined && groupMode === 'break'
            ? (doc.alternatives[doc.alternatives.length - 1] as Doc)
            : doc.contents;
        stack.push({ mode: groupMode, doc: contents });
        break;
      }
      case 'fill':
        for (let index = doc.parts.length - 1; index >= 0; index--)
          stack.push({ mode, doc: doc.parts[index] as Doc });
        break;
      case 'line':
        if (mode === 'break' || doc.mode === 'hard') return true;
        if (doc.mode === 'normal') remaining -= 1;
        break;
    }
  }
  return false;
}

/** Matches characters that take two columns (East Asian wide and fullwidth forms, emoji). */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Columns a text takes, as prettier counts them: wide characters count twice, combining marks not. */
export function textWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.length;
  let width = 0;
  for (const character of text) {
    if (/\p{Mn}/u.test(character)) continue;
    width += WIDE.test(character) ? 2 : 1;
  }
  return width;
}

function trimTrailingSpaces(out: string[]): void {
  while (out.length > 0) {
    const last = out[out.length - 1] as string;
    const trimmed = last.replace(/ +$/, '');
    if (trimmed !== '') {
      out[out.length - 1] = trimmed;
      return;
    }
    out.pop();
  }
}
