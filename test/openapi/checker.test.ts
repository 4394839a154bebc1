/**
 * The response checker of the end-to-end suites (test/helpers/openapi.ts) must catch what the
 * document does not describe, or checking every response would prove nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateFixtureInto } from '../helpers/generate.js';
import { fixtureNamed } from '../helpers/generate.js';
import type { JsonResponse } from '../helpers/http.js';
import { responseChecker, type ResponseCheck } from '../helpers/openapi.js';

let check: ResponseCheck;

beforeAll(async () => {
  const dir = await generateFixtureInto(fixtureNamed('shop'), 'openapi-checker');
  check = responseChecker(JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8')));
});

function response(status: number, body: unknown, type = 'application/json'): JsonResponse {
  const text = body === undefined ? '' : JSON.stringify(body);
  return { status, headers: new Headers({ 'content-type': type }), body, text };
}

const product = { code: 'p1', name: 'Hammer', price: '19.9' };
const meta = { lastUpdateTimeUnix: 1, lastUpdateTimeISO: '1970-01-01T00:00:00.001Z' };

describe('the response checker', () => {
  it('accepts what the document describes', () => {
    expect(
      check('GET', '/data/product/p1', response(200, { status: 'success', data: product, meta })),
    ).toEqual([]);
    expect(
      check('GET', '/data/PRODUCT/a/b', response(404, { status: 'error', error: { reason: 'x' } })),
    ).toEqual([]);
    expect(
      check(
        'GET',
        '/data/product?price[GT]=1',
        response(200, { status: 'success', data: [product], meta: {} }),
      ),
    ).toEqual([]);
    expect(check('HEAD', '/data/product/p1', { ...response(200, undefined), text: '' })).toEqual(
      [],
    );
    expect(
      check('DELETE', '/health', response(405, { status: 'error', error: { reason: 'x' } })),
    ).toEqual([]);
  });

  it.each([
    [
      'a body field the schema does not have',
      'GET',
      '/data/product/p1',
      response(200, { status: 'success', data: { ...product, extra: 1 }, meta }),
    ],
    [
      'a DECIMAL answered as a number',
      'GET',
      '/data/product/p1',
      response(200, { status: 'success', data: { ...product, price: 19.9 }, meta }),
    ],
    [
      'a status the operation does not document',
      'GET',
      '/data/product/p1',
      response(418, { status: 'error', error: { reason: 'x' } }),
    ],
    [
      'an error without a reason',
      'GET',
      '/data/product/p1',
      response(404, { status: 'error', error: {} }),
    ],
    [
      'a path the document does not list answering 200',
      'GET',
      '/nowhere',
      response(200, { status: 'success', data: 1 }),
    ],
    ['an undocumented content type', 'GET', '/health', response(200, 'ok', 'text/plain')],
    [
      'OPTIONS answering what is not the Allow envelope',
      'OPTIONS',
      '/data/product',
      response(200, { status: 'success', data: {} }),
    ],
    [
      'HEAD of a path without GET answering 200',
      'HEAD',
      '/nowhere',
      { ...response(200, undefined), text: '' },
    ],
    [
      'a body on HEAD',
      'HEAD',
      '/data/product/p1',
      response(200, { status: 'success', data: product, meta }),
    ],
  ])('flags %s', (_name, method, path, given) => {
    expect(check(method, path, given)).not.toEqual([]);
  });
});
