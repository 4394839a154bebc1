/**
 * The end-to-end single-record suite (`suites/single-record.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeSingleRecordSuite } from './suites/single-record.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('end-to-end single-record suite on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_single');
  afterAll(() => schemas.dropAll());
  describeSingleRecordSuite('postgres', () => schemas.driver());
}
