/**
 * The end-to-end suite of edge REST configurations (`suites/rest-edges.ts`) on PostgreSQL: runs
 * when `TEST_DATABASE_URL` names a database, in fresh schemas that are dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeRestEdgesSuite } from './suites/rest-edges.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end suite of edge REST configurations on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_rest_edges');
  afterAll(() => schemas.dropAll());
  describeRestEdgesSuite('postgres', () => schemas.driver());
});
