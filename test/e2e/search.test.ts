/** The end-to-end full-text search suite (`suites/search.ts`) on SQLite in memory. */
import { describeSearchSuite } from './suites/search.js';

describeSearchSuite('sqlite', () => undefined);
