/**
 * The generator lays out its TypeScript itself (cli/generate/layout) instead of running a
 * formatter. These tests hold it to prettier's output: every generated file of every fixture, a
 * schema of very long names that makes every construct break, and literal values one by one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { FIXTURES, generateFixture, ROOT } from '../helpers/generate.js';
import { generate, type GeneratedFile } from '../../cli/generate/index.js';
import {
  declaration,
  jsonLiteral,
  printDoc,
  stringLiteral,
} from '../../cli/generate/layout/typescript.js';
import type { JsonValue } from '../../cli/schema/types.js';

const style = JSON.parse(
  await readFile(join(ROOT, '.prettierrc.json'), 'utf8'),
) as prettier.Options;

async function prettierFormat(path: string, contents: string): Promise<string> {
  return prettier.format(contents, { ...style, filepath: path });
}

/** Files prettier would change, with the first differing line of each. */
async function unformatted(files: readonly GeneratedFile[]): Promise<string[]> {
  const problems: string[] = [];
  for (const file of files) {
    if (!/\.(ts|json)$/.test(file.path)) continue;
    const formatted = await prettierFormat(file.path, file.contents);
    if (formatted === file.contents) continue;
    const ours = file.contents.split('\n');
    const theirs = formatted.split('\n');
    const index = ours.findIndex((text, at) => text !== theirs[at]);
    problems.push(`${file.path}:${index + 1}: ${ours[index] ?? ''} ≠ ${theirs[index] ?? ''}`);
  }
  return problems;
}

describe('generated code is laid out exactly as prettier formats it', () => {
  it.each(FIXTURES)('every .ts and .json file of fixture $name', async (fixture) => {
    expect(await unformatted(await generateFixture(fixture))).toEqual([]);
  });

  it('a schema of very long names, enums, nested types and descriptions (every construct breaks)', async () => {
    const file = 'fixtures/long-names/schema.json';
    const result = await generate([{ file, text: await readFile(join(ROOT, file), 'utf8') }], {
      schemaFiles: [file],
      outputDir: 'long-names-service',
    });
    expect(result.diagnostics).toEqual([]);
    const longest = Math.max(
      ...result.files.flatMap((generated) =>
        generated.contents.split('\n').map((text) => text.length),
      ),
    );
    // The fixture must keep exercising the broken layouts, not only the one-line ones.
    expect(longest).toBeGreaterThan(100);
    expect(await unformatted(result.files)).toEqual([]);
  });
});

describe('literals', () => {
  const values: [string, JsonValue][] = [
    ['plain string', 'text'],
    ['single quotes inside', "it's"],
    ['more single than double quotes', `it's "x" 'y'`],
    ['escapes', 'line\nbreak\ttab \\ back "quoted"'],
    ['unicode and wide characters', 'ünïcödé 漢字 text'],
    ['numbers', [0, -1, 2.5, 1e21, 1e-7]],
    ['many numbers fill lines', Array.from({ length: 40 }, (_, index) => index * 1000)],
    ['keywords', [true, false, null]],
    ['empty containers', { a: [], b: {} }],
    ['keys needing quotes', { 'a-b': 1, c: 2, '1': 3, ключ: 4 }],
    [
      'objects with several keys in a list',
      [
        { a: 1, b: 2 },
        { c: 3, d: 4 },
      ],
    ],
    ['single-key objects in a list', [{ a: 1 }, { b: 2 }]],
    [
      'lists of lists',
      [
        [1, 2],
        [3, 4],
      ],
    ],
    [
      'a long string value under a long key',
      { description: 'A very long description of something that goes on and on and on and on' },
    ],
    ['a long string value under a short key', { de: 'x'.repeat(96) }],
    [
      'nested',
      {
        a: {
          b: {
            c: [
              { name: 'x', type: 'STRING' },
              { name: 'y', type: 'INTEGER', required: true },
            ],
          },
        },
      },
    ],
  ];

  it.each(values)('%s', async (_name, value) => {
    const text = `${printDoc(declaration('const value', jsonLiteral(value)))}\n`;
    expect(text).toBe(await prettierFormat('value.ts', text));
    // And it is the same value.
    expect(new Function(`return ${printDoc(jsonLiteral(value))};`)()).toEqual(value);
  });

  it.each(['plain', "it's", 'say "hi"', `a"b'c'`, 'back\\slash', '\u2028'])(
    'string %j keeps its value',
    (text) => {
      expect(new Function(`return ${stringLiteral(text)};`)()).toBe(text);
    },
  );
});
