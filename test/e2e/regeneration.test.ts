/**
 * The regeneration lifecycle end to end: a service holding data goes through a scripted history
 * of schema changes (every kind the migrations planner handles, including a field rename, an
 * entity rename and refused lossy changes). After each step the service is regenerated with
 * `generate()`, the migration is planned from the previous generation's schema snapshot (what
 * the manifest records), the new service boots on the SAME database, and every record stored so
 * far must read back in its new shape. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL
 * is set.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createLogger,
  isMigrationError,
  loadMigrations,
  startServer,
  type StorageDriver,
} from '@entity-gen/runtime';
import { PostgresDriver } from '@entity-gen/runtime/postgres';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { generate } from '../../cli/generate/index.js';
import { buildModel } from '../../cli/model/build.js';
import { main } from '../../cli/program.js';
import { planMigrations } from '../../cli/migrate/index.js';
import { tableDescriptor } from '../../cli/migrate/tables.js';
import type { SchemaModel } from '../../cli/model/types.js';
import type { JsonValue } from '../../cli/schema/types.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { OUTPUT, ROOT } from '../helpers/generate.js';
import { serve, type JsonResponse, type TestServer } from '../helpers/http.js';
import { loadGenerated } from '../helpers/service.js';

const execFileAsync = promisify(execFile);

type Row = Record<string, unknown>;
/** What GET /data/<entity>/<id> must answer, by entity (upper case) and id. */
type Expected = Map<string, Map<string, Row>>;

interface Step {
  readonly name: string;
  readonly schema: string;
  readonly allowDataLoss?: boolean;
  /** The change is refused: these diagnostics, nothing generated, the service stays as it was. */
  readonly refused?: readonly string[];
  /** Whether this step writes a migration (false: the change needs no storage change). */
  readonly migrates: boolean;
  /** How the records stored so far look after this step. */
  readonly reshape?: (expected: Expected) => void;
  /** Records to insert after booting, by entity; they are expected as given. */
  readonly insert?: Readonly<Record<string, readonly Row[]>>;
}

const customer = (fields: string, name = 'CUSTOMER', extra = ''): string => `type: ENTITY
entity:
  name: ${name}
  ${extra}lk: [id]
  fields:
${fields}`;

const order = (fields: string, ref = 'CUSTOMER'): string => `type: ENTITY
entity:
  name: ORDER
  lk: [id]
  fields:
    - {name: id, type: INTEGER}
    - {name: customer, type: ENTITY_REF, entityRef: {entity: ${ref}}}
${fields}`;

const product = `type: ENTITY
entity:
  name: PRODUCT
  lk: [sku]
  fields:
    - {name: sku, type: STRING}
    - {name: price, type: DECIMAL, required: true, index: true}`;

const docs = (...parts: string[]): string => `${parts.join('\n---\n')}\n`;

/** Renames a key in every record of an entity. */
const renameKey = (expected: Expected, entity: string, from: string, to: string): void => {
  for (const row of expected.get(entity)!.values()) {
    if (from in row) {
      row[to] = row[from];
      delete row[from];
    }
  }
};
const mapField = (
  expected: Expected,
  entity: string,
  field: string,
  fn: (value: unknown) => unknown,
): void => {
  for (const row of expected.get(entity)!.values()) {
    const value = fn(row[field]);
    if (value === undefined) delete row[field];
    else row[field] = value;
  }
};

// The schema at each step, written out in full as a user would edit it.
const C0 = `    - {name: id, type: STRING}
    - {name: name, type: STRING, required: true}
    - {name: age, type: INTEGER}
    - {name: legacy, type: STRING}
    - {name: since, type: DATE}`;
const O0 = `    - {name: total, type: DOUBLE}
    - {name: status, type: ENUM, enums: [NEW, PAID]}`;
const C2 = `${C0}\n    - {name: email, type: STRING, index: true}`;
const O3 = `${O0}\n    - {name: currency, type: STRING, required: true, default: EUR}`;
const C4 = C2.replace(
  '{name: name, type: STRING, required: true}',
  '{name: fullName, type: STRING, required: true, renamedFrom: name}',
);
const C5 = C4.replace('{name: age, type: INTEGER}', '{name: age, type: DOUBLE}');
const O6 = O3.replace('enums: [NEW, PAID]', 'enums: [NEW, PAID, SHIPPED]');
const O7 = O6.replace('{name: total, type: DOUBLE}', '{name: total, type: INTEGER}');
const O8 = O6.replace('{name: total, type: DOUBLE}', '{name: total, type: DECIMAL}');
const C9 = C5.replace(
  '{name: email, type: STRING, index: true}',
  '{name: email, type: STRING, index: true, required: true, default: unknown@example.com}',
);
const C11 = C9.replace('    - {name: legacy, type: STRING}\n', '');
const C12 = C11.replace('{name: since, type: DATE}', '{name: since, type: DATE_TIME}');
const O13 = O8.replace(
  '{name: status, type: ENUM, enums: [NEW, PAID, SHIPPED]}',
  '{name: status, type: STRING}',
);
const O14 = O13.replace(
  '{name: currency, type: STRING, required: true, default: EUR}',
  '{name: currency, type: STRING}',
);
const C16 = C12.replace('{name: age, type: DOUBLE}', '{name: age, type: STRING}');
const CLIENT = 'renamedFrom: CUSTOMER\n  ';

const STEPS: readonly Step[] = [
  {
    name: 'first generation',
    schema: docs(customer(C0), order(O0)),
    migrates: false,
    insert: {
      CUSTOMER: [
        { id: 'c1', name: 'Ann', age: 34, legacy: 'x', since: '2020-01-02' },
        { id: 'c2', name: 'Bob' },
      ],
      ORDER: [
        { id: 1, customer: 'c1', total: 19.5, status: 'NEW' },
        { id: 2, customer: 'c2', total: 5, status: 'PAID' },
      ],
    },
  },
  {
    name: 'add entity PRODUCT',
    schema: docs(customer(C0), order(O0), product),
    migrates: true,
    insert: { PRODUCT: [{ sku: 'p1', price: '9.99' }] },
  },
  {
    name: 'add optional field CUSTOMER.email (indexed)',
    schema: docs(customer(C2), order(O0), product),
    migrates: true,
    insert: { CUSTOMER: [{ id: 'c3', name: 'Cy', email: 'cy@example.com' }] },
  },
  {
    name: 'add required field ORDER.currency with a default',
    schema: docs(customer(C2), order(O3), product),
    migrates: true,
    reshape: (e) => mapField(e, 'ORDER', 'currency', () => 'EUR'),
    insert: { ORDER: [{ id: 3, customer: 'c3', total: 1.25, status: 'NEW', currency: 'USD' }] },
  },
  {
    name: 'rename field CUSTOMER.name to fullName',
    schema: docs(customer(C4), order(O3), product),
    migrates: true,
    reshape: (e) => renameKey(e, 'CUSTOMER', 'name', 'fullName'),
  },
  {
    name: 'convert CUSTOMER.age from INTEGER to DOUBLE',
    schema: docs(customer(C5), order(O3), product),
    migrates: true,
    insert: { CUSTOMER: [{ id: 'c4', fullName: 'Di', age: 41.5, email: 'di@example.com' }] },
  },
  {
    name: 'add an ENUM value (no storage change)',
    schema: docs(customer(C5), order(O6), product),
    migrates: false,
    insert: { ORDER: [{ id: 4, customer: 'c1', total: 7, status: 'SHIPPED', currency: 'EUR' }] },
  },
  {
    name: 'convert ORDER.total from DOUBLE to INTEGER: refused as lossy',
    schema: docs(customer(C5), order(O7), product),
    migrates: false,
    refused: ['MIGRATION_LOSSY_TYPE_CHANGE'],
  },
  {
    name: 'convert ORDER.total from DOUBLE to DECIMAL',
    schema: docs(customer(C5), order(O8), product),
    migrates: true,
    reshape: (e) => mapField(e, 'ORDER', 'total', (v) => (v === undefined ? v : String(v))),
  },
  {
    name: 'make CUSTOMER.email required with a default',
    schema: docs(customer(C9), order(O8), product),
    migrates: true,
    reshape: (e) => mapField(e, 'CUSTOMER', 'email', (v) => v ?? 'unknown@example.com'),
  },
  {
    name: 'rename entity CUSTOMER to CLIENT',
    schema: docs(customer(C9, 'CLIENT', CLIENT), order(O8, 'CLIENT'), product),
    migrates: true,
    reshape: (e) => {
      e.set('CLIENT', e.get('CUSTOMER')!);
      e.delete('CUSTOMER');
    },
    insert: { CLIENT: [{ id: 'c5', fullName: 'Eve', email: 'eve@example.com' }] },
  },
  {
    name: 'remove field CLIENT.legacy without --allow-data-loss: refused',
    schema: docs(customer(C11, 'CLIENT', CLIENT), order(O8, 'CLIENT'), product),
    migrates: false,
    refused: ['MIGRATION_REMOVES_FIELD'],
  },
  {
    name: 'remove field CLIENT.legacy with --allow-data-loss',
    schema: docs(customer(C11, 'CLIENT', CLIENT), order(O8, 'CLIENT'), product),
    allowDataLoss: true,
    migrates: true,
    reshape: (e) => mapField(e, 'CLIENT', 'legacy', () => undefined),
  },
  {
    name: 'convert CLIENT.since from DATE to DATE_TIME',
    schema: docs(customer(C12, 'CLIENT', CLIENT), order(O8, 'CLIENT'), product),
    migrates: true,
    reshape: (e) =>
      mapField(e, 'CLIENT', 'since', (v) => (v === undefined ? v : `${String(v)}T00:00:00.000Z`)),
  },
  {
    name: 'convert ORDER.status from ENUM to STRING (no storage change)',
    schema: docs(customer(C12, 'CLIENT', CLIENT), order(O13, 'CLIENT'), product),
    migrates: false,
    insert: { ORDER: [{ id: 5, customer: 'c5', total: '3.5', status: 'custom', currency: 'GBP' }] },
  },
  {
    name: 'make ORDER.currency optional',
    schema: docs(customer(C12, 'CLIENT', CLIENT), order(O14, 'CLIENT'), product),
    migrates: true,
    insert: { ORDER: [{ id: 6, customer: 'c5', total: '0.1' }] },
  },
  {
    name: 'remove entity PRODUCT with --allow-data-loss',
    schema: docs(customer(C12, 'CLIENT', CLIENT), order(O14, 'CLIENT')),
    allowDataLoss: true,
    migrates: true,
    reshape: (e) => e.delete('PRODUCT'),
  },
  {
    name: 'convert CLIENT.age from DOUBLE to STRING',
    schema: docs(customer(C16, 'CLIENT', CLIENT), order(O14, 'CLIENT')),
    migrates: true,
    reshape: (e) => mapField(e, 'CLIENT', 'age', (v) => (v === undefined ? v : String(v))),
  },
];

/** A database the services of all steps share. */
interface Target {
  readonly name: string;
  readonly databaseUrl: string;
  readonly driver: () => StorageDriver;
  readonly dialect: 'sqlite' | 'postgres';
}

const url = POSTGRES.value;
const pgSchemas: string[] = [];

/**
 * A fresh SQLite file and a fresh PostgreSQL schema, named by `tag` (the PostgreSQL groups are
 * skipped, and say why, when `TEST_DATABASE_URL` is not set).
 */
function makeTargets(tag: string): Target[] {
  const file = join(OUTPUT, `regeneration-${tag}-data`, `service-${process.pid}.db`);
  rmSync(dirname(file), { recursive: true, force: true });
  const schema = `eg_regen_${tag}_${process.pid}_${randomBytes(3).toString('hex')}`;
  if (POSTGRES.missing === undefined) pgSchemas.push(schema);
  return [
    {
      name: 'SQLite',
      databaseUrl: `sqlite:${file}`,
      driver: () => new SqliteDriver({ filename: file }),
      dialect: 'sqlite',
    },
    {
      name: 'PostgreSQL',
      databaseUrl: `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`,
      driver: () => new PostgresDriver({ url, env: {}, schema, poolMax: 2 }),
      dialect: 'postgres',
    },
  ];
}

/** `describe` for a target: the PostgreSQL groups are skipped without `TEST_DATABASE_URL`. */
const describeOn = (target: Target, title: string, factory: () => void): void => {
  if (target.dialect === 'postgres') describeWith(POSTGRES, title, factory);
  else describe(title, factory);
};

const targets = makeTargets('api');
const cliTargets = makeTargets('cli');

afterAll(async () => {
  if (pgSchemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of pgSchemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
});

/** The schema snapshot a manifest records: the ENTITY documents as written, by entity name. */
const snapshotOf = (model: SchemaModel): JsonValue[] => model.entities.map((e) => e.document);

for (const target of targets) {
  describeOn(target, `regeneration on ${target.name}`, () => {
    const base = join(OUTPUT, 'regeneration', target.dialect);
    /** Every migration file written so far: the service folder keeps them all. */
    const migrations = new Map<string, string>();
    const expected: Expected = new Map();
    let previous: SchemaModel | undefined;
    let lastGood = '';

    it(`runs ${STEPS.length} schema changes on a service holding data`, async () => {
      await rm(base, { recursive: true, force: true });
      for (const [index, step] of STEPS.entries()) {
        const label = `step ${index} (${step.name})`;
        const dir = join(base, `step-${String(index).padStart(2, '0')}`);
        const schemaFile = `schema-${index}.yaml`;
        const generated = await generate({
          sources: [{ file: schemaFile, text: step.schema }],
          options: { schemaFiles: [schemaFile], outputDir: dir, driver: 'both' },
        });
        expect(generated.diagnostics.map(formatDiagnostic), label).toEqual([]);
        // Positioned, as generate() builds it again when the migrations planner has a problem.
        const model = buildModel({ sources: [{ file: schemaFile, text: step.schema }] }, 'exact')
          .model!;
        const plan = planMigrations(
          previous === undefined ? undefined : snapshotOf(previous),
          model,
          {
            allowDataLoss: step.allowDataLoss ?? false,
            existingMigrations: [...migrations.keys()],
          },
        );
        if (step.refused !== undefined) {
          expect(
            plan.diagnostics.map((d) => d.code),
            label,
          ).toEqual(step.refused);
          expect(
            plan.diagnostics.every((d) => d.file === schemaFile && d.line > 1),
            label,
          ).toBe(true);
          expect(plan.files, label).toEqual([]);
          continue; // the user fixes the schema: the service stays at the last good step
        }
        expect(plan.diagnostics.map(formatDiagnostic), label).toEqual([]);
        expect(plan.files.length, label).toBe(step.migrates ? 2 : 0);
        for (const file of plan.files) {
          expect(migrations.has(file.path), `${label}: ${file.path} is new`).toBe(false);
          migrations.set(file.path, file.contents);
        }
        for (const file of generated.files) {
          if (file.path.startsWith('migrations/')) continue;
          await mkdir(dirname(join(dir, file.path)), { recursive: true });
          await writeFile(join(dir, file.path), file.contents);
        }
        for (const [path, contents] of migrations) {
          await mkdir(dirname(join(dir, path)), { recursive: true });
          await writeFile(join(dir, path), contents);
        }
        step.reshape?.(expected);
        // Migrations target the tables the generated definitions declare.
        const { tables } = await loadGenerated(dir);
        expect(tables, label).toEqual(model.entities.map(tableDescriptor));
        await bootAndCheck(dir, step, label, expected, target);
        previous = model;
        lastGood = dir;
      }
      expect(migrations.size).toBe(2 * STEPS.filter((step) => step.migrates).length);
    }, 180_000); // 18 generations and boots: about 10 s on an idle machine, far more under load

    it('starts the last service with startServer and its migrations folder', async () => {
      const { createApp, tables } = await loadGenerated(lastGood);
      const running = await startServer({
        createApp,
        tables,
        port: 0,
        host: '127.0.0.1',
        databaseUrl: target.databaseUrl,
        env: {},
        logLevel: 'silent',
        migrationsDir: join(lastGood, 'migrations'),
      });
      try {
        const address = running.server.address();
        const port = typeof address === 'object' && address !== null ? address.port : 0;
        const response = await fetch(`http://127.0.0.1:${port}/data/client/c1`);
        expect(response.status).toBe(200);
      } finally {
        await running.close();
      }
    });

    it('refuses to start an older service on the migrated database', async () => {
      const older = join(base, 'step-01');
      const { createApp, tables } = await loadGenerated(older);
      const error = await startServer({
        createApp,
        tables,
        port: 0,
        host: '127.0.0.1',
        databaseUrl: target.databaseUrl,
        env: {},
        logLevel: 'silent',
        migrationsDir: join(older, 'migrations'),
      }).then(
        async (running) => {
          await running.close();
          return undefined;
        },
        (failure: unknown) => failure,
      );
      expect(isMigrationError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /^The database is ahead of the code: it has migration\(s\) 0002_/,
      );
    });
  });
}

/** A user-written hooks file for ORDER: middleware on every ORDER route and an after-insert hook. */
const ORDER_HOOKS = `import type { EntityHooks } from '@entity-gen/runtime';
import type { Order } from '../entities/order/types.js';

export const orderHooks: EntityHooks<Order> = {
  middleware: [
    async (ctx, next) => {
      await next();
      ctx.set('X-Order-Hook', 'middleware');
    },
  ],
  afterInsert(record, ctx) {
    ctx.set('X-Order-Inserted', String(record.id));
  },
};
`;

/**
 * A user-written hooks file for CUSTOMER that reads the field the history renames (name →
 * fullName) of the entity it renames (CUSTOMER → CLIENT): the codemod carries it along.
 */
const CUSTOMER_HOOKS = `import type { EntityHooks } from '@entity-gen/runtime';
import type { Customer } from '../entities/customer/types.js';

export const customerHooks: EntityHooks<Customer> = {
  afterInsert(record, ctx) {
    ctx.set('X-Customer-Name', record.name);
  },
};
`;

/** Runs the CLI in this process (fast) with captured output; returns its exit code. */
async function runCli(
  args: readonly string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(
    args,
    {},
    {
      out: (text) => {
        out += text;
      },
      err: (text) => {
        err += text;
      },
    },
  );
  return { code, out, err };
}

for (const target of cliTargets) {
  describeOn(target, `regeneration through the CLI on ${target.name}`, () => {
    it(`walks the ${STEPS.length} steps on ONE service folder that holds a user hook`, async () => {
      const work = join(OUTPUT, 'regeneration-cli', target.dialect);
      await rm(work, { recursive: true, force: true });
      await mkdir(work, { recursive: true });
      const schemaFile = join(work, 'schema.yaml');
      const out = join(work, 'service');
      const hooksFile = join(out, 'src', 'hooks', 'order.ts');
      const expected: Expected = new Map();
      for (const [index, step] of STEPS.entries()) {
        const label = `step ${index} (${step.name})`;
        await writeFile(schemaFile, step.schema);
        const flags = step.allowDataLoss === true ? ['--allow-data-loss'] : [];
        // The first step names the schema; every later one repeats the remembered invocation.
        const schemaArgs = index === 0 ? [schemaFile] : [];
        const generated = await runCli(['generate', ...schemaArgs, '-o', out, ...flags]);
        if (step.refused !== undefined) {
          expect(generated.code, label).toBe(1);
          for (const code of step.refused) expect(generated.err, label).toContain(`(${code})`);
          // `check` refuses the same schema: nothing can be generated from it.
          expect((await runCli(['check', '-o', out])).code, label).toBe(1);
          continue;
        }
        expect(generated.code, `${label}: ${generated.err}`).toBe(0);
        if (index === 0) await writeFile(hooksFile, ORDER_HOOKS);
        expect(await readFile(hooksFile, 'utf8'), `${label}: the hook file is untouched`).toBe(
          ORDER_HOOKS,
        );
        // The CUSTOMER hooks follow the renames of the history (see CUSTOMER_HOOKS).
        const customerHooks = join(out, 'src', 'hooks', 'customer.ts');
        const clientHooks = join(out, 'src', 'hooks', 'client.ts');
        if (index === 0) await writeFile(customerHooks, CUSTOMER_HOOKS);
        const renamedField = step.schema.includes('name: fullName');
        const renamedEntity = step.schema.includes('name: CLIENT');
        expect(existsSync(renamedEntity ? customerHooks : clientHooks), label).toBe(false);
        const hooksText = await readFile(renamedEntity ? clientHooks : customerHooks, 'utf8');
        expect(hooksText, `${label}: customer hooks`).toContain(
          `record.${renamedField ? 'fullName' : 'name'})`,
        );
        if (renamedEntity)
          expect(hooksText, label).toContain('export const clientHooks: EntityHooks<Client>');
        if (!step.schema.includes('name: PRODUCT') && index > 1) {
          // Its hooks file went with it if nobody had edited it; an edited one stays, with a note
          // (not the compiler's error about the types that are gone); the user deletes it.
          const orphan = 'src/hooks/product.ts';
          if (existsSync(join(out, orphan))) {
            expect(generated.out, label).toContain(`note: ${orphan} belongs to no entity`);
            expect(generated.out, label).not.toMatch(/src\/hooks\/product\.ts:\d+:\d+: /);
            await rm(join(out, orphan));
          }
        }
        // check type-checks the user's files (both hooks) against the new generated code.
        const check = await runCli(['check', '-o', out, ...flags]);
        expect(check.code, `${label}: check ${check.out}${check.err}`).toBe(0);
        expect(check.out, label).toMatch(/^[^\n]* is up to date\.\n$/);
        const again = await runCli(['generate', '-o', out, ...flags]);
        expect(again.code, label).toBe(0);
        expect(again.out, `${label}: a second generate writes nothing`).toMatch(
          / 0 created, 0 updated, \d+ unchanged, 0 deleted\./,
        );
        // Boot a copy: the same folder's modules cannot be imported twice into this process.
        const copy = join(work, `boot-${String(index).padStart(2, '0')}`);
        await cp(out, copy, { recursive: true });
        step.reshape?.(expected);
        await bootAndCheck(copy, step, label, expected, target, async (server, inserted) => {
          const listed = await server.request('GET', '/data/order');
          expect(listed.headers.get('x-order-hook'), `${label}: middleware hook`).toBe(
            'middleware',
          );
          const insert = inserted('ORDER');
          if (insert !== undefined) {
            expect(
              insert.headers.get('x-order-inserted'),
              `${label}: afterInsert hook`,
            ).not.toBeNull();
          }
          for (const entity of ['CUSTOMER', 'CLIENT']) {
            const row = step.insert?.[entity]?.at(-1); // the hook runs for each; the last sets it
            if (row === undefined) continue;
            expect(
              inserted(entity)?.headers.get('x-customer-name'),
              `${label}: the customer hook, renamed along, runs`,
            ).toBe(row['fullName'] ?? row['name']);
          }
        });
      }
      // The check above does type-check the hook that followed both renames: reading the field by
      // its old name again fails it, with the place and the rename that caused it.
      const clientHooks = join(out, 'src', 'hooks', 'client.ts');
      const renamedHooks = await readFile(clientHooks, 'utf8');
      await writeFile(clientHooks, renamedHooks.replace('record.fullName', 'record.name'));
      const broken = await runCli(['check', '-o', out]);
      expect(broken.code, broken.out).toBe(1);
      expect(broken.out).toMatch(
        /^src\/hooks\/client\.ts:\d+:\d+: Property 'name' does not exist on type 'Client'\./m,
      );
      await writeFile(clientHooks, renamedHooks);
      // And the TypeScript compiler itself accepts the whole service, hooks included, as its
      // `npm run build` would (it reports every error on stdout and exits non-zero).
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const compiled = await execFileAsync(process.execPath, [tsc, '-p', out, '--noEmit']).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(compiled, 'tsc over the service').toBe('');
    }, 300_000);
  });
}

/** Boots the service in `dir` on the target's database and checks every record stored so far. */
async function bootAndCheck(
  dir: string,
  step: Step,
  label: string,
  expected: Expected,
  target: Target,
  probe?: (
    server: TestServer,
    inserted: (entity: string) => JsonResponse | undefined,
  ) => Promise<void>,
): Promise<void> {
  const { createApp, tables } = await loadGenerated(dir);
  const driver = target.driver();
  await driver.open(tables, {
    migrations: await loadMigrations(join(dir, 'migrations'), driver.dialect),
  });
  const server = await serve(
    createApp({ driver, logger: createLogger({ level: 'silent' }) }).callback(),
  );
  try {
    for (const [entity, rows] of expected) {
      for (const [id, row] of rows) {
        const response = await server.request('GET', `/data/${entity.toLowerCase()}/${id}`);
        expect(response.status, `${label}: GET ${entity} ${id}`).toBe(200);
        expect(response.body.data, `${label}: ${entity} ${id}`).toEqual(row);
      }
      const listed = await server.request('GET', `/data/${entity.toLowerCase()}`);
      expect(listed.body.data.length, `${label}: list ${entity}`).toBe(rows.size);
    }
    const responses = new Map<string, JsonResponse>();
    for (const [entity, rows] of Object.entries(step.insert ?? {})) {
      const response = await server.request('POST', `/data/${entity.toLowerCase()}`, {
        body: { data: rows },
      });
      responses.set(entity, response);
      expect(response.status, `${label}: insert ${entity} ${response.text}`).toBe(200);
      const stored = expected.get(entity) ?? new Map<string, Row>();
      expected.set(entity, stored);
      for (const row of rows) {
        const id = String(row['id'] ?? row['sku']);
        stored.set(id, { ...row });
      }
    }
    await probe?.(server, (entity) => responses.get(entity));
  } finally {
    await server.close();
    await driver.close();
  }
}
