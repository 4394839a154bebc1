/** `POST /batch` (`suites/batch.ts`) on PostgreSQL, in a fresh schema. */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeBatchSuite } from './suites/batch.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'batches on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_batch');
  afterAll(() => schemas.dropAll());
  describeBatchSuite('postgres', () => schemas.driver());
});
