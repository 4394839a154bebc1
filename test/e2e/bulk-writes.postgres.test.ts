/** Upsert and changes by filter (`suites/bulk-writes.ts`) on PostgreSQL, in a fresh schema. */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeBulkWritesSuite } from './suites/bulk-writes.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'upsert and changes by filter on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_bulk');
  afterAll(() => schemas.dropAll());
  describeBulkWritesSuite('postgres', () => schemas.driver());
});
