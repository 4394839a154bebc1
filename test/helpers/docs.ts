/**
 * The examples of README.md and docs/*.md that show a command and what it printed: fenced blocks
 * whose lines start with `$ `, and the `<!-- docs-test: … -->` comments that say what each runs
 * against (README.md, "Tests").
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './generate.js';

/** README.md and every page of docs/, relative to the repository root. */
export function docFiles(): string[] {
  return [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
}

/** One fenced block of a page. */
export interface Fence {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  /** The block's lines, without the fence's indentation. */
  readonly lines: readonly string[];
  /** The `docs-test` comment right before the block, if any (its text after `docs-test:`). */
  readonly marker: string | undefined;
}

/** The fenced blocks of a Markdown text, in order. */
export function fences(file: string, text: string): Fence[] {
  const lines = text.split('\n');
  const result: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const indent = open[1]?.length ?? 0;
    const fence = open[2] ?? '```';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j] ?? '';
      if (line.trim() === fence) break;
      body.push(line.slice(Math.min(indent, line.length - line.trimStart().length)));
    }
    let k = i - 1;
    while (k >= 0 && (lines[k] ?? '').trim() === '') k--;
    const marker = /^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$/.exec(lines[k] ?? '')?.[1];
    result.push({ file, line: i + 1, lang: open[3] ?? '', lines: body, marker });
    i = j;
  }
  return result;
}

/** A command of an example and the lines it printed (empty when the page shows none). */
export interface Step {
  readonly command: string;
  readonly output: string;
  /** `json`: the output is one pretty-printed JSON value (a block of its own after the command). */
  readonly format?: 'json';
}

/** An example: a block holding `$ ` commands. */
export interface Example {
  readonly file: string;
  readonly line: number;
  /** The service the example runs against, or undefined when it is skipped. */
  readonly service: string | undefined;
  /** Why the example is not run (from `<!-- docs-test: skip: <reason> -->`). */
  readonly skip: string | undefined;
  readonly steps: readonly Step[];
}

/** Splits a block into its commands (with `\` continuation lines) and their printed lines. */
export function steps(lines: readonly string[]): Step[] {
  const result: { command: string[]; output: string[] }[] = [];
  let continued = false;
  for (const line of lines) {
    const current = result.at(-1);
    if (continued && current !== undefined) {
      current.command.push(line);
      continued = line.endsWith('\\');
    } else if (line.startsWith('$ ')) {
      result.push({ command: [line.slice(2)], output: [] });
      continued = line.endsWith('\\');
    } else if (current !== undefined) current.output.push(line);
  }
  return result.map(({ command, output }) => {
    while (output.length > 0 && output.at(-1)?.trim() === '') output.pop();
    return { command: command.join('\n'), output: output.join('\n') };
  });
}

/**
 * Every example of a page. `<!-- docs-test: service=<name> -->` before a block names the service
 * that block and the following ones run against (until the next such comment);
 * `<!-- docs-test: skip: <reason> -->` skips the one block after it; `<!-- docs-test: run -->`
 * before a `sh` block of commands without `$` runs them too, and compares the `json` block right
 * after it, if any, with what they printed.
 */
export function examples(file: string, text: string): Example[] {
  let service: string | undefined;
  const result: Example[] = [];
  const all = fences(file, text);
  for (const [index, fence] of all.entries()) {
    const marker = fence.marker ?? '';
    const named = /(?:^|\s)service=(\S+)/.exec(marker)?.[1];
    if (named !== undefined) service = named;
    if (/(?:^|\s)run(?:\s|$)/.test(marker) && fence.lang === 'sh') {
      const next = all[index + 1];
      const output =
        next?.lang === 'json' && next.marker === undefined ? next.lines.join('\n') : '';
      result.push({
        file,
        line: fence.line,
        service,
        skip: undefined,
        steps: [{ command: fence.lines.join('\n'), output, format: 'json' }],
      });
      continue;
    }
    if (!fence.lines.some((line) => line.startsWith('$ '))) continue;
    const skip = /^skip:\s*(.+)$/.exec(marker)?.[1];
    result.push({
      file,
      line: fence.line,
      service: skip === undefined ? service : undefined,
      skip,
      steps: steps(fence.lines),
    });
  }
  return result;
}

/**
 * The files a page's examples need in their service: a block after `<!-- docs-test: file=<path> -->`
 * is written to `<path>` in the service folder (of the page's current service) before it boots.
 */
export function serviceFiles(
  file: string,
  text: string,
): { service: string | undefined; path: string; contents: string }[] {
  let service: string | undefined;
  const result: { service: string | undefined; path: string; contents: string }[] = [];
  for (const fence of fences(file, text)) {
    const marker = fence.marker ?? '';
    const named = /(?:^|\s)service=(\S+)/.exec(marker)?.[1];
    if (named !== undefined) service = named;
    const path = /(?:^|\s)file=(\S+)/.exec(marker)?.[1];
    if (path !== undefined) result.push({ service, path, contents: `${fence.lines.join('\n')}\n` });
  }
  return result;
}

/** The examples of every page, in page order. */
export function allExamples(): Example[] {
  return docFiles().flatMap((file) => examples(file, readFileSync(join(ROOT, file), 'utf8')));
}
