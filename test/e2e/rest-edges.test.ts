/** The end-to-end suite of edge REST configurations (`suites/rest-edges.ts`) on SQLite in memory. */
import { describeRestEdgesSuite } from './suites/rest-edges.js';

describeRestEdgesSuite('sqlite', () => undefined);
