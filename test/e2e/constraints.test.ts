/** The end-to-end field constraints suite (`suites/constraints.ts`) on SQLite in memory. */
import { describeConstraintsSuite, describeInsertDefaultsSuite } from './suites/constraints.js';

describeConstraintsSuite('sqlite', () => undefined);
describeInsertDefaultsSuite('sqlite', () => undefined);
