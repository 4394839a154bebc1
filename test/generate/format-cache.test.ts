/**
 * The format step formats only what changed: a file whose emitted text is the one recorded in
 * the manifest keeps its formatted text, and the user's existing files are not formatted at all.
 * Biome is replaced here by a script that records which files it is given.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, type GeneratedFile, type PreviousOutput } from '../../cli/generate/index.js';
import { MANIFEST_PATH, parseManifest } from '../../cli/manifest/index.js';
import { fixtureSources, fixtureNamed } from '../helpers/generate.js';

let dir: string;
let log: string;
const saved = { binary: process.env['BIOME_BINARY'], log: process.env['FAKE_BIOME_LOG'] };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eg-format-cache-'));
  log = join(dir, 'formatted.txt');
  const fake = join(dir, 'fake-biome.sh');
  // Lists the files of the folder it is given (its last argument) and leaves them as they are.
  await writeFile(
    fake,
    '#!/bin/sh\nfor root; do :; done\n(cd "$root" && find . -type f | sed "s#^./##" | sort) >> "$FAKE_BIOME_LOG"\n',
  );
  await chmod(fake, 0o755);
  process.env['FAKE_BIOME_LOG'] = log;
  process.env['BIOME_BINARY'] = fake;
});

afterAll(async () => {
  for (const [name, value] of [
    ['BIOME_BINARY', saved.binary],
    ['FAKE_BIOME_LOG', saved.log],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(dir, { recursive: true, force: true });
});

const options = { schemaFiles: ['fixtures/shop/shop.yaml'], outputDir: 'shop-service' };

/** What the output folder holds after a generation wrote `files` into it. */
function previousOf(files: readonly GeneratedFile[]): PreviousOutput {
  const manifest = parseManifest(files.find((file) => file.path === MANIFEST_PATH)!.contents);
  const byPath = new Map(files.map((file) => [file.path, file.contents]));
  const listed = Object.keys(manifest.manifest!.files);
  return {
    manifest: manifest.manifest!,
    migrationFiles: [],
    files: new Map(listed.map((path) => [path, byPath.get(path)!])),
    userFiles: new Set(files.filter((file) => file.owner === 'user').map((file) => file.path)),
  };
}

async function formattedFiles(): Promise<string[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  await writeFile(log, '');
  return text.split('\n').filter((line) => line !== '');
}

describe('the format cache', () => {
  it('formats nothing when nothing changed, and gives the same output', async () => {
    const sources = await fixtureSources(fixtureNamed('shop'));
    const first = await generate({ sources, options });
    expect((await formattedFiles()).length).toBeGreaterThan(10);
    const again = await generate({ sources, options, previous: previousOf(first.files) });
    expect(await formattedFiles()).toEqual([]);
    expect(again.files.filter((file) => file.owner !== 'user')).toEqual(
      first.files.filter((file) => file.owner !== 'user'),
    );
  });

  it('formats only the files of a changed entity (and the service-wide ones)', async () => {
    const sources = await fixtureSources(fixtureNamed('shop'));
    const first = await generate({ sources, options });
    await formattedFiles();
    const changed = sources.map((source) => ({
      ...source,
      text: source.text.replace(
        '    - name: description\n      type: STRING\n---',
        '    - name: description\n      type: STRING\n    - name: position\n      type: INTEGER\n---',
      ),
    }));
    expect(changed[0]?.text).not.toBe(sources[0]?.text);
    const again = await generate({ sources: changed, options, previous: previousOf(first.files) });
    const formatted = await formattedFiles();
    // What the cache gave is what a generation from nothing gives (which has no migration).
    const fresh = await generate({ sources: changed, options });
    await formattedFiles();
    const service = (files: readonly GeneratedFile[]): GeneratedFile[] =>
      files.filter((file) => file.owner === 'generator' && !file.path.startsWith('migrations/'));
    expect(service(again.files).map((file) => file.path)).toEqual(
      service(fresh.files).map((file) => file.path),
    );
    expect(service(again.files)).toEqual(service(fresh.files));
    expect(formatted).toEqual([
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
