/** `POST /batch` (`suites/batch.ts`) on SQLite in memory. */
import { describeBatchSuite } from './suites/batch.js';

describeBatchSuite('sqlite', () => undefined);
