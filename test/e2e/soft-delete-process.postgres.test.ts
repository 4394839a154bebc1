/**
 * A kill -9 during soft deletes (`suites/soft-delete-process.ts`) on PostgreSQL, in a fresh
 * schema. Runs when `TEST_DATABASE_URL` names a database.
 */
import { afterAll } from 'vitest';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { TestSchemas, withSchema } from './suites/postgres.js';
import { describeSoftDeleteProcessSuite } from './suites/soft-delete-process.js';

describeWith(POSTGRES, 'a kill -9 during soft deletes on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_soft_kill');
  afterAll(() => schemas.dropAll());
  describeSoftDeleteProcessSuite('postgres', () => {
    const schema = schemas.next();
    return {
      env: { DATABASE_URL: `${withSchema(url, schema)}&pool_max=8` },
      driver: () => new PostgresDriver({ url, env: {}, schema, poolMax: 2 }),
    };
  });
});
