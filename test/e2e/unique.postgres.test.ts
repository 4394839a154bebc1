/**
 * The end-to-end unique fields suite (`suites/unique.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeUniqueSuite } from './suites/unique.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end unique fields suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_unique');
  afterAll(() => schemas.dropAll());
  describeUniqueSuite('postgres', () => schemas.driver());
});
