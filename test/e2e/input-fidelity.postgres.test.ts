/**
 * The input-fidelity suite (`suites/input-fidelity.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeInputFidelitySuite } from './suites/input-fidelity.js';
import { registerSkipped, TEST_DATABASE_URL, TestSchemas } from './suites/postgres.js';

if (TEST_DATABASE_URL === undefined) {
  registerSkipped('input-fidelity suite on PostgreSQL');
} else {
  const schemas = new TestSchemas(TEST_DATABASE_URL, 'e2e_input');
  afterAll(() => schemas.dropAll());
  describeInputFidelitySuite('postgres', () => schemas.driver());
}
