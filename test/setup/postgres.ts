/**
 * Global setup of the `postgres` vitest project: says once, at the top of the run, whether the
 * suites that need `TEST_DATABASE_URL` run or are skipped. Each such group is declared through
 * test/helpers/environment.ts, which reports its cases as skipped (with the reason) or, under CI,
 * fails the file.
 */
import { POSTGRES, underCi } from '../helpers/environment.js';

export default function setup(): void {
  if (POSTGRES.missing === undefined) return;
  console.warn(
    underCi()
      ? `PostgreSQL: ${POSTGRES.missing}; under CI every file that needs it fails`
      : `PostgreSQL: ${POSTGRES.missing}, so the suites that need it are skipped (the summary counts them)`,
  );
}
