/**
 * The last step of every generated file. The templates and ./layout write the final layout
 * themselves (prettier's style: printWidth 100, single quotes, trailing commas; a test runs
 * prettier over the golden output to keep it so), so no formatter runs here: that cost about
 * 8 ms per file, most of a run on a large schema (docs/benchmarks.md). What is left is tidying
 * what a template's conditional blocks leave behind: runs of blank lines and trailing spaces.
 */
export function finishFile(contents: string): string {
  const lines = contents.split('\n').map((line) => line.trimEnd());
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
