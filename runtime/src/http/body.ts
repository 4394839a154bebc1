import type { Context } from 'koa';
import { BadRequestError, HttpError } from '../errors.js';

/** Default maximum request body size: 10 MiB. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** How deep a field value (OBJECT, ARRAY, ANY, DICTIONARY) may nest objects and arrays. */
export const MAX_VALUE_DEPTH = 64;
/** The envelope adds up to three levels: `{"data": [ {record} ]}`. */
const MAX_BODY_DEPTH = MAX_VALUE_DEPTH + 3;

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
  // Checked on the text, before parsing: deeper values would exhaust the stack when they are
  // parsed, converted or stored, and no schema needs them.
  if (nestingDepth(text) > MAX_BODY_DEPTH)
    throw new BadRequestError(
      `Request body nests objects and arrays too deeply; values may nest at most ${MAX_VALUE_DEPTH} levels`,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new BadRequestError(`Request body is not valid JSON: ${detail}`);
  }
}

/** The deepest nesting of objects and arrays in a JSON text (brackets inside strings ignored). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return deepest;
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
