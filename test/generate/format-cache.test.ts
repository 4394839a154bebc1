/**
 * The format phase formats only what changed: a file whose emitted text is the one recorded in
 * the generator's cache keeps its formatted text, and the user's existing files are not formatted
 * at all. The formatter is wrapped here to record which files it is given.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  generate,
  reusableFiles,
  type GeneratedFile,
  type GenerateResult,
  type PreviousOutput,
  type Speedups,
} from '../../cli/generate/index.js';
import { MANIFEST_PATH, parseManifest } from '../../cli/manifest/index.js';
import { fixtureSources, fixtureNamed } from '../helpers/generate.js';

const formatted = vi.hoisted(() => ({ paths: [] as string[] }));

vi.mock('../../cli/generate/formatter.js', async (original) => {
  const real = await original<typeof import('../../cli/generate/formatter.js')>();
  return {
    ...real,
    formatWithBiome: (files: readonly { path: string; contents: string }[], options: object) => {
      formatted.paths.push(...files.map((file) => file.path));
      return real.formatWithBiome(files, options);
    },
  };
});

const options = { schemaFiles: ['fixtures/shop/shop.yaml'], outputDir: 'shop-service' };

/** What the output folder holds after a generation wrote `result` into it. */
function previousOf(result: GenerateResult): { previous: PreviousOutput; speedups: Speedups } {
  const files = result.files;
  const manifest = parseManifest(files.find((file) => file.path === MANIFEST_PATH)!.contents);
  const byPath = new Map(files.map((file) => [file.path, file.contents]));
  const listed = Object.keys(manifest.manifest!.files);
  const onDisk = new Map(listed.map((path) => [path, byPath.get(path)!]));
  return {
    previous: {
      manifest: manifest.manifest!,
      migrationFiles: [],
      files: onDisk,
      userFiles: new Set(files.filter((file) => file.owner === 'user').map((file) => file.path)),
    },
    speedups: { cache: reusableFiles(result.cache, onDisk) },
  };
}

function formattedFiles(): string[] {
  const paths = [...formatted.paths].sort();
  formatted.paths.length = 0;
  return paths;
}

describe('the format cache', () => {
  it('formats nothing when nothing changed, and gives the same output', async () => {
    const sources = await fixtureSources(fixtureNamed('shop'));
    const first = await generate({ sources, options });
    expect(formattedFiles().length).toBeGreaterThan(10);
    const { previous, speedups } = previousOf(first);
    const again = await generate({ sources, options, previous }, speedups);
    expect(formattedFiles()).toEqual([]);
    expect(again.files.filter((file) => file.owner !== 'user')).toEqual(
      first.files.filter((file) => file.owner !== 'user'),
    );
    expect(again.cache).toBe(first.cache);
  });

  it('formats again a file whose text on disk is not the one the cache recorded', async () => {
    const sources = await fixtureSources(fixtureNamed('shop'));
    const first = await generate({ sources, options });
    formattedFiles();
    const { previous } = previousOf(first);
    const files = new Map(previous.files);
    files.set('src/app.ts', `${files.get('src/app.ts')}// edited\n`);
    const again = await generate(
      { sources, options, previous: { ...previous, files } },
      { cache: reusableFiles(first.cache, files) },
    );
    expect(formattedFiles()).toEqual(['src/app.ts']);
    expect(again.files).toEqual(first.files);
  });

  it('formats only the files of a changed entity (and the service-wide ones)', async () => {
    const sources = await fixtureSources(fixtureNamed('shop'));
    const first = await generate({ sources, options });
    formattedFiles();
    const changed = sources.map((source) => ({
      ...source,
      text: source.text.replace(
        '    - name: description\n      type: STRING\n',
        '    - name: description\n      type: STRING\n    - name: position\n      type: INTEGER\n',
      ),
    }));
    expect(changed[0]?.text).not.toBe(sources[0]?.text);
    const { previous, speedups } = previousOf(first);
    const again = await generate({ sources: changed, options, previous }, speedups);
    const made = formattedFiles();
    // What the cache gave is what a generation from nothing gives (which has no migration).
    const fresh = await generate({ sources: changed, options });
    formattedFiles();
    const service = (files: readonly GeneratedFile[]): GeneratedFile[] =>
      files.filter((file) => file.owner === 'generator' && !file.path.startsWith('migrations/'));
    expect(service(again.files).map((file) => file.path)).toEqual(
      service(fresh.files).map((file) => file.path),
    );
    expect(service(again.files)).toEqual(service(fresh.files));
    expect(made).toEqual([
      'src/app.ts',
      'src/client.ts',
      'src/entities/category/client.ts',
      'src/entities/category/definition.ts',
      'src/entities/category/routes.ts',
      'src/entities/category/types.ts',
      'src/service.ts',
    ]);
  });
});
