// Runs the consumer against the service at the URL given as argument and prints what it got.
import { run } from './consumer.js';

const url = (globalThis as { process?: { argv: string[] } }).process?.argv[2] ?? '';
console.log(JSON.stringify(await run(url)));
