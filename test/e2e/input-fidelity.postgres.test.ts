/**
 * The input-fidelity suite (`suites/input-fidelity.ts`) on PostgreSQL: runs when
 * `TEST_DATABASE_URL` names a database, in a fresh schema that is dropped afterwards.
 */
import { afterAll } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeInputFidelitySuite } from './suites/input-fidelity.js';
import { TestSchemas } from './suites/postgres.js';

describeWith(POSTGRES, 'input-fidelity suite on PostgreSQL', (url) => {
  const schemas = new TestSchemas(url, 'e2e_input');
  afterAll(() => schemas.dropAll());
  describeInputFidelitySuite('postgres', () => schemas.driver());
});
