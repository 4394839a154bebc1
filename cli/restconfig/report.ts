/**
 * A diagnostics collector for one REST config file. It extends the schema phase's Reporter so
 * that the schema parser (YAML/JSON with positions) can be reused unchanged; the codes that
 * parser reports are renamed into the REST_ namespace.
 */
import { Reporter, type Position } from '../schema/report.js';
import type { SchemaDiagnosticCode } from '../schema/codes.js';
import type { RestDiagnosticCode } from './codes.js';

/** Schema codes the parser can report, and their REST config counterparts. */
const PARSER_CODES: Partial<Record<SchemaDiagnosticCode, RestDiagnosticCode>> = {
  PARSE_ERROR: 'REST_PARSE_ERROR',
  DUPLICATE_KEY: 'REST_DUPLICATE_KEY',
  INVALID_VALUE: 'REST_INVALID_VALUE',
};

export class RestReporter extends Reporter {
  /** Called by the schema parser; its codes are renamed (anything unexpected is a parse error). */
  override report(at: Position, code: SchemaDiagnosticCode, message: string): void {
    this.add(at, PARSER_CODES[code] ?? 'REST_PARSE_ERROR', message);
  }

  /** Records one REST config problem at `at`. */
  add(at: Position, code: RestDiagnosticCode, message: string): void {
    this.diagnostics.push({ file: this.file, line: at.line, column: at.column, message, code });
  }
}
