import type { Context } from 'koa';
import { BadRequestError, HttpError } from '../errors.js';

/** Default maximum request body size: 10 MiB. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * Reads and parses a JSON request body. Rejects a missing or non-JSON content type (415), a body
 * over `limit` bytes (413, checked against `Content-Length` first and while streaming) and
 * malformed JSON (400).
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const type = ctx.request.type;
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(
      415,
      type === ''
        ? 'Request body must be JSON: set Content-Type: application/json'
        : `Unsupported Content-Type ${type}; send application/json`,
    );
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
  const text = await readText(ctx, limit);
  if (text.trim() === '')
    throw new BadRequestError('Request body is empty; expected a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new BadRequestError(`Request body is not valid JSON: ${detail}`);
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than the limit of ${limit} bytes`);
}

function readText(ctx: Context, limit: number): Promise<string> {
  const stream = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | undefined, text?: string): void => {
      if (done) return;
      done = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      if (error === undefined) resolve(text ?? '');
      else {
        // Stop reading the rest of an oversize body but let the response go out.
        stream.resume();
        reject(error);
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      finish(undefined, buffer.toString('utf8'));
    };
    const onError = (error: Error): void =>
      finish(new BadRequestError(`Request body could not be read: ${error.message}`));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}
