// Summarizes a V8 .cpuprofile (as written by `node --cpu-prof`): self time per function and per
// package/module, and inclusive ("total") time of chosen functions.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root, with a trailing slash, as profiles spell script paths. */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Short location of a script URL: `pkg/path` inside node_modules, else the path under the repo. */
export function shortUrl(url) {
  if (url === '') return '(native)';
  const text = url.replace(/^file:\/\//, '');
  const nm = text.lastIndexOf('/node_modules/');
  if (nm >= 0) return text.slice(nm + '/node_modules/'.length);
  if (text.startsWith(REPO)) return text.slice(REPO.length);
  return text;
}

/** The package (or repo area) a script belongs to. */
export function packageOf(url) {
  const short = shortUrl(url);
  if (short.startsWith('node:') || !short.includes('/'))
    return short === '(native)' ? '(native/GC/idle)' : 'node internals';
  if (url.includes('/node_modules/')) {
    const parts = short.split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (short.startsWith('runtime/')) return '@entity-gen/runtime';
  if (short.startsWith('dist/cli/')) return 'entity-gen CLI';
  return short.split('/').slice(0, 2).join('/');
}

/**
 * Reads a profile and returns `{ totalMs, functions: [{name, where, selfMs, selfPct}], packages:
 * [{name, selfMs, selfPct}], inclusive(nameRegex) }`. `(idle)` is left out of the total.
 */
export function summarizeProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    const delta = timeDeltas[i + 1] ?? timeDeltas[i] ?? 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, delta));
  }
  const functions = new Map();
  const packages = new Map();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id);
    if (callFrame.functionName === '(idle)') continue;
    totalUs += us;
    const name = callFrame.functionName || '(anonymous)';
    const where =
      callFrame.url === '' ? '' : `${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;
    const key = `${name} ${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const pkg =
      callFrame.url === '' ? (name.startsWith('(') ? name : '(native)') : packageOf(callFrame.url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const pct = (us) => (totalUs === 0 ? 0 : (100 * us) / totalUs);
  /** Inclusive time of frames whose function name matches (counted once per sample). */
  const inclusive = (pattern) => {
    let us = 0;
    for (const [id, sampleUs] of selfUs) {
      if (byId.get(id).callFrame.functionName === '(idle)') continue;
      for (let at = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at).callFrame;
        if (pattern.test(`${frame.functionName} ${shortUrl(frame.url)}`)) {
          us += sampleUs;
          break;
        }
      }
    }
    return { ms: us / 1000, pct: pct(us) };
  };
  return {
    totalMs: totalUs / 1000,
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .map((f) => ({ name: f.name, where: f.where, selfMs: f.us / 1000, selfPct: pct(f.us) })),
    packages: [...packages.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, selfMs: us / 1000, selfPct: pct(us) })),
    inclusive,
  };
}

/** Markdown tables of the top functions and packages of a profile summary. */
export function profileMarkdown(summary, { top = 15, inclusive = [] } = {}) {
  const lines = [`Sampled CPU time: ${summary.totalMs.toFixed(0)} ms (idle excluded).`, ''];
  lines.push('| self % | self ms | function | where |', '|---:|---:|---|---|');
  for (const f of summary.functions.slice(0, top)) {
    lines.push(`| ${f.selfPct.toFixed(1)} | ${f.selfMs.toFixed(0)} | \`${f.name}\` | ${f.where} |`);
  }
  lines.push('', '| self % by package | self ms | package |', '|---:|---:|---|');
  for (const p of summary.packages.slice(0, 10)) {
    lines.push(`| ${p.selfPct.toFixed(1)} | ${p.selfMs.toFixed(0)} | ${p.name} |`);
  }
  if (inclusive.length > 0) {
    lines.push('', '| inclusive % | inclusive ms | frames matching |', '|---:|---:|---|');
    for (const [label, pattern] of inclusive) {
      const result = summary.inclusive(pattern);
      lines.push(`| ${result.pct.toFixed(1)} | ${result.ms.toFixed(0)} | ${label} |`);
    }
  }
  return lines.join('\n');
}
