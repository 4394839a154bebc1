/**
 * The change events of the service process (`suites/events-process.ts`) on PostgreSQL, each case
 * in a fresh schema. Runs when `TEST_DATABASE_URL` names a database.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeEventsProcessSuite } from './suites/events-process.js';
import { TestSchemas, withSchema } from './suites/postgres.js';

describeWith(POSTGRES, 'change events of the service process on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_events_process');
  afterAll(() => schemas.dropAll());
  describeEventsProcessSuite('postgres', () => ({
    DATABASE_URL: `${withSchema(url, schemas.next())}&pool_max=8`,
  }));
});
