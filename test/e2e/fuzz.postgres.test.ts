/**
 * The property tests of the HTTP interface (`suites/fuzz.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeFuzzSuite } from './suites/fuzz.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'property tests on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_fuzz');
  afterAll(() => schemas.dropAll());
  describeFuzzSuite('postgres', () => schemas.driver());
});
