/**
 * Cache keys stay out of committed files: the manifest holds only what a reviewer or `check`
 * needs, and a change of the generator that changes no output (its fingerprint: any edit of its
 * code, a comment included, or a new release) changes no committed file. The cache, which does
 * change, is a file of its own that git ignores.
 */
import { describe, expect, it, vi } from 'vitest';
import { CACHE_PATH, generate, type GenerateResult } from '../../cli/generate/index.js';
import { MANIFEST_PATH } from '../../cli/manifest/index.js';
import { fixtureNamed, fixtureSources } from '../helpers/generate.js';

const generator = vi.hoisted(() => ({ fingerprint: 'a'.repeat(64) }));

vi.mock('../../cli/generate/fingerprint.js', () => ({
  generatorFingerprint: () => generator.fingerprint,
}));

async function generateShop(fingerprint: string): Promise<GenerateResult> {
  generator.fingerprint = fingerprint;
  const sources = await fixtureSources(fixtureNamed('shop'));
  return generate({
    sources,
    options: { schemaFiles: ['fixtures/shop/shop.yaml'], outputDir: 'shop-service' },
  });
}

describe('cache keys', () => {
  it('are not in the manifest: it holds the format, the schema and a hash per file only', async () => {
    const result = await generateShop('a'.repeat(64));
    const manifest = result.files.find((file) => file.path === MANIFEST_PATH)!.contents;
    expect(Object.keys(JSON.parse(manifest) as object)).toEqual([
      'format',
      'schemaHash',
      'schema',
      'files',
    ]);
    expect(manifest).not.toContain('a'.repeat(64));
    // Every key the cache records is absent from the manifest.
    const cache = JSON.parse(result.cache) as { files: Record<string, [string, string]> };
    expect(Object.keys(cache.files).length).toBeGreaterThan(10);
    for (const [key] of Object.values(cache.files)) expect(manifest).not.toContain(key);
  });

  it('change with the generator, the committed files do not', async () => {
    const before = await generateShop('a'.repeat(64));
    const after = await generateShop('b'.repeat(64));
    expect(after.files).toEqual(before.files);
    expect(after.cache).not.toBe(before.cache);
    expect(after.files.map((file) => file.path)).not.toContain(CACHE_PATH);
  });
});
