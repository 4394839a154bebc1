/** The end-to-end key suite (`suites/keys.ts`) on SQLite in memory. */
import { describeKeysSuite } from './suites/keys.js';

describeKeysSuite('sqlite', () => undefined);
