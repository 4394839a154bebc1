/**
 * The links of README.md and docs/*.md: every relative link names a file of the repository, and
 * every `#anchor` (on the same page or another) names a heading of that page, as GitHub makes
 * anchors from headings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles } from '../helpers/docs.js';
import { ROOT } from '../helpers/generate.js';

/** The text of a page without its fenced blocks and inline code (links there are examples). */
function prose(text: string): string {
  return text
    .replace(/^([ \t]*)(`{3,})[^\n]*\n[\s\S]*?\n\1\2[ \t]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings; repeated headings get `-1`, `-2`, … as on GitHub. */
function anchors(text: string): Set<string> {
  // Indentation only ([ \t], not \s: with /m that would reach back over blank lines and pair
  // the fences wrongly).
  const withoutFences = text.replace(/^([ \t]*)(`{3,})[^\n]*\n[\s\S]*?\n\1\2[ \t]*$/gm, '');
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every relative link of a page: `[text](target)`, not `http(s):`, `mailto:` or absolute. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/'));
}

describe('links of the docs', () => {
  it('anchors follow GitHub: punctuation dropped, spaces as hyphens', () => {
    expect(slug('GET /openapi.json — the OpenAPI document')).toBe(
      'get-openapijson--the-openapi-document',
    );
    expect(slug('Local development with `--runtime-spec file:`')).toBe(
      'local-development-with---runtime-spec-file',
    );
    expect(slug('DATABASE_URL for PostgreSQL')).toBe('database_url-for-postgresql');
  });

  for (const file of docFiles()) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const broken: string[] = [];
      for (const link of links(text)) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${link}: no file ${target}`);
          continue;
        }
        if (anchor === undefined || anchor === '' || !target.endsWith('.md')) continue;
        if (!anchors(readFileSync(join(ROOT, target), 'utf8')).has(anchor))
          broken.push(`${link}: no heading #${anchor} in ${target}`);
      }
      expect(broken).toEqual([]);
    });
  }
});
