/**
 * The answers about methods, each written once: OPTIONS (200, `Allow` and the same list in the
 * envelope) and the order `Allow` lists methods in — used by the entity routers, the metadata
 * routes and the error middleware alike.
 */
import type { Context } from 'koa';
import { successBody } from '../envelope.js';

/** The order `Allow` lists methods in. */
export const METHOD_ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Answers OPTIONS: 200, `Allow: <methods>` and `{"allow": [methods]}`. */
export function answerOptions(
  ctx: Pick<Context, 'set' | 'status' | 'body'>,
  methods: readonly string[],
): void {
  ctx.status = 200;
  ctx.set('Allow', methods.join(', '));
  ctx.body = successBody({ allow: methods });
}

/** The methods of a response's `Allow` header as set so far; none when absent or empty. */
export function allowOf(ctx: Pick<Context, 'response'>): string[] {
  const header: unknown = ctx.response.get('Allow');
  if (typeof header !== 'string') return [];
  return header.split(',').flatMap((method) => (method.trim() === '' ? [] : [method.trim()]));
}
