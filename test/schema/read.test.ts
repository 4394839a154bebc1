import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { readSchemaSources } from '../../cli/schema/index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'entity-gen-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readSchemaSources', () => {
  it('reads files in the given order and keeps each path as given', async () => {
    const first = path.join(dir, 'b.yaml');
    const second = path.join(dir, 'a.json');
    writeFileSync(first, 'type: ENTITY\n');
    writeFileSync(second, '[]');
    const { sources, diagnostics } = await readSchemaSources([first, second]);
    expect(diagnostics).toEqual([]);
    expect(sources).toEqual([
      { file: first, text: 'type: ENTITY\n' },
      { file: second, text: '[]' },
    ]);
  });

  it('reports unreadable paths at 1:1 and still reads the others', async () => {
    const good = path.join(dir, 'good.yaml');
    writeFileSync(good, 'x: 1\n');
    const missing = path.join(dir, 'missing.yaml');
    const { sources, diagnostics } = await readSchemaSources([missing, good, dir]);
    expect(sources.map((source) => source.file)).toEqual([good]);
    expect(diagnostics.map(formatDiagnostic).sort()).toEqual(
      [
        `${missing}:1:1: Cannot read schema file: no such file (FILE_NOT_READABLE)`,
        `${dir}:1:1: Cannot read schema file: it is a directory (FILE_NOT_READABLE)`,
      ].sort(),
    );
  });
});
