/**
 * The fast path of GET by key (`suites/fast-get.ts`) on PostgreSQL, whose driver reads with `get`
 * only: runs when `TEST_DATABASE_URL` names a database, in fresh schemas dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeFastGetSuite } from './suites/fast-get.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'fast path of GET by key on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_fast_get');
  afterAll(() => schemas.dropAll());
  describeFastGetSuite('postgres', () => schemas.driver(), { synchronousReads: false });
});
