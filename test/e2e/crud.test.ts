/** The end-to-end CRUD suite (`suites/crud.ts`) on SQLite in memory. */
import { describeCrudSuite } from './suites/crud.js';

describeCrudSuite('sqlite', () => undefined);
