/**
 * The change events of the service process (`suites/events-process.ts`) on PostgreSQL, each case
 * in a fresh schema. Runs when `TEST_DATABASE_URL` names a database.
 */
import { afterAll } from 'vitest';
import { describeEventsProcessSuite } from './suites/events-process.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas, withSchema } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('change events of the service process on PostgreSQL');
} else {
  const url = TEST_DATABASE_URL;
  const schemas = new TestSchemas(url, 'e2e_events_process');
  afterAll(() => schemas.dropAll());
  describeEventsProcessSuite('postgres', () => ({
    DATABASE_URL: `${withSchema(url, schemas.next())}&pool_max=8`,
  }));
}
