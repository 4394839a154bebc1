/**
 * The end-to-end field constraints suite (`suites/constraints.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeConstraintsSuite, describeInsertDefaultsSuite } from './suites/constraints.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end field constraints suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_constraints');
  afterAll(() => schemas.dropAll());
  describeConstraintsSuite('postgres', () => schemas.driver());
  describeInsertDefaultsSuite('postgres', () => schemas.driver());
});
