/**
 * No import cycles in the generator (cli/) or the runtime (runtime/src/): every module can be read
 * after the modules it imports. Each relative import counts — `import type`, re-exports and
 * dynamic `import()` included — since a cycle of types is still a cycle a reader follows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `from '…'`, `import '…'` and `import('…')` specifiers of a module's text. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The relative imports of every `.ts` file under `dir`, as paths relative to the repository. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const base = join(ROOT, dir);
  for (const entry of readdirSync(base, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const targets = [...text.matchAll(SPECIFIER)]
      .map((match) => match[1]!)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) =>
        relative(ROOT, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))),
      );
    graph.set(relative(ROOT, file), [...new Set(targets)].sort());
  }
  return graph;
}

/** One cycle of each strongly connected group of modules that import each other. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      const seen = state.get(next);
      if (seen === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it.each(['cli', 'runtime/src'])('%s has none', (dir) => {
    const graph = importGraph(dir);
    expect(graph.size).toBeGreaterThan(10);
    expect(importCycles(graph).map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});
