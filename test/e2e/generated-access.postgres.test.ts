/**
 * Field rules under access rules (`suites/generated-access.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeGeneratedAccessSuite } from './suites/generated-access.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'field rules under access rules on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_generated_access');
  afterAll(() => schemas.dropAll());
  describeGeneratedAccessSuite('postgres', () => schemas.driver());
});
