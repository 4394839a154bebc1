// The Platformatic DB baseline (bench/baselines/platformatic): its on-demand install and the
// requests of the peer comparison on both services. Platformatic DB is not a dependency of the
// repository: its folder has its own package.json and lock file and is installed here, with
// `npm ci --prefix bench/baselines/platformatic`, once per lock file (a stamp in its node_modules).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { peerRecord } from './data.mjs';
import { randomInt, ROOT } from './setup.mjs';
import { runCommand } from './servers.mjs';

export const PLATFORMATIC_DIR = join(ROOT, 'bench', 'baselines', 'platformatic');
export const PLATFORMATIC_SERVER = join(PLATFORMATIC_DIR, 'server.mjs');

/** The pinned version, from the baseline's package.json. */
export function platformaticVersion() {
  const manifest = JSON.parse(readFileSync(join(PLATFORMATIC_DIR, 'package.json'), 'utf8'));
  return manifest.dependencies['@platformatic/db'];
}

/**
 * Installs the baseline's dependencies from its lock file unless the installed copy matches the
 * lock file already. Tries twice (a registry hiccup should not fail a CI run); npm's own cache
 * makes the second and later installs offline-fast. Returns 'cached' or 'installed'.
 */
export async function ensurePlatformatic({ log = () => undefined } = {}) {
  const lock = readFileSync(join(PLATFORMATIC_DIR, 'package-lock.json'));
  const stamp = createHash('sha256').update(lock).digest('hex');
  const stampFile = join(PLATFORMATIC_DIR, 'node_modules', '.bench-stamp');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return 'cached';
  const prefix = relative(ROOT, PLATFORMATIC_DIR);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['ci', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline'];
  let last;
  for (let attempt = 1; attempt <= 2; attempt++) {
    log(
      `installing Platformatic DB ${platformaticVersion()} for the baseline: npm ${args.join(' ')} (once; not part of the root npm ci)`,
    );
    last = await runCommand(npm, args, { cwd: ROOT, timeoutMs: 600_000 });
    if (last.code === 0) {
      writeFileSync(stampFile, stamp);
      return 'installed';
    }
    log(
      `npm ci of the Platformatic baseline failed (attempt ${attempt}): ${last.stderr.slice(-500)}`,
    );
  }
  throw new Error(`npm ${args.join(' ')} failed:\n${last.stdout}\n${last.stderr}`);
}

const GRAPHQL_HEADERS = { 'content-type': 'application/json' };
const INSERT_MUTATION =
  'mutation ($inputs: [ItemInput]!) { insertItems(inputs: $inputs) { id name qty price available } }';
const COUNT_QUERY = '{ countItems(where: { available: { eq: true } }) { total } }';

/** The bulk request of each service: the path and body that insert `records` in one request. */
export function bulkRequest(server, records) {
  if (server.id === 'plt')
    return {
      path: '/graphql',
      body: JSON.stringify({ query: INSERT_MUTATION, variables: { inputs: records } }),
    };
  return { path: '/data/item', body: JSON.stringify({ data: records }) };
}

/** An error of a bulk answer that came with status 200 (GraphQL reports errors in the body). */
export function bulkAnswerError(server, text) {
  if (server.id !== 'plt') return undefined;
  const body = JSON.parse(text);
  if (body.errors !== undefined) return JSON.stringify(body.errors).slice(0, 500);
  return undefined;
}

let unique = 0;

/**
 * The operations of the comparison as autocannon requests; `request(tag, server)` gives each
 * service its own URL for the same work.
 */
export function peerOperations(seedCount, makeRecord) {
  const key = () => `P${String(randomInt(seedCount)).padStart(6, '0')}`;
  return {
    get: {
      label: 'GET by key (random key)',
      request: (_tag, server) => ({
        method: 'GET',
        setupRequest: (req) => ({
          ...req,
          path: server.id === 'plt' ? `/items/${key()}` : `/data/item/${key()}`,
        }),
      }),
    },
    list: {
      label: 'GET page of 100 (available=true, -price)',
      request: (_tag, server) => ({
        method: 'GET',
        path:
          server.id === 'plt'
            ? '/items?where.available.eq=true&orderby.price=desc&limit=100'
            : '/data/item?available=true&orderBy=-price&limit=100',
      }),
    },
    count: {
      label: 'count with a filter (available=true)',
      request: (_tag, server) =>
        server.id === 'plt'
          ? {
              method: 'POST',
              path: '/graphql',
              headers: GRAPHQL_HEADERS,
              body: JSON.stringify({ query: COUNT_QUERY }),
            }
          : { method: 'GET', path: '/entity/item/recordCounts?available=true' },
    },
    post: {
      label: 'POST one',
      request: (tag, server) => ({
        method: 'POST',
        path: server.id === 'plt' ? '/items' : '/data/item',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const n = unique++;
          const record = makeRecord(`N${tag}${n}`, n);
          return {
            ...req,
            body: JSON.stringify(server.id === 'plt' ? record : { data: record }),
          };
        },
      }),
    },
  };
}

/** The seeded key of row `n` (both services hold the same rows). */
export function peerKey(n) {
  return `P${String(n).padStart(6, '0')}`;
}

/** The `count` seeded rows (`peerRecord` of `peerKey(n)`), in arrays of at most `batch` records. */
export function* peerBatches(count, batch) {
  for (let from = 0; from < count; from += batch) {
    const records = [];
    for (let n = from; n < Math.min(count, from + batch); n++)
      records.push(peerRecord(peerKey(n), n));
    yield records;
  }
}
