/**
 * The end-to-end soft delete suite (`suites/soft-delete.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { TestSchemas } from './suites/postgres.js';
import { describeSoftDeleteSuite } from './suites/soft-delete.js';

describeWith(POSTGRES, 'end-to-end soft delete suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_soft');
  afterAll(() => schemas.dropAll());
  describeSoftDeleteSuite('postgres', () => schemas.driver());
});
