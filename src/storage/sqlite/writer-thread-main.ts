/**
 * The writer thread of a SQLite store (see writer-thread.ts): it owns the file's
 * writing connection, runs the writes its follower on the main thread sends,
 * and the store's own upkeep (expiry, compaction, checkpoints). It tells the
 * follower of each commit before it answers that commit's writes.
 *
 * Messages (structured clone over the thread's port):
 *   thread → main: ready | failed (opening the file), commit (revision, compaction
 *                  point, and the outcomes of the writes answered with it), replies
 *                  (outcomes with no new commit: refusals), log (a line for the main logger)
 *   main → thread: calls (writes), stop (close the store and end)
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LogFields, LogLevel, Logger } from '../../internal/index.js';
import { runFollowerWrite, toWireError } from './follower-writes.js';
import type { WriterThreadCall, WriterThreadMessage, WriterThreadOptions, WriterThreadReply } from './writer-thread.js';
import { SqliteEventStore } from './sqlite-event-store.js';

const port = parentPort!;
const post = (m: WriterThreadMessage): void => port.postMessage(m);

/** cloneable keeps what a log line's fields say in a form that crosses the port (an error as its message and code). */
function cloneable(fields: LogFields | undefined): LogFields | undefined {
  if (fields === undefined) return undefined;
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) {
      const code = (v as { code?: unknown }).code;
      out[k] = { message: v.message, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
    } else out[k] = typeof v === 'function' ? String(v) : v;
  }
  return out;
}

const log =
  (level: LogLevel) =>
  (msg: string, fields?: LogFields): void => {
    const f = cloneable(fields);
    post({ t: 'log', level, msg, ...(f !== undefined ? { fields: f } : {}) });
  };
const logger: Logger = { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };

const options = workerData as WriterThreadOptions;
/** committed is the last commit not yet told to the main thread. */
let committed: { rv: number; compacted: number } | undefined;
let replies: WriterThreadReply[] = [];
let outScheduled = false;

/**
 * sendOut tells the main thread of the last commit and the outcomes of the writes
 * answered since, in one message: the outcomes of one turn of the event loop (one
 * commit's) go after the turn, with the notice of that commit.
 */
function sendOut(): void {
  outScheduled = false;
  const commit = committed;
  const batch = replies;
  committed = undefined;
  replies = [];
  if (commit !== undefined) post({ t: 'commit', ...commit, ...(batch.length > 0 ? { replies: batch } : {}) });
  else if (batch.length > 0) post({ t: 'replies', replies: batch });
}

function scheduleOut(): void {
  if (outScheduled) return;
  outScheduled = true;
  setImmediate(sendOut);
}

const store = new SqliteEventStore({
  ...options,
  logger,
  onCommit: (rv, compacted) => {
    committed = { rv, compacted };
    scheduleOut();
  },
});
store.ready().then(
  () => post({ t: 'ready' }),
  (e: unknown) => post({ t: 'failed', error: toWireError(e) }),
);

/** LAG_EVERY_MS is how often the thread tells the main thread the search index's lag histogram, when it changed. */
const LAG_EVERY_MS = 1_000;
let toldLag = 0;
setInterval(() => {
  const lag = store.searchIndexLag();
  if (lag === undefined || lag.count === toldLag) return;
  toldLag = lag.count;
  post({ t: 'indexLag', lag });
}, LAG_EVERY_MS).unref();

/** reply queues a write's outcome for the next message out. */
function reply(r: WriterThreadReply): void {
  replies.push(r);
  scheduleOut();
}

port.on('message', (m: { t: 'calls'; calls: WriterThreadCall[] } | { t: 'stop' }) => {
  if (m.t === 'calls') {
    for (const { id, op, args } of m.calls) {
      runFollowerWrite(store, op, args).then(
        (value) => reply({ id, value }),
        (e: unknown) => reply({ id, error: toWireError(e) }),
      );
    }
    return;
  }
  // The last commit and its answers go out before the port closes.
  store.close().then(
    () => {
      sendOut();
      port.close();
    },
    (e: unknown) => {
      logger.error('sqlite writer thread: closing the store failed', { error: e });
      sendOut();
      port.close();
    },
  );
});
