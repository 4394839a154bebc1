/**
 * The end-to-end history suite (`suites/history.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { TestSchemas } from './suites/postgres.js';
import { describeHistorySuite } from './suites/history.js';

describeWith(POSTGRES, 'end-to-end history suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_hist');
  afterAll(() => schemas.dropAll());
  describeHistorySuite('postgres', () => schemas.driver());
  describeHistorySuite('postgres', () => schemas.driver(), { eventsOff: true });
});
