import type { Options } from 'prettier';

/** The one formatting style of generated code. */
const STYLE: Options = {
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
  return undefined;
}

/**
 * Markdown is written final by its template (prettier's markdown pass cost more than all the
 * entity templates of a large schema together): only blank lines and line ends are tidied.
 */
function tidyMarkdown(contents: string): string {
  const lines = contents.split('\n').map((line) => line.trimEnd());
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/** Formats one generated file; the single formatting pass of the pipeline. */
export async function formatFile(path: string, contents: string): Promise<string> {
  if (path.endsWith('.md')) return tidyMarkdown(contents);
  const parser = parserFor(path);
  if (parser === undefined) return contents.endsWith('\n') ? contents : `${contents}\n`;
  // Loaded on first use, like the other emit-only dependencies.
  const prettier = await import('prettier');
  return prettier.format(contents, { ...STYLE, parser, filepath: path });
}
