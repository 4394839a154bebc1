/** One problem in a user's input, located in a file. */
export interface Diagnostic {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  readonly message: string;
  /** Stable upper-case identifier, e.g. `UNKNOWN_KEY`. */
  readonly code: string;
}

/** Renders a diagnostic as `file:line:col: message (CODE)`. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const { file, line, column, message, code } = diagnostic;
  return `${file}:${line}:${column}: ${message} (${code})`;
}

/** Orders diagnostics by file, line and column so output does not depend on discovery order. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column ||
      (a.code < b.code ? -1 : a.code > b.code ? 1 : 0),
  );
}
