/**
 * One formatter configuration for the repository and the code it generates: the formatting
 * settings of the repository's biome.json are the ones the generator formats with
 * (`BIOME_CONFIGURATION`, cli/generate/format.ts), and both use the Biome the package pins.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIOME_CONFIGURATION } from '../../cli/generate/format.js';
import { ROOT } from '../helpers/generate.js';

interface BiomeJson {
  readonly $schema?: string;
  readonly formatter?: object;
  readonly javascript?: { readonly formatter?: object };
}

const repository = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as BiomeJson;
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  scripts: Record<string, string>;
};

describe('one formatter configuration', () => {
  it('formats the repository as the generator formats its output', () => {
    expect(repository.formatter).toEqual(BIOME_CONFIGURATION.formatter);
    expect(repository.javascript?.formatter).toEqual(BIOME_CONFIGURATION.javascript.formatter);
  });

  it('uses the exactly pinned Biome for the scripts and the generator alike', () => {
    expect(manifest.dependencies['@biomejs/biome']).toMatch(/^\d+\.\d+\.\d+$/);
    for (const script of ['lint', 'format', 'format:check'])
      expect(manifest.scripts[script]).toMatch(/^biome /);
  });
});
