/** The end-to-end access suite (`suites/access.ts`) on SQLite in memory. */
import { describeAccessSuite } from './suites/access.js';

describeAccessSuite('sqlite', () => undefined);
