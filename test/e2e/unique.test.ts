/** The end-to-end unique fields suite (`suites/unique.ts`) on SQLite in memory. */
import { describeUniqueSuite } from './suites/unique.js';

describeUniqueSuite('sqlite', () => undefined);
