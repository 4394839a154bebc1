/**
 * The end-to-end access suite (`suites/access.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL`
 * names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeAccessSuite } from './suites/access.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('end-to-end access suite on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_access');
  afterAll(() => schemas.dropAll());
  describeAccessSuite('postgres', () => schemas.driver());
}
