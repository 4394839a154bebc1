/** The end-to-end single-record suite (`suites/single-record.ts`) on SQLite in memory. */
import { describeSingleRecordSuite } from './suites/single-record.js';

describeSingleRecordSuite('sqlite', () => undefined);
