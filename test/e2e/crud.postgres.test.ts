/**
 * The end-to-end CRUD suite (`suites/crud.ts`) on PostgreSQL: runs when `TEST_DATABASE_URL` names
 * a database, e.g.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/e2e
 *
 * in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeCrudSuite } from './suites/crud.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'end-to-end CRUD suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_crud');
  afterAll(() => schemas.dropAll());
  // JSONB does not keep the key order of objects inside JSON fields (see CrudSuiteOptions).
  describeCrudSuite('postgres', () => schemas.driver(), { keepsJsonKeyOrder: false });
});
