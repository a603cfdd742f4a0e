import { Worker } from 'node:worker_threads';
import { requireCjs } from '../../internal/index.js';

/**
 * CHECKPOINT_INTERVAL_MS: how often the WAL is copied back into the database
 * file. Short enough that the WAL stays a few megabytes under full write load.
 */
const CHECKPOINT_INTERVAL_MS = 200;

// The worker is plain CommonJS evaluated from a string, so it loads the same way
// from TypeScript sources under tsx and from the compiled package.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
let stopped = false;
const tick = () => {
  if (stopped) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
  setTimeout(tick, workerData.intervalMs);
};
parentPort.on('message', (m) => {
  if (m === 'stop') {
    stopped = true;
    db.close();
    parentPort.close();
  }
});
setTimeout(tick, workerData.intervalMs);
`;

/**
 * Checkpointer runs SQLite's WAL checkpoints on a second connection in a worker
 * thread. A checkpoint writes every page changed since the last one into the
 * database file and syncs it; done on the writer's thread it stalls commits (it
 * was most of the cost of a create), done here it uses the other core while
 * commits go on (a PASSIVE checkpoint never blocks the writer).
 */
export class Checkpointer {
  private readonly worker: Worker;

  constructor(path: string, onError: (message: string) => void) {
    const driver = requireCjs.resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, intervalMs: CHECKPOINT_INTERVAL_MS } });
    this.worker.on('message', (m: { error?: string }) => {
      if (m.error !== undefined) onError(m.error);
    });
    this.worker.on('error', (e) => onError(e.message));
    this.worker.unref();
  }

  /** stop closes the worker's connection and waits for the thread to end. */
  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Waiting for the thread must keep the process alive, though the running thread does not.
    this.worker.ref();
    this.worker.postMessage('stop');
    await exited;
  }
}
