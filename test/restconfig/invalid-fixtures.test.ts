/**
 * Golden diagnostics for `--rest-config`: every folder under fixtures/restconfig/invalid holds
 * one REST config file (restconfig.yaml or .json) and expected.txt, the exact formatted
 * diagnostics against fixtures/shop/shop.yaml. Run with UPDATE_GOLDEN=1 to rewrite expected.txt.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { normalize } from '../../cli/model/normalize.js';
import type { SchemaModel } from '../../cli/model/types.js';
import { REST_DIAGNOSTIC_CODES, loadRestConfig } from '../../cli/restconfig/index.js';
import { loadSchemas } from '../../cli/schema/index.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const INVALID_DIR = path.join(FIXTURES, 'restconfig', 'invalid');
const EXPECTED = 'expected.txt';
const update = process.env.UPDATE_GOLDEN === '1';

function shopModel(): SchemaModel {
  const file = 'shop.yaml';
  const text = readFileSync(path.join(FIXTURES, 'shop', file), 'utf8');
  const { entities, diagnostics } = loadSchemas([{ file, text }]);
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  const { model, diagnostics: modelDiagnostics } = normalize(entities);
  expect(modelDiagnostics.map(formatDiagnostic)).toEqual([]);
  if (model === undefined) throw new Error('shop.yaml did not normalize');
  return model;
}

const model = shopModel();

const cases = readdirSync(INVALID_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** Loads a fixture folder the way the CLI would, with the bare file name as `file`. */
function loadCase(name: string): { text: string; configCount: number } {
  const dir = path.join(INVALID_DIR, name);
  const files = readdirSync(dir).filter((file) => file !== EXPECTED);
  expect(files).toHaveLength(1);
  const file = files[0]!;
  const source = { file, text: readFileSync(path.join(dir, file), 'utf8') };
  const { configs, diagnostics } = loadRestConfig(source, model);
  return {
    text: `${diagnostics.map(formatDiagnostic).join('\n')}\n`,
    configCount: configs.size,
  };
}

describe('invalid REST config fixtures', () => {
  it('has at least 12 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  it.each(cases)('%s', (name) => {
    const { text, configCount } = loadCase(name);
    const expectedPath = path.join(INVALID_DIR, name, EXPECTED);
    if (update) {
      writeFileSync(expectedPath, text);
      return;
    }
    expect(configCount).toBe(0);
    expect(text.trim()).not.toBe('');
    expect(text).toBe(readFileSync(expectedPath, 'utf8'));
  });

  it('covers every REST config code', () => {
    const seen = new Set(
      cases.flatMap((name) =>
        [...loadCase(name).text.matchAll(/\(([A-Z_]+)\)$/gm)].map((match) => match[1]),
      ),
    );
    expect(Object.keys(REST_DIAGNOSTIC_CODES).filter((code) => !seen.has(code))).toEqual([]);
  });
});
