/**
 * Reading a JSON request body: content type, compression, size limit, JSON parsing and the nesting
 * depth a record may have.
 */
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { BadRequestError, HttpError, quoteInput } from '../errors.js';
import type { RequestState } from './errors.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** A high surrogate without the low one after it, or a low one without the high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Default maximum request body size: 10 MiB. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** How deep a field value (OBJECT, ARRAY, ANY, DICTIONARY) may nest objects and arrays. */
export const MAX_VALUE_DEPTH = 64;
/**
 * The envelope adds up to three levels: `{"data": [ {record} ]}`. A body of one record adds two,
 * so the text check lets a value of 65 levels through there; `checkRecordDepth` is exact.
 */
const MAX_BODY_DEPTH = MAX_VALUE_DEPTH + 3;

const TOO_DEEP_REASON = `Request body nests objects and arrays too deeply; values may nest at most ${MAX_VALUE_DEPTH} levels`;

/**
 * Refuses (400) a record of a request body one of whose field values nests objects and arrays
 * deeper than MAX_VALUE_DEPTH. Called on a parsed body, so the recursion is bounded by the text
 * check of `readJsonBody`.
 */
export function checkRecordDepth(record: object): void {
  // The record itself is one level: its values may reach one level more.
  if (nestsDeeper(record, MAX_VALUE_DEPTH + 1)) throw new BadRequestError(TOO_DEEP_REASON);
}

/** Whether `value` nests objects and arrays more than `levels` deep (a scalar is 0 levels). */
function nestsDeeper(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    if (typeof item === 'object' && item !== null && nestsDeeper(item, levels - 1)) return true;
  }
  return false;
}

/**
 * Reads and parses a JSON request body. Rejects a missing or non-JSON content type (415), a body
 * over `limit` bytes (413, checked against `Content-Length` first and while streaming) and
 * malformed JSON (400).
 */
export async function readJsonBody(
  ctx: Context,
  limit: number,
  /** Levels of nesting the body adds around its records beyond a list insert's (a batch: 3). */
  envelopeDepth = 0,
): Promise<unknown> {
  // An operation of a batch: its body came with the batch's (already read and checked).
  const given = (ctx.state as RequestState | undefined)?.operationBody;
  if (given !== undefined) {
    if (given.value === undefined)
      throw new BadRequestError('Request body is empty; expected a JSON object');
    return given.value;
  }
  const type = ctx.request.type;
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(
      415,
      type === ''
        ? 'Request body must be JSON: set Content-Type: application/json'
        : `Unsupported Content-Type ${quoteInput(type)}; send application/json`,
    );
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
  const text = await readText(ctx, limit);
  // A lone surrogate (`"\ud800"`) would be stored as U+FFFD, differently per driver: refused.
  // Only bodies with \u escapes can hold one, so the walk is rare.
  if (text.includes('\\u') && hasLoneSurrogate(text)) {
    throw new BadRequestError(
      'Request body holds a lone UTF-16 surrogate (\\ud800–\\udfff without its pair); send valid Unicode text',
    );
  }
  if (text.trim() === '')
    throw new BadRequestError('Request body is empty; expected a JSON object');
  // Checked on the text, before parsing: deeper values would exhaust the stack when they are
  // parsed, converted or stored, and no schema needs them.
  if (nestingDepth(text) > MAX_BODY_DEPTH + envelopeDepth)
    throw new BadRequestError(TOO_DEEP_REASON);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new BadRequestError(`Request body is not valid JSON: ${quoteInput(detail)}`);
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

/** Whether a JSON text's strings (or keys) hold a lone surrogate, which `\\u` escapes can make. */
function hasLoneSurrogate(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false; // the parse below reports it
  }
  const pending: unknown[] = [parsed];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

/** The decompressing stream of a `Content-Encoding`, or the request itself for `identity`. */
function decodedStream(ctx: Context): Readable {
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
      return ctx.req;
    case 'gzip':
    case 'x-gzip':
      return ctx.req.pipe(createGunzip());
    case 'deflate':
      return ctx.req.pipe(createInflate());
    case 'br':
      return ctx.req.pipe(createBrotliDecompress());
    default:
      throw new HttpError(
        415,
        `Unsupported Content-Encoding ${quoteInput(encoding)}; send identity, gzip, deflate or br`,
      );
  }
}

/**
 * Reads the whole (decompressed) body as UTF-8 text. raw-body does the streaming and the byte
 * limit; the limit applies to the decompressed bytes, so a small compressed bomb stops at it.
 */
async function readText(ctx: Context, limit: number): Promise<string> {
  const stream = decodedStream(ctx);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(stream, { limit });
  } catch (error) {
    // Stop decompressing, and read (and drop) the rest of the body so that the response can go
    // out: raw-body leaves the request paused.
    if (stream !== ctx.req) {
      ctx.req.unpipe();
      stream.destroy();
    }
    ctx.req.resume();
    if ((error as { type?: unknown }).type === 'entity.too.large') throw tooLarge(limit);
    const detail = error instanceof Error ? error.message : String(error);
    throw new BadRequestError(`Request body could not be read: ${quoteInput(detail)}`);
  }
  // Invalid UTF-8 is refused rather than silently replaced by U+FFFD (raw-body's own decoding
  // would replace it).
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new BadRequestError('Request body is not valid UTF-8');
  }
}
