/** Field rules under access rules (`suites/generated-access.ts`) on SQLite in memory. */
import { describeGeneratedAccessSuite } from './suites/generated-access.js';

describeGeneratedAccessSuite('sqlite', () => undefined);
