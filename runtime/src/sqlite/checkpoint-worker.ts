/**
 * The checkpointer of the SQLite driver (see checkpointer.ts): a worker thread with its own
 * connection to the database file that copies the pages the WAL holds back into the database
 * (`PRAGMA wal_checkpoint(PASSIVE)`) when the main thread asks, so that no write request pays for
 * it. It writes nothing else.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** What the driver starts the checkpointer with. */
export interface CheckpointerData {
  readonly filename: string;
  readonly busyTimeoutMs: number;
}

/** The answer to a request: SQLite's figures of the checkpoint, or the error it raised. */
export type CheckpointResponse =
  | {
      /** Whether a writer or reader kept the checkpoint from finishing. */
      readonly busy: boolean;
      /** Frames in the WAL. */
      readonly log: number;
      /** Frames of the WAL now copied into the database. */
      readonly checkpointed: number;
    }
  | { readonly error: string };

const { filename, busyTimeoutMs } = workerData as CheckpointerData;
const db = new Database(filename, { timeout: busyTimeoutMs, fileMustExist: true });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw(true);

parentPort?.on('message', (request: 'checkpoint' | 'close') => {
  if (request === 'close') {
    db.close();
    parentPort?.close();
    return;
  }
  let response: CheckpointResponse;
  try {
    const [busy, log, checkpointed] = checkpoint.get() as [number, number, number];
    response = { busy: busy !== 0, log, checkpointed };
  } catch (error) {
    response = { error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(response);
});
