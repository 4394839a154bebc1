/**
 * The end-to-end key suite (`suites/keys.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL` names a
 * database, each fixture service in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeKeysSuite } from './suites/keys.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('end-to-end key suite on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_keys');
  afterAll(() => schemas.dropAll());
  describeKeysSuite('postgres', () => schemas.driver());
}
