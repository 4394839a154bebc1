/**
 * The typed client of a generated service (SPEC §7): a consumer project compiles under `--strict`
 * for a browser (no Node types), its `@ts-expect-error` lines prove that mistakes do not compile,
 * and the compiled consumer works against the live service.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT, ROOT } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

const run = promisify(execFile);
const CONSUMER = join(ROOT, 'test', 'client', 'consumer');
const BUILD = join(OUTPUT, 'client-consumer-build');

let service: BootedService;

beforeAll(async () => {
  // The consumer imports the client of this service folder.
  service = await bootFixture('shop', { folder: 'client-shop' });
  await rm(BUILD, { recursive: true, force: true });
});
afterAll(async () => {
  await service?.close();
});

describe('the typed client', () => {
  it('compiles in a strict browser project, where mistakes do not', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(CONSUMER, 'tsconfig.json')], {
      cwd: ROOT,
    }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? 'tsc failed',
    }));
    // An @ts-expect-error line that compiled would be an error here ("Unused directive").
    expect(`${result.stdout}${result.stderr}`).toBe('');
  });

  it('works against the live service, compiled', async () => {
    const main = join(BUILD, 'client', 'consumer', 'main.js');
    const { stdout } = await run(process.execPath, [main, service.url], { cwd: ROOT });
    const got = JSON.parse(stdout) as Record<string, unknown>;
    expect(got['inserted']).toEqual({ code: 'c1', name: 'Chisel', price: '12.5', tags: ['tools'] });
    expect(got['many']).toEqual([
      { code: 'c2', name: 'Clamp', price: '7', stock: 3 },
      { code: 'c3', name: 'Crowbar', price: '30', status: 'ACTIVE' },
    ]);
    expect(got['read']).toEqual(got['inserted']);
    expect(got['cheap']).toEqual(['c1']);
    expect(got['named']).toEqual(['c2', 'c3']);
    expect(got['count']).toBe(3);
    expect(got['patched']).toEqual({ code: 'c2', name: 'Clamp', price: '7', available: true });
    expect(got['removed']).toBe('c3');
    expect(got['missing']).toEqual({
      status: 404,
      reason: 'EntityRecord with id nope not found for PRODUCT',
    });
    expect(got['invalid']).toEqual({ status: 400, paths: [['price']] });
  });
});
