/** The end-to-end generated keys and server-set fields suite (`suites/generated.ts`) on SQLite. */
import { describeGeneratedSuite } from './suites/generated.js';

describeGeneratedSuite('sqlite', () => undefined);
