/**
 * The end-to-end references suite (`suites/references.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeExpandSuite, describeReferencesSuite } from './suites/references.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end references suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_refs');
  afterAll(() => schemas.dropAll());
  describeReferencesSuite('postgres', () => schemas.driver());
  describeExpandSuite('postgres', () => schemas.driver());
});
