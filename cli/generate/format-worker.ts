/** A worker thread of the format step (./format.ts): formats the files it is given with Biome. */
import { parentPort, workerData } from 'node:worker_threads';
import { createFormatter } from './formatter.js';

const files = workerData as readonly { path: string; contents: string }[];
try {
  const format = await createFormatter();
  parentPort?.postMessage({
    formatted: files.map((file) => [file.path, format(file.path, file.contents)]),
  });
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
