/**
 * The page-cap suite (`suites/page-cap.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL` names a
 * database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describePageCapSuite } from './suites/page-cap.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'page-cap suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_page_cap');
  afterAll(() => schemas.dropAll());
  describePageCapSuite('postgres', () => schemas.driver());
});
