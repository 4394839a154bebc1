/**
 * The end-to-end key suite (`suites/keys.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL` names a
 * database, each fixture service in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeKeysSuite } from './suites/keys.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end key suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_keys');
  afterAll(() => schemas.dropAll());
  describeKeysSuite('postgres', () => schemas.driver());
});
