/** The input-fidelity suite (`suites/input-fidelity.ts`) on SQLite in memory. */
import { describeInputFidelitySuite } from './suites/input-fidelity.js';

describeInputFidelitySuite('sqlite', () => undefined);
