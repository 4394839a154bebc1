/**
 * The end-to-end generated keys and server-set fields suite (`suites/generated.ts`) on
 * PostgreSQL: runs when `TEST_DATABASE_URL` names a database, in a fresh schema dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeGeneratedSuite } from './suites/generated.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end generated keys suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_generated');
  afterAll(() => schemas.dropAll());
  describeGeneratedSuite('postgres', () => schemas.driver());
});
