/**
 * The property tests of the HTTP interface (`suites/fuzz.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeFuzzSuite } from './suites/fuzz.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('property tests on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_fuzz');
  afterAll(() => schemas.dropAll());
  describeFuzzSuite('postgres', () => schemas.driver());
}
