/**
 * WAL checkpoints off the request path. SQLite's automatic checkpoint runs inside the commit that
 * crosses its threshold, on the caller's thread: copying a thousand pages into the database file
 * and two fsyncs land on one unlucky landing or start. Here a worker thread with its own
 * connection checkpoints every `intervalMs` (PASSIVE: it never blocks a writer or a reader), and
 * the store's connection keeps SQLite's own checkpoint only as a safety net at a higher threshold,
 * so the WAL stays bounded if the worker falls behind or fails.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

/**
 * How often the worker checkpoints. A checkpoint copies each page the WAL holds once, and the
 * busiest pages (the newest leaf of each index, the start budgets) change in nearly every commit:
 * a longer interval copies them fewer times, while the safety net below still bounds the WAL.
 */
export const BACKGROUND_CHECKPOINT_INTERVAL_MS = 1000;
/** WAL pages after which a commit checkpoints on the store's own thread anyway (SQLite's default is 1000). */
export const SAFETY_NET_CHECKPOINT_PAGES = 10_000;

/** A running checkpointer. */
export interface Checkpointer {
  stop(): Promise<void>;
}

// CommonJS, evaluated in the worker: better-sqlite3 is passed as a resolved path, so the worker
// loads the same copy as the store whatever the working directory is.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked for a moment (another process's checkpoint): the next tick tries again.
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

const noCheckpointer: Checkpointer = { stop: async () => {} };

/**
 * Starts checkpointing `db`'s WAL on a worker thread. A database without a WAL (in memory) needs
 * none. Should the worker fail, the connection goes back to SQLite's default checkpoints.
 */
export function startBackgroundCheckpoints(
  db: Database,
  intervalMs: number = BACKGROUND_CHECKPOINT_INTERVAL_MS,
): Checkpointer {
  if (db.memory || db.pragma('journal_mode', { simple: true }) !== 'wal') return noCheckpointer;
  const sqliteDefault = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${SAFETY_NET_CHECKPOINT_PAGES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, filename: db.name, intervalMs } });
  // Never what keeps the process alive: checkpoints matter only while the store is in use.
  worker.unref();
  let stopping = false;
  // A worker that could not start (or died) ends here: the store's own commits checkpoint again, as by default.
  worker.on('error', () => {});
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      if (!stopping && db.open) db.pragma(`wal_autocheckpoint = ${sqliteDefault}`);
      resolve();
    }),
  );
  return {
    async stop() {
      stopping = true;
      // Held open until the worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
