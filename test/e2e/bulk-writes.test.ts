/** Upsert and changes by filter (`suites/bulk-writes.ts`) on SQLite in memory. */
import { describeBulkWritesSuite } from './suites/bulk-writes.js';

describeBulkWritesSuite('sqlite', () => undefined);
