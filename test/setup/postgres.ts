/**
 * Global setup of the `postgres` vitest project: says once, at the top of the run, whether the
 * suites that need `TEST_DATABASE_URL` run or are skipped (each skipped file says so too).
 */
export default function setup(): void {
  const url = process.env['TEST_DATABASE_URL'];
  if (url === undefined || url === '')
    console.warn(
      'PostgreSQL: TEST_DATABASE_URL is not set, so the suites that need it are skipped ' +
        '(e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run test:postgres)',
    );
}
