/**
 * The end-to-end full-text search suite (`suites/search.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { TestSchemas } from './suites/postgres.js';
import { describeSearchSuite } from './suites/search.js';

describeWith(POSTGRES, 'end-to-end full-text search suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_search');
  afterAll(() => schemas.dropAll());
  describeSearchSuite('postgres', () => schemas.driver());
});
