/** The property tests of the HTTP interface (`suites/fuzz.ts`) on SQLite in memory. */
import { describeFuzzSuite } from './suites/fuzz.js';

describeFuzzSuite('sqlite', () => undefined);
