/**
 * Property: every valid schema, REST configuration and access file generates a service that
 * compiles under its own tsconfig and answers every method of every route with the status the
 * configuration and the access rules predict — never a 500.
 *
 * Each run draws a fresh seed (printed at the start and in every failure); `PROPERTY_SEED=<n>`
 * replays a run, `PROPERTY_RUNS=<n>` changes how many services it generates (default 6). The
 * schemas are random: 1–6 entities, every field type (nested OBJECT, ARRAY and DICTIONARY
 * included), simple and composite keys, single-record entities, references, field and composite
 * indexes; each comes with a random REST configuration (allowed methods from none to all, list
 * strategies, windows, orders) and, half of the time, random access rules. All services of a run
 * are type-checked by one `tsc`, then each is booted on SQLite and asked every method of its
 * routes as an anonymous caller, an editor and an admin.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger, EventHub } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../cli/generate/index.js';
import { EMPTY_OUTPUT, planChanges, planOutput } from '../../cli/plan/index.js';
import { applyChanges } from '../../cli/run/write.js';
import { OUTPUT, ROOT } from '../helpers/generate.js';
import { serve, type TestServer } from '../helpers/http.js';
import { loadGenerated } from '../helpers/service.js';
import { suiteAuthenticator, token } from './suites/access.js';

const run = promisify(execFile);

const SEED = Number(process.env['PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 6);
const FOLDER = join(OUTPUT, 'property');

// ---------------------------------------------------------------------------------------------
// What is generated: a schema, a REST configuration, an access file.

const REST_METHODS = ['GET_LIST', 'GET_BYID', 'NEW', 'UPDATE', 'DELETE'] as const;
type RestMethod = (typeof REST_METHODS)[number];

const SCALAR_TYPES = ['STRING', 'INTEGER', 'DOUBLE', 'DECIMAL', 'BOOL', 'DATE', 'DATE_TIME'];
const OTHER_TYPES = ['ENUM', 'SELECT', 'OBJECT', 'ARRAY', 'DICTIONARY', 'B64_IMAGE', 'ANY'];
const KEY_TYPES = ['STRING', 'INTEGER', 'DATE', 'ENUM', 'SELECT', 'BOOL', 'ENTITY_REF'];
/** Types whose fields may carry `index: true` and be ordered by. */
const ORDERABLE = new Set(['STRING', 'INTEGER', 'DOUBLE', 'DECIMAL', 'DATE', 'DATE_TIME', 'ENUM']);
const ENTITY_NAMES = ['ITEM', 'ORDER_LINE', 'CATEGORY', 'NOTE', 'PERSON', 'AUDIT_LOG', 'TAG'];
const ROLES = ['public', 'authenticated', 'editor', 'admin'] as const;

type Json = Record<string, unknown>;

interface EntitySpec {
  readonly name: string;
  readonly single: boolean;
  readonly fields: readonly Json[];
  readonly lk: readonly string[];
  readonly indexes: readonly (readonly string[])[];
  readonly rest: {
    readonly allowedMethods: readonly RestMethod[];
    readonly startLimit: boolean;
    readonly defaultLimit?: number;
    readonly maxWindow?: number;
    readonly defaultOrder?: readonly string[];
  };
  /** The roles of each method when the case has access rules. */
  readonly access?: Readonly<Record<RestMethod, readonly (typeof ROLES)[number][]>>;
}

interface Case {
  readonly entities: readonly EntitySpec[];
  readonly withAccess: boolean;
}

/** A field of `type` named `name`, with the type's own key filled in. */
function fieldArbitrary(
  name: string,
  type: string,
  targets: readonly string[],
  depth: number,
): fc.Arbitrary<Json> {
  const base = { name, type };
  const inner = (count: number): fc.Arbitrary<Json[]> =>
    fc
      .array(fc.constantFrom(...SCALAR_TYPES, ...(depth < 1 ? ['OBJECT', 'ARRAY'] : [])), {
        minLength: 1,
        maxLength: count,
      })
      .chain((types) =>
        fc.tuple(
          ...types.map((inner, index) =>
            fieldArbitrary(`${inner.toLowerCase()}${index}`, inner, targets, depth + 1).chain(
              (field) => fc.boolean().map((required) => ({ ...field, required })),
            ),
          ),
        ),
      );
  switch (type) {
    case 'ENUM':
      return fc.constant({ ...base, enums: ['NEW', 'Open', 'closed'] });
    case 'SELECT':
      return fc.constant({
        ...base,
        select: { elems: [{ value: 'small', displayName: 'Small' }, { value: 'large' }] },
      });
    case 'ENTITY_REF':
      return fc.constantFrom(...targets).map((entity) => ({ ...base, entityRef: { entity } }));
    case 'OBJECT':
      return inner(3).map((fields) => ({ ...base, object: { fields } }));
    case 'DICTIONARY':
      return inner(2).map((fields) => ({ ...base, dict: { fields } }));
    case 'ARRAY':
      return fc
        .constantFrom(
          ...SCALAR_TYPES,
          'ENUM',
          ...(targets.length > 0 ? ['ENTITY_REF'] : []),
          ...(depth < 1 ? ['OBJECT', 'ARRAY'] : []),
        )
        .chain((element) => fieldArbitrary('element', element, targets, depth + 1))
        .map(({ name: _name, ...element }) => ({ ...base, array: element }));
    default:
      return fc.constant(base);
  }
}

/** One entity of a case; `targets` are the entity names a reference may name. */
function entityArbitrary(name: string, targets: readonly string[]): fc.Arbitrary<EntitySpec> {
  const keyTypes = KEY_TYPES.filter((type) => type !== 'ENTITY_REF' || targets.length > 0);
  const otherTypes = [
    ...SCALAR_TYPES,
    ...OTHER_TYPES,
    'GEOHASH_LOCATION',
    ...(targets.length > 0 ? ['ENTITY_REF'] : []),
  ];
  return fc
    .record({
      // One entity in five holds a single record.
      single: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      keyTypes: fc.array(fc.constantFrom(...keyTypes), { minLength: 1, maxLength: 3 }),
      otherTypes: fc.array(fc.constantFrom(...otherTypes), { minLength: 0, maxLength: 6 }),
    })
    .chain(({ single, keyTypes: keys, otherTypes: drawn }) => {
      const keyFields = single ? [] : keys;
      // An entity declares at least one field (EMPTY_FIELDS).
      const others = single && drawn.length === 0 ? ['STRING'] : drawn;
      const fieldArbitraries: fc.Arbitrary<Json>[] = [
        ...keyFields.map((type, index) =>
          fieldArbitrary(`key${index}`, type, targets, 0).map(
            (field): Json => ({
              ...field,
              required: true,
            }),
          ),
        ),
        ...others.map((type, index) =>
          fieldArbitrary(`${type.toLowerCase().replace('_', '')}${index}`, type, targets, 0).chain(
            (field) =>
              fc.record({ required: fc.boolean(), index: fc.boolean() }).map(
                (flags): Json => ({
                  ...field,
                  ...(flags.required ? { required: true } : {}),
                  ...(flags.index && ORDERABLE.has(type) ? { index: true } : {}),
                }),
              ),
          ),
        ),
      ];
      return fc.tuple(...fieldArbitraries).chain((fields) => {
        const orderable = fields
          .filter((field) => ORDERABLE.has(String(field['type'])))
          .map((field) => String(field['name']));
        return fc
          .record({
            allowedMethods: fc.subarray([...REST_METHODS]),
            startLimit: fc.boolean(),
            defaultLimit: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
            maxWindow: fc.option(fc.integer({ min: 50, max: 500 }), { nil: undefined }),
            defaultOrder:
              orderable.length === 0
                ? fc.constant(undefined)
                : fc.option(fc.subarray(orderable, { minLength: 1 }), { nil: undefined }),
            index:
              orderable.length < 2
                ? fc.constant(undefined)
                : fc.option(fc.subarray(orderable, { minLength: 2 }), { nil: undefined }),
            access: fc.record(
              Object.fromEntries(
                REST_METHODS.map((method) => [
                  method,
                  fc.subarray([...ROLES], { minLength: 1, maxLength: 2 }),
                ]),
              ) as Record<RestMethod, fc.Arbitrary<(typeof ROLES)[number][]>>,
            ),
          })
          .map(
            (rest): EntitySpec => ({
              name,
              single,
              fields,
              lk: keyFields.map((_, index) => `key${index}`),
              indexes: rest.index === undefined ? [] : [rest.index],
              rest: {
                allowedMethods: rest.allowedMethods,
                startLimit: rest.startLimit,
                ...(rest.startLimit && rest.defaultLimit !== undefined
                  ? { defaultLimit: rest.defaultLimit }
                  : {}),
                ...(rest.startLimit && rest.maxWindow !== undefined
                  ? { maxWindow: rest.maxWindow }
                  : {}),
                ...(rest.defaultOrder === undefined ? {} : { defaultOrder: rest.defaultOrder }),
              },
              access: rest.access,
            }),
          );
      });
    });
}

const caseArbitrary: fc.Arbitrary<Case> = fc
  .shuffledSubarray(ENTITY_NAMES, { minLength: 1, maxLength: 6 })
  .chain((names) =>
    fc.record({
      entities: fc.tuple(...names.map((name) => entityArbitrary(name, names))),
      withAccess: fc.boolean(),
    }),
  );

/** The schema file of a case (JSON, one ENTITY document per entity). */
function schemaText(spec: Case): string {
  return JSON.stringify(
    spec.entities.map((entity) => ({
      type: 'ENTITY',
      entity: {
        name: entity.name,
        ...(entity.single ? { singleRecord: true } : { lk: entity.lk }),
        ...(entity.indexes.length > 0 ? { indexes: entity.indexes } : {}),
        fields: entity.fields,
      },
    })),
    null,
    2,
  );
}

/** The REST configuration file of a case (YAML documents written as JSON, which YAML reads). */
function restConfigText(spec: Case): string {
  return spec.entities
    .map((entity) =>
      JSON.stringify({
        type: 'ENTITY',
        entity: entity.name,
        config: {
          allowedMethods: entity.rest.allowedMethods,
          getListStrategy: entity.rest.startLimit ? 'START_LIMIT' : 'ALL',
          ...(entity.rest.defaultLimit === undefined
            ? {}
            : { defaultLimit: entity.rest.defaultLimit }),
          ...(entity.rest.maxWindow === undefined ? {} : { maxWindow: entity.rest.maxWindow }),
          ...(entity.rest.defaultOrder === undefined
            ? {}
            : { defaultOrder: entity.rest.defaultOrder }),
        },
      }),
    )
    .join('\n---\n');
}

function accessText(spec: Case): string {
  return JSON.stringify({
    entities: Object.fromEntries(spec.entities.map((entity) => [entity.name, entity.access])),
  });
}

// ---------------------------------------------------------------------------------------------
// What the service must answer.

type Caller = 'anonymous' | 'editor' | 'admin';
const CALLERS: readonly Caller[] = ['anonymous', 'editor', 'admin'];
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** What a request must get: one status (and reason) or, for an operation, a set of statuses. */
type Prediction =
  | { readonly status: number; readonly reason?: string }
  | { readonly oneOf: readonly number[] };

/** The REST method a request calls. */
function restMethodOf(method: string, record: boolean): RestMethod {
  if (method === 'POST') return 'NEW';
  if (method === 'PUT' || method === 'PATCH') return 'UPDATE';
  if (method === 'DELETE') return 'DELETE';
  return record ? 'GET_BYID' : 'GET_LIST';
}

/** The methods the routes of a path have, whatever the configuration says. */
function routeMethods(entity: EntitySpec, record: boolean): readonly string[] {
  if (!record) return entity.single ? ['GET', 'HEAD'] : ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];
  return entity.single
    ? ['GET', 'HEAD', 'PUT', 'PATCH']
    : ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'];
}

/** The refusal of the access rules for `caller`, if any. */
function accessRefusal(
  spec: Case,
  entity: EntitySpec,
  method: RestMethod,
  caller: Caller,
): Prediction | undefined {
  if (!spec.withAccess || entity.access === undefined) return undefined;
  const roles = entity.access[method];
  if (roles.includes('public')) return undefined;
  if (caller === 'anonymous') return { status: 401, reason: 'Authentication required' };
  if (roles.includes('authenticated') || roles.includes(caller)) return undefined;
  return { status: 403, reason: `Role required for ${method} on Entity ${entity.name}` };
}

/** What `method` on the collection (`record` false) or a record path must answer. */
function predict(
  spec: Case,
  entity: EntitySpec,
  method: string,
  record: boolean,
  caller: Caller,
  stored: boolean,
): Prediction {
  if (!routeMethods(entity, record).includes(method)) return { status: 405 };
  const rest = restMethodOf(method, record);
  const refused = accessRefusal(spec, entity, rest, caller);
  if (refused !== undefined) return refused;
  if (!entity.rest.allowedMethods.includes(rest))
    return { status: 403, reason: `Method ${rest} not allowed for Entity ${entity.name}` };
  switch (method) {
    case 'GET':
    case 'HEAD':
      // The record is there once a PUT or PATCH created it; otherwise absent, or its id is
      // malformed for the key (400).
      return !record || stored ? { status: 200 } : { oneOf: [400, 404] };
    case 'POST':
      // `{}` lacks the key fields, which are required.
      return { status: 400 };
    case 'DELETE':
      // On the collection: a change by filter without a filter (400).
      if (!record) return { status: 400, reason: 'A filter is required to change several records' };
      return stored ? { status: 200 } : { oneOf: [400, 404] };
    default: {
      if (!record) return { status: 400, reason: 'A filter is required to change several records' };
      // PUT and PATCH create an absent record: that may be refused (NEW), invalid or done. An
      // anonymous caller whom the access rules refuse NEW gets 401, as for POST.
      const refusedNew = stored ? undefined : accessRefusal(spec, entity, 'NEW', caller);
      return {
        oneOf:
          refusedNew && 'status' in refusedNew && refusedNew.status === 401
            ? [200, 400, 401, 403, 404]
            : [200, 400, 403, 404],
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

const cases = fc.sample(caseArbitrary, { seed: SEED, numRuns: RUNS });
const replay = `replay with PROPERTY_SEED=${SEED} PROPERTY_RUNS=${RUNS}`;

/** Writes every case's service into `test/output/property/case-<n>`. */
async function generateCases(): Promise<string[]> {
  await rm(FOLDER, { recursive: true, force: true });
  const dirs: string[] = [];
  for (const [index, spec] of cases.entries()) {
    const schema = { file: 'schema.json', text: schemaText(spec) };
    const restConfig = { file: 'restconfig.yaml', text: restConfigText(spec) };
    const access = spec.withAccess
      ? { access: { file: 'access.json', text: accessText(spec) } }
      : {};
    const result = await generate({
      sources: [schema],
      options: { schemaFiles: [schema.file], outputDir: `case-${index}` },
      restConfig,
      ...access,
    });
    if (result.diagnostics.length > 0 || result.model === undefined) {
      throw new Error(
        `case ${index} (${replay}) does not generate:\n${JSON.stringify(result.diagnostics, null, 2)}\n` +
          `schema:\n${schema.text}\nrest config:\n${restConfig.text}`,
      );
    }
    const dir = join(FOLDER, `case-${index}`);
    await mkdir(dir, { recursive: true });
    await applyChanges(dir, planChanges(planOutput(result, EMPTY_OUTPUT, { force: false })));
    await writeFile(join(dir, 'schema.json'), schema.text);
    await writeFile(join(dir, 'restconfig.yaml'), restConfig.text);
    if (spec.withAccess) await writeFile(join(dir, 'access.json'), accessText(spec));
    dirs.push(dir);
  }
  return dirs;
}

/** Type-checks every case with one `tsc` under the compiler options of the services' tsconfig. */
async function typecheck(dirs: readonly string[]): Promise<void> {
  const own = JSON.parse(
    (await readFile(join(dirs[0]!, 'tsconfig.json'), 'utf8')).replace(/^\/\/.*$/gm, ''),
  ) as { compilerOptions: Json };
  // One program over every case: no rootDir/outDir of a single service.
  const compilerOptions = Object.fromEntries(
    Object.entries(own.compilerOptions).filter(([name]) => name !== 'rootDir' && name !== 'outDir'),
  );
  await writeFile(
    join(FOLDER, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { ...compilerOptions, noEmit: true },
      include: dirs.map((dir) => `${dir.slice(FOLDER.length + 1)}/src`),
    }),
  );
  try {
    await run(process.execPath, [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(FOLDER, 'tsconfig.json'),
    ]);
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    throw new Error(
      `generated services do not compile (${replay}):\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
    );
  }
}

describe(`generated services of random schemas and configurations (seed ${SEED})`, () => {
  let dirs: string[] = [];
  beforeAll(async () => {
    console.log(`property test of generated services: seed ${SEED}, ${RUNS} services (${replay})`);
    dirs = await generateCases();
  }, 600_000);
  afterAll(async () => {
    await rm(FOLDER, { recursive: true, force: true });
  });

  it('every service compiles with tsc under its own compiler options', async () => {
    await typecheck(dirs);
  }, 600_000);

  it.each(cases.map((spec, index) => ({ spec, index })))(
    'service $index answers every method of every route as its configuration predicts',
    async ({ spec, index }) => {
      const { createApp, tables } = await loadGenerated(dirs[index]!);
      const driver = new SqliteDriver({ filename: ':memory:' });
      await driver.open(tables);
      const logger = createLogger({ level: 'silent' });
      const events = new EventHub(driver, { settings: {}, logger });
      const app = createApp({
        driver,
        logger,
        events,
        ...(spec.withAccess ? { auth: suiteAuthenticator() } : {}),
      });
      const server: TestServer = await serve(app.callback());
      const headers: Record<Caller, Record<string, string>> = {
        anonymous: {},
        editor: { authorization: `Bearer ${await token('ed', ['editor'])}` },
        admin: { authorization: `Bearer ${await token('ad', ['admin'])}` },
      };
      /** The record paths a PUT or PATCH created. */
      const stored = new Set<string>();
      try {
        for (const entity of spec.entities) {
          const base = `/data/${entity.name.toLowerCase()}`;
          const paths = [
            { path: base, record: false },
            { path: `${base}/${entity.single ? '_singlerec_lk' : 'x'}`, record: true },
          ];
          for (const caller of spec.withAccess ? CALLERS : (['admin'] as const)) {
            for (const { path, record } of paths) {
              for (const method of HTTP_METHODS) {
                const response = await server.request(method, path, {
                  headers: headers[caller],
                  ...(method === 'POST' || method === 'PUT' || method === 'PATCH'
                    ? { body: { data: {} } }
                    : {}),
                });
                const want = predict(spec, entity, method, record, caller, stored.has(path));
                if (response.status === 200 && (method === 'PUT' || method === 'PATCH'))
                  stored.add(path);
                if (response.status === 200 && method === 'DELETE') stored.delete(path);
                const what = `${caller} ${method} ${path} of service ${index} (${replay}): ${response.status} ${response.text}`;
                if ('oneOf' in want) expect(want.oneOf, what).toContain(response.status);
                else {
                  expect(response.status, what).toBe(want.status);
                  if (want.reason !== undefined && method !== 'HEAD')
                    expect(response.body?.error?.reason, what).toBe(want.reason);
                }
              }
              const options = await server.request('OPTIONS', path, { headers: headers[caller] });
              const allow = routeMethods(entity, record).filter((method) =>
                entity.rest.allowedMethods.includes(restMethodOf(method, record)),
              );
              const what = `${caller} OPTIONS ${path} of service ${index} (${replay})`;
              expect(options.status, what).toBe(200);
              expect(options.body, what).toEqual({ status: 'success', data: { allow } });
            }
            const counts = await server.request(
              'GET',
              `/entity/${entity.name.toLowerCase()}/recordCounts`,
              { headers: headers[caller] },
            );
            const want = predict(spec, entity, 'GET', false, caller, false);
            const what = `${caller} recordCounts of ${entity.name}, service ${index} (${replay}): ${counts.text}`;
            if ('status' in want) {
              expect(counts.status, what).toBe(want.status);
              if (want.reason !== undefined)
                expect(counts.body?.error?.reason, what).toBe(want.reason);
            }
          }
        }
      } finally {
        await server.close();
        await events.close();
        await driver.close();
      }
    },
  );
});
