/** Access rules of upserts, changes by filter and batches (`suites/bulk-access.ts`) on SQLite. */
import { describeBulkAccessSuite } from './suites/bulk-access.js';

describeBulkAccessSuite('sqlite', () => undefined);
