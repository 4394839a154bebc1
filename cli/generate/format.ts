import * as prettier from 'prettier';

/** The one formatting style of generated code. */
const STYLE: prettier.Options = {
  printWidth: 100,
  singleQuote: true,
  trailingComma: 'all',
  endOfLine: 'lf',
};

/** Parser by file extension; other files are left as they are. */
function parserFor(path: string): string | undefined {
  if (path.endsWith('.ts')) return 'typescript';
  if (path === 'package.json' || path.endsWith('/package.json')) return 'json-stringify';
  if (path.endsWith('.json')) return 'jsonc';
  if (path.endsWith('.md')) return 'markdown';
  return undefined;
}

/** Formats one generated file; the single formatting pass of the pipeline. */
export async function formatFile(path: string, contents: string): Promise<string> {
  const parser = parserFor(path);
  if (parser === undefined) return contents.endsWith('\n') ? contents : `${contents}\n`;
  return prettier.format(contents, { ...STYLE, parser, filepath: path });
}
