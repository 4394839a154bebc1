/** A kill -9 during soft deletes (`suites/soft-delete-process.ts`) on a SQLite file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { describeSoftDeleteProcessSuite } from './suites/soft-delete-process.js';

const data = mkdtempSync(join(tmpdir(), 'eg-soft-delete-process-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));

describeSoftDeleteProcessSuite('sqlite', () => {
  const filename = join(data, 'service.db');
  return {
    env: { DATABASE_URL: `sqlite:${filename}`, SQLITE_SYNCHRONOUS: 'FULL' },
    driver: () => new SqliteDriver({ filename }),
  };
});
