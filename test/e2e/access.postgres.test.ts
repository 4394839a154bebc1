/**
 * The end-to-end access suite (`suites/access.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL`
 * names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeAccessSuite } from './suites/access.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end access suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_access');
  afterAll(() => schemas.dropAll());
  describeAccessSuite('postgres', () => schemas.driver());
});
