/** The reference contract (references-contract.ts) on SQLite, in memory and on a file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteDriver } from '../../runtime/src/sqlite/index.js';
import { describeReferenceContract } from './references-contract.js';

const root = mkdtempSync(join(tmpdir(), 'eg-references-'));
let counter = 0;

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describeReferenceContract(
  'sqlite :memory:',
  async () => new SqliteDriver({ filename: ':memory:' }),
);
describeReferenceContract(
  'sqlite file',
  async () => new SqliteDriver({ filename: join(root, `db-${++counter}.db`) }),
);
