/** A raw PostgreSQL connection for a test's set-up and inspection. */
import pg from 'pg';

/** Connects to `url`, runs `fn` with the client and closes the connection however `fn` ends. */
export async function withPgClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
