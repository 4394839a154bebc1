import type { Diagnostic } from '../diagnostics.js';
import type { SchemaDiagnosticCode } from './codes.js';

/** A 1-based line and column inside one schema file. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Collects the diagnostics of one schema file. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];

  constructor(readonly file: string) {}

  /** Records one problem at `at`. */
  report(at: Position, code: SchemaDiagnosticCode, message: string): void {
    this.diagnostics.push({ file: this.file, line: at.line, column: at.column, message, code });
  }
}

/** Turns UTF-16 offsets into positions; `\n` ends a line (a `\r` before it counts as a column). */
export function positionAt(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (
    let index = text.indexOf('\n');
    index !== -1 && index < offset;
    index = text.indexOf('\n', index + 1)
  ) {
    line++;
    lineStart = index + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
