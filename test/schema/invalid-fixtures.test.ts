/**
 * Golden diagnostics: every folder under fixtures/invalid holds schema files and expected.txt,
 * the exact formatted diagnostics. Run with UPDATE_GOLDEN=1 to rewrite expected.txt.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { SCHEMA_DIAGNOSTIC_CODES, loadSchemas } from '../../cli/schema/index.js';

const INVALID_DIR = fileURLToPath(new URL('../../fixtures/invalid/', import.meta.url));
const EXPECTED = 'expected.txt';
const update = process.env.UPDATE_GOLDEN === '1';

const cases = readdirSync(INVALID_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** Loads a fixture folder the way the CLI would, with bare file names as `file`. */
function loadCase(name: string): { text: string; entityCount: number } {
  const dir = path.join(INVALID_DIR, name);
  const files = readdirSync(dir)
    .filter((file) => file !== EXPECTED)
    .sort();
  const sources = files.map((file) => ({ file, text: readFileSync(path.join(dir, file), 'utf8') }));
  const { entities, diagnostics } = loadSchemas(sources);
  return {
    text: `${diagnostics.map(formatDiagnostic).join('\n')}\n`,
    entityCount: entities.length,
  };
}

describe('invalid schema fixtures', () => {
  it('has at least 12 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  it.each(cases)('%s', (name) => {
    const { text, entityCount } = loadCase(name);
    const expectedPath = path.join(INVALID_DIR, name, EXPECTED);
    if (update) {
      writeFileSync(expectedPath, text);
      return;
    }
    expect(entityCount).toBe(0);
    expect(text.trim()).not.toBe('');
    expect(text).toBe(readFileSync(expectedPath, 'utf8'));
  });

  it('covers every code that a schema text can produce', () => {
    const seen = new Set(
      cases.flatMap((name) =>
        [...loadCase(name).text.matchAll(/\(([A-Z_]+)\)$/gm)].map((m) => m[1]),
      ),
    );
    const textCodes = Object.keys(SCHEMA_DIAGNOSTIC_CODES).filter(
      (code) => code !== 'FILE_NOT_READABLE',
    );
    expect(textCodes.filter((code) => !seen.has(code))).toEqual([]);
  });
});
