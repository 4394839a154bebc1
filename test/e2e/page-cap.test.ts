/** The page-cap suite (`suites/page-cap.ts`) on SQLite in memory. */
import { describePageCapSuite } from './suites/page-cap.js';

describePageCapSuite('sqlite', () => undefined);
