/**
 * The page-cap suite (`suites/page-cap.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL` names a
 * database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describePageCapSuite } from './suites/page-cap.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('page-cap suite on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_page_cap');
  afterAll(() => schemas.dropAll());
  describePageCapSuite('postgres', () => schemas.driver());
}
