/**
 * The service's logger: pino, JSON lines on stdout, with the level and name every service sets.
 */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options of the service logger. */
export interface LoggerOptions {
  /** pino level: `fatal`, `error`, `warn`, `info` (default), `debug`, `trace` or `silent`. */
  readonly level?: string;
  /** Service name written into every line. */
  readonly name?: string;
}

/** Creates the structured (JSON lines, stdout) logger of a service. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({
    name: options.name ?? 'entity-gen-service',
    level: options.level ?? 'info',
    base: undefined,
  });
}
