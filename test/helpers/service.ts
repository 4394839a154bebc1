import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  EventSettings,
  ServiceApp,
  ServiceOptions,
  StorageDriver,
  TableDescriptor,
} from '@entity-gen/runtime';
import { createLogger, EventHub } from '@entity-gen/runtime';
import { SqliteDriver } from '@entity-gen/runtime/sqlite';
import { fixtureNamed, generateFixtureInto, type Fixture } from './generate.js';
import { serve, type TestServer } from './http.js';
import { responseChecker } from './openapi.js';

/** The modules of a generated service that tests use. */
interface GeneratedModules {
  readonly createApp: (options: ServiceOptions) => ServiceApp;
  readonly tables: readonly TableDescriptor[];
}

/** A generated service booted on a driver and served over HTTP. */
export interface BootedService extends TestServer {
  readonly driver: StorageDriver;
  /** The service's change events (`/events`, `afterCommit`). */
  readonly events: EventHub;
  readonly tables: readonly TableDescriptor[];
  readonly createApp: (options: ServiceOptions) => ServiceApp;
}

/** Loads the TypeScript sources of a service generated into `dir` (vitest transpiles them). */
export async function loadGenerated(dir: string): Promise<GeneratedModules> {
  const app = (await import(pathToFileURL(join(dir, 'src', 'app.ts')).href)) as Pick<
    GeneratedModules,
    'createApp'
  >;
  const service = (await import(pathToFileURL(join(dir, 'src', 'service.ts')).href)) as Pick<
    GeneratedModules,
    'tables'
  >;
  return { createApp: app.createApp, tables: service.tables };
}

/**
 * Generates a fixture (one of `FIXTURES` by name, or any schema files), opens `driver` (SQLite in
 * memory by default) and serves the app.
 */
export async function bootFixture(
  named: string | Fixture,
  options: {
    driver?: StorageDriver;
    folder?: string;
    bodyLimit?: number;
    auth?: ServiceOptions['auth'];
    maxPageSize?: number;
    cursorSecret?: string;
    /** Settings of the change events (keep-alive, buffer, …); the defaults otherwise. */
    events?: Partial<EventSettings>;
    /** Open the driver with change events off (`EVENTS=off`). */
    eventsOff?: boolean;
    /** Files written into the service after it is generated (a hooks file), by relative path. */
    files?: Readonly<Record<string, string>>;
  } = {},
): Promise<BootedService> {
  const fixture = typeof named === 'string' ? fixtureNamed(named) : named;
  const dir = await generateFixtureInto(fixture, options.folder ?? `e2e-${fixture.name}`);
  for (const [path, text] of Object.entries(options.files ?? {}))
    await writeFile(join(dir, path), text);
  const { createApp, tables } = await loadGenerated(dir);
  const driver = options.driver ?? new SqliteDriver({ filename: ':memory:' });
  await driver.open(tables, options.eventsOff === true ? { events: false } : {});
  const logger = createLogger({ level: 'silent' });
  const events = new EventHub(driver, {
    settings: { ...options.events, ...(options.eventsOff === true ? { enabled: false } : {}) },
    logger,
  });
  const app = createApp({
    driver,
    logger,
    events,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.maxPageSize === undefined ? {} : { maxPageSize: options.maxPageSize }),
    ...(options.cursorSecret === undefined ? {} : { cursorSecret: options.cursorSecret }),
  });
  const server = checkedAgainstDocument(await serve(app.callback()), dir);
  return {
    ...server,
    driver,
    events,
    tables,
    createApp,
    close: async () => {
      await events.close();
      await server.close();
      await driver.close();
    },
  };
}

/**
 * The server with every response checked against the service's OpenAPI document
 * (`openapi.json`): a status or body the document does not describe fails the test.
 */
function checkedAgainstDocument(server: TestServer, dir: string): TestServer {
  const check = responseChecker(
    JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8')) as Record<string, unknown>,
  );
  return {
    ...server,
    async request(method, path, options) {
      const response = await server.request(method, path, options);
      const problems = check(method, path, response);
      if (problems.length > 0)
        throw new Error(`The response is not what openapi.json says:\n${problems.join('\n')}`);
      return response;
    },
  };
}
