/**
 * The generated README's "Endpoints" table and the route comments of each `routes.ts` tell the
 * truth about the service: booted, the service serves exactly the data routes the README lists
 * (`OPTIONS` allows the method and the request is neither refused with 403 nor 405), answers every
 * other method of those paths with 403 or 405, and each `routes.ts` comment names the route that
 * follows it. `shop-rest` matters most: its REST configuration switches methods off. Requests
 * carry an API key with the `admin` role, so that access rules (fixture `access`) let everything
 * through that the REST configuration allows.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Authenticator, type ServiceDefinition } from '@entity-gen/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, OUTPUT } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

/** The methods of a data path (HEAD follows GET and is left out of the README). */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A route as the README and the comments write it: `GET /data/product/{id}`. */
interface Route {
  readonly method: string;
  readonly path: string;
  /** What the route does, as the README's "Does" column says it. */
  readonly does: string;
}

const API_KEY = 'readme-routes-admin-key';
/** The caller of every request: `admin` may call every method of the `access` fixture. */
const ADMIN = new Authenticator({
  apiKeys: [
    { name: 'admin', sha256: createHash('sha256').update(API_KEY).digest(), roles: ['admin'] },
  ],
});
const headers = { 'X-API-Key': API_KEY };

const key = (route: Pick<Route, 'method' | 'path'>): string => `${route.method} ${route.path}`;

/** Whether a path is one of an entity's data routes (not /health, /summary or /entity). */
const isDataPath = (path: string): boolean =>
  path.startsWith('/data/') || /^\/entity\/[^/]+\/recordCounts$/.test(path);

/** The data routes of the README's "Endpoints" table, in its order. */
function readmeRoutes(readme: string): Route[] {
  const section = /^## Endpoints\n([\s\S]*?)(?=^## )/m.exec(readme);
  if (section === null) throw new Error('the README has no "## Endpoints" section');
  const routes: Route[] = [];
  for (const line of section[1]!.split('\n')) {
    const cells = /^\| (.+?) \| (.+) \|$/.exec(line);
    if (cells === null) continue;
    for (const [, method, path] of cells[1]!.matchAll(/`([A-Z]+) (\/[^`]*)`/g)) {
      if (isDataPath(path!)) routes.push({ method: method!, path: path!, does: cells[2]! });
    }
  }
  return routes;
}

/**
 * The routes of a `routes.ts` from the comment before each `router.<method>(…)` call, checking
 * that the comment names that call's method and path (`'/'` the collection, `'/*id'` a record).
 */
function commentedRoutes(file: string, text: string): { routes: Route[]; problems: string[] } {
  const lines = text.split('\n');
  const routes: Route[] = [];
  const problems: string[] = [];
  lines.forEach((line, index) => {
    const call = /^\s*router\.(get|post|put|patch|delete)\(\s*'([^']*)'/.exec(line);
    if (call === null) return;
    const comment = /^\s*\/\/ ([A-Z]+) (\/\S*): (.+)\.$/.exec(lines[index - 1] ?? '');
    if (comment === null) {
      problems.push(`${file}:${index + 1}: router.${call[1]} has no route comment before it`);
      return;
    }
    const [, method, path, summary] = comment as unknown as [string, string, string, string];
    const record = path.split('/').length > 3;
    if (method !== call[1]!.toUpperCase() || (call[2] !== '/') !== record)
      problems.push(
        `${file}:${index}: "${method} ${path}" describes router.${call[1]}('${call[2]}')`,
      );
    routes.push({ method, path, does: summary.charAt(0).toUpperCase() + summary.slice(1) });
  });
  return { routes, problems };
}

describe.each(FIXTURES)('README and routes.ts of fixture $name', (fixture) => {
  const folder = `readme-routes-${fixture.name}`;
  const dir = join(OUTPUT, folder);
  let service: BootedService;
  let definition: ServiceDefinition;

  beforeAll(async () => {
    service = await bootFixture(fixture.name, { folder, auth: ADMIN });
    // Already loaded by bootFixture: the same module, for the entities' names and record ids.
    ({ service: definition } = (await import(
      pathToFileURL(join(dir, 'src', 'service.ts')).href
    )) as { service: ServiceDefinition });
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Every data route of every entity with any method, and the served ones as the README says. */
  async function probeAll(listed: readonly Route[]): Promise<{
    served: string[];
    problems: string[];
  }> {
    const served: string[] = [];
    const problems: string[] = [];
    for (const routes of definition.entities) {
      const entity = routes.definition.name.toLowerCase();
      const collection = `/data/${entity}`;
      // The README writes `{id}` for a record, or the single record's fixed id.
      const record = `${collection}/${routes.definition.singleRecordId ?? '{id}'}`;
      // An entity with softDelete restores at `<record>/restore` (POST).
      const restore =
        routes.definition.table.softDelete === true
          ? [{ method: 'POST', path: `${record}/restore` }]
          : [];
      // An entity with history lists the versions of a record at `<record>/history` (GET).
      const history =
        routes.definition.table.history === true
          ? [{ method: 'GET', path: `${record}/history` }]
          : [];
      const candidates = [
        ...[collection, record].flatMap((path) => METHODS.map((method) => ({ method, path }))),
        ...restore,
        ...history,
        { method: 'GET', path: `/entity/${entity}/recordCounts` },
      ];
      for (const candidate of candidates) {
        const path = candidate.path.replace('{id}', 'readme-check');
        const options = await service.request('OPTIONS', path, { headers });
        const allowed = (options.headers.get('allow') ?? '')
          .split(',')
          .map((method) => method.trim())
          .includes(candidate.method);
        const hasBody = ['POST', 'PUT', 'PATCH'].includes(candidate.method);
        const response = await service.request(
          candidate.method,
          path,
          hasBody ? { body: { data: {} }, headers } : { headers },
        );
        // PUT and PATCH that would create an absent record need NEW as well: a 403 naming NEW
        // refuses the creation, not the route (the REST configuration may switch NEW off).
        const refusedCreate =
          response.status === 403 &&
          (candidate.method === 'PUT' || candidate.method === 'PATCH') &&
          /Method NEW not allowed/.test(response.text);
        const refused = (response.status === 403 && !refusedCreate) || response.status === 405;
        const shown = `${key(candidate)} (OPTIONS allows ${options.headers.get('allow')}; the request answered ${response.status} ${response.text})`;
        if (listed.some((route) => key(route) === key(candidate))) {
          if (!allowed || refused) problems.push(`listed but not served: ${shown}`);
        } else if (allowed || !refused) {
          problems.push(`served but not listed: ${shown}`);
        }
        if (allowed && !refused) served.push(key(candidate));
      }
    }
    return { served, problems };
  }

  it('README lists exactly the data routes the service serves; every other method is 403 or 405', async () => {
    const listed = readmeRoutes(await readFile(join(dir, 'README.md'), 'utf8'));
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed.map(key)).size, 'a route listed twice').toBe(listed.length);
    const { served, problems } = await probeAll(listed);
    expect(problems).toEqual([]);
    expect([...served].sort()).toEqual(listed.map(key).sort());
  });

  it('routes.ts comments name the route that follows and agree with the README', async () => {
    const listed = readmeRoutes(await readFile(join(dir, 'README.md'), 'utf8'));
    const entities = join(dir, 'src', 'entities');
    const commented: Route[] = [];
    const problems: string[] = [];
    for (const name of (await readdir(entities)).sort()) {
      const file = join('src', 'entities', name, 'routes.ts');
      const found = commentedRoutes(file, await readFile(join(dir, file), 'utf8'));
      commented.push(...found.routes);
      problems.push(...found.problems);
    }
    expect(problems).toEqual([]);
    // recordCounts is served by the service itself, not by an entity's router.
    const fromRouters = listed.filter((route) => route.path.startsWith('/data/'));
    const byKey = (a: Route, b: Route): number => key(a).localeCompare(key(b));
    expect([...commented].sort(byKey)).toEqual([...fromRouters].sort(byKey));
  });
});
