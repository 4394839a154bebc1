/**
 * The PostgreSQL driver behind PgBouncer in transaction pooling mode (SPEC §15): the whole driver
 * contract runs through a PgBouncer started by the test in front of a private server, with
 * `DATABASE_LISTEN_URL` naming the direct connection (LISTEN, start-up). Server connections are
 * shared between the driver's clients transaction by transaction, so anything that relied on
 * session state (a named prepared statement, a session setting) would fail here.
 *
 *   npx vitest run test/drivers/postgres-pgbouncer
 */
import { afterAll, beforeAll } from 'vitest';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';
import { describeWith, topologyParts } from '../helpers/environment.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { PgBouncer } from '../helpers/topology.js';
import { describeDriverContract } from './contract.js';

describeWith(topologyParts(), 'PostgreSQL driver behind PgBouncer (transaction mode)', (parts) => {
  let server: PrivatePostgres;
  let bouncer: PgBouncer;
  let n = 0;

  beforeAll(async () => {
    server = await PrivatePostgres.create(parts.postgres, 'eg-pg-bounced-');
    server.start('-c max_connections=60');
    // Few server connections for many clients: transactions of different clients share them.
    bouncer = await PgBouncer.start(parts.pgbouncer, parts.postgres, server, 3);
  }, 60_000);

  afterAll(() => {
    bouncer?.stop();
    server?.destroy();
  });

  let current = '';
  const make = (schema: string): PostgresDriver =>
    new PostgresDriver({
      url: bouncer.url(),
      env: { DATABASE_LISTEN_URL: server.url },
      schema,
      poolMax: 6,
    });
  describeDriverContract(
    'postgres behind pgbouncer',
    () => {
      current = `bounced_${n++}`;
      return Promise.resolve(make(current));
    },
    { reopen: () => Promise.resolve(make(current)) },
  );
});
