/** The change events of the service process (`suites/events-process.ts`) on a SQLite file. */
import { join } from 'node:path';
import { OUTPUT } from '../helpers/generate.js';
import { describeEventsProcessSuite } from './suites/events-process.js';

let databases = 0;
describeEventsProcessSuite('sqlite', () => ({
  DATABASE_URL: `sqlite:${join(OUTPUT, 'events-process-sqlite', 'data', `events-${databases++}.db`)}`,
}));
