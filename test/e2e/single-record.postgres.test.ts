/**
 * The end-to-end single-record suite (`suites/single-record.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeSingleRecordSuite } from './suites/single-record.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end single-record suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_single');
  afterAll(() => schemas.dropAll());
  describeSingleRecordSuite('postgres', () => schemas.driver());
});
