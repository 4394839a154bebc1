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
/** What `tsc` printed compiling the consumer (into BUILD): empty when it compiled cleanly. */
let compilerOutput: string;

// One shared fixture, built once before either case: the service, and the consumer compiled.
beforeAll(async () => {
  // The consumer imports the client of this service folder.
  service = await bootFixture('shop', { folder: 'client-shop' });
  await rm(BUILD, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', join(CONSUMER, 'tsconfig.json')], {
    cwd: ROOT,
  }).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? 'tsc failed',
  }));
  compilerOutput = `${result.stdout}${result.stderr}`;
}, 180_000);
afterAll(async () => {
  await service?.close();
});

describe('the typed client', () => {
  it('compiles in a strict browser project, where mistakes do not', () => {
    // An @ts-expect-error line that compiled would be an error here ("Unused directive").
    expect(compilerOutput).toBe('');
  });

  const STAMPED = { createdAt: expect.any(String), updatedAt: expect.any(String) };

  it('works against the live service, compiled', async () => {
    expect(compilerOutput, 'the consumer must compile first').toBe('');
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
    expect(got['selected']).toEqual({
      data: [{ code: 'c1', name: 'Chisel' }],
      first: 'c1',
      // Chisel and Clamp (Crowbar was removed); Level has no c.
      count: 2,
      withCategory: { code: 'l1', category: { description: 'Hand tools' } },
      counted: 1,
      insensitive: ['l1'],
    });
    expect(got['patched']).toEqual({ code: 'c2', name: 'Clamp', price: '7', available: true });
    expect(got['removed']).toBe('c3');
    expect(got['missing']).toEqual({
      status: 404,
      reason: 'EntityRecord with id nope not found for PRODUCT',
    });
    expect(got['invalid']).toEqual({ status: 400, paths: [['price']] });
    expect(got['expanded']).toEqual({ description: 'Hand tools', listed: ['tools'] });
    expect(got['bulk']).toEqual({
      upserted: [
        // CATEGORY's createdAt and updatedAt are set by the server (SPEC §16).
        { name: 'tools', description: 'Tools', ...STAMPED },
        { name: 'toys', description: 'Toys', ...STAMPED },
      ],
      counts: [1, 1, 0],
      restocked: [['l1', 9]],
      batch: ['games', 1, 200],
      failedBatch: { status: 404, operation: 1 },
      removedToys: ['toys'],
      cards: 0,
    });
  });
});
