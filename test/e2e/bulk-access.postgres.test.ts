/** Access rules of upserts, changes by filter and batches (`suites/bulk-access.ts`) on PostgreSQL. */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeBulkAccessSuite } from './suites/bulk-access.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'access rules of writes of several records on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_bulk_access');
  afterAll(() => schemas.dropAll());
  describeBulkAccessSuite('postgres', () => schemas.driver());
});
