/**
 * The quick parse (js-yaml, no positions) must read every schema exactly as the positioned parse
 * (the `yaml` package) does, and must step aside for the YAML features where the two differ;
 * problems are always reported with their real positions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { loadSchemas, type SchemaSource } from '../../cli/schema/index.js';
import { parseSchemaText } from '../../cli/schema/parse.js';
import { Reporter } from '../../cli/schema/report.js';
import { FIXTURES, ROOT } from '../helpers/generate.js';

/** The documents and diagnostics of a load, positions left aside. */
function loaded(sources: readonly SchemaSource[], positions: 'exact' | 'none'): unknown {
  const result = loadSchemas(sources, positions);
  return {
    documents: result.entities.map((entity) => entity.document),
    diagnostics: result.diagnostics.map(formatDiagnostic),
  };
}

function sourcesOf(files: readonly string[]): SchemaSource[] {
  return files.map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
}

describe('the quick parse', () => {
  it.each(FIXTURES.map((fixture) => [fixture.name, fixture.schemas] as const))(
    'reads the %s fixture as the positioned parse does',
    (_name, files) => {
      const sources = sourcesOf(files);
      expect(loaded(sources, 'none')).toEqual(loaded(sources, 'exact'));
      // Valid schemas take the quick path (what makes it worth having).
      expect(loadSchemas(sources, 'none').exactPositions).toBe(false);
    },
  );

  const invalid = readdirSync(join(ROOT, 'fixtures', 'invalid'));
  it.each(invalid)('reports the problems of invalid/%s with their positions', (name) => {
    const dir = join('fixtures', 'invalid', name);
    const files = readdirSync(join(ROOT, dir))
      .filter((file) => /\.(ya?ml|json)$/.test(file))
      .map((file) => join(dir, file));
    const sources = sourcesOf(files);
    expect(loaded(sources, 'none')).toEqual(loaded(sources, 'exact'));
  });

  it.each([
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['an explicit key', '? a\n: 1\n'],
    ['a null key', '~: 1\n'],
    ['a merge key', 'a: {x: 1}\nb:\n  <<: {y: 2}\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['a binary integer (js-yaml reads 0b11 as 3, YAML 1.2 as text)', 'a: 0b11\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a syntax error', 'a: [1, 2\n'],
    ['an empty document', '---\n---\na: 1\n'],
    ['.inf', 'a: .inf\n'],
  ])('steps aside for %s', (_name, text) => {
    expect(parseSchemaText('s.yaml', text, new Reporter('s.yaml'), 'none').exact).toBe(true);
  });

  it('reads a plain document', () => {
    const { roots, exact } = parseSchemaText(
      's.yaml',
      'a: 1\nb: [x, "y"]\nc: {d: true, e: null}\n',
      new Reporter('s.yaml'),
      'none',
    );
    expect(exact).toBe(false);
    expect(roots).toHaveLength(1);
  });

  it('checks a .json file as JSON first (YAML would accept a trailing comma)', () => {
    const reporter = new Reporter('s.json');
    const { exact } = parseSchemaText('s.json', '{"a": [1, 2,]}', reporter, 'none');
    expect(exact).toBe(true);
    expect(reporter.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(['PARSE_ERROR']);
  });

  it('keeps __proto__ as a plain key, as the positioned parse does', () => {
    const text = '__proto__: {a: 1}\nb: 2\n';
    const quick = parseSchemaText('s.yaml', text, new Reporter('s.yaml'), 'none');
    const exact = parseSchemaText('s.yaml', text, new Reporter('s.yaml'), 'exact');
    const keys = (roots: typeof quick.roots): string[] =>
      roots[0]?.kind === 'map' ? roots[0].entries.map((entry) => entry.key) : [];
    expect(keys(quick.roots)).toEqual(keys(exact.roots));
  });
});
