/**
 * Read-your-writes across read replicas (SPEC §15): every write's answer carries
 * `X-Read-After: <token>` (the primary's WAL position after its commit), and a read that sends it
 * back is answered from a replica that has replayed that position, or from the primary.
 *
 * The token travels from the HTTP layer to the driver and back in an `AsyncLocalStorage` context
 * of the request, set up only for drivers that route reads (`StorageDriver.readAfter`): the
 * service's other drivers pay nothing for it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Middleware } from 'koa';
import { HttpError } from './errors.js';

/** The header of the token, in both directions. */
export const READ_AFTER_HEADER = 'X-Read-After';

/** What one request knows of positions: the one it asks for and the one its writes reached. */
export interface ReadAfterContext {
  /** The token the request sent: reads must see at least this position. */
  readonly requested: string | undefined;
  /**
   * True for requests that may write (every method but GET and HEAD): their reads — the record a
   * PATCH changes, the check before a DELETE — go to the primary, which the write's version check
   * runs against.
   */
  readonly primary?: boolean;
  /** The position after the request's last write, once it wrote. */
  written: string | undefined;
}

const storage = new AsyncLocalStorage<ReadAfterContext>();

/** The context of the request being served, if read-after tokens are in use. */
export function readAfterContext(): ReadAfterContext | undefined {
  return storage.getStore();
}

/** Runs `fn` with a read-after context (tests and callers outside HTTP). */
export function withReadAfter<T>(context: ReadAfterContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** A WAL position as PostgreSQL writes it: two hexadecimal halves, `16/B374D848`. */
const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** True for a well-formed token. */
export function isReadAfterToken(text: string): boolean {
  return LSN.test(text);
}

/** A token as a number that orders like the position (`undefined` when malformed). */
export function tokenValue(text: string): bigint | undefined {
  const match = LSN.exec(text);
  if (match === null) return undefined;
  return (BigInt(`0x${match[1]!}`) << 32n) | BigInt(`0x${match[2]!}`);
}

/** The later of two tokens. */
export function laterToken(a: string | undefined, b: string): string {
  if (a === undefined) return b;
  return (tokenValue(a) ?? 0n) >= (tokenValue(b) ?? 0n) ? a : b;
}

/**
 * Koa middleware: reads the request's `X-Read-After` (400 when it is not a token), runs the rest
 * of the pipeline in its context, and answers with the position the request's writes reached.
 */
export function readAfterMiddleware(): Middleware {
  return async (ctx, next) => {
    const header = ctx.get(READ_AFTER_HEADER);
    if (header !== '' && !isReadAfterToken(header)) {
      throw new HttpError(
        400,
        `${READ_AFTER_HEADER} must be the token of a write's answer (a WAL position such as 0/3000148); got "${header.slice(0, 40)}"`,
      );
    }
    const context: ReadAfterContext = {
      requested: header === '' ? undefined : header,
      primary: ctx.method !== 'GET' && ctx.method !== 'HEAD',
      written: undefined,
    };
    await storage.run(context, next);
    if (context.written !== undefined) ctx.set(READ_AFTER_HEADER, context.written);
  };
}
