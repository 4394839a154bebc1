/** The reference contract (references-contract.ts) on PostgreSQL, each case in a schema of its own. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import { describeReferenceContract } from './references-contract.js';

describeWith(POSTGRES, 'PostgreSQL driver, references', (url) => {
  const prefix = `eg_refs_${process.pid}_${randomBytes(4).toString('hex')}`;
  const schemas: string[] = [];

  afterAll(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  });

  describeReferenceContract('postgres', async () => {
    const schema = `${prefix}_${schemas.length}`;
    schemas.push(schema);
    return new PostgresDriver({ url, env: {}, schema, poolMax: 8 });
  });
});
