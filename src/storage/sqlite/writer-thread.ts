import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LogFields, LogLevel, Logger } from '../../internal/index.js';
import { noopLogger, realClock } from '../../internal/index.js';
import type { CommonStoreOptions } from '../shared/index.js';
import { StorageError } from '../errors.js';
import type { WriteOptions } from '../event-store.js';
import { fromWireError } from './follower-writes.js';
import type { WireError } from './follower-writes.js';
import type { FollowerWrite, SqliteEventStoreOptions, WriterLink } from './options.js';
import { LAG_BOUNDS } from './search-index-writer.js';
import type { SearchIndexLag } from './search-index-writer.js';
import { SqliteEventStore } from './sqlite-event-store.js';

/**
 * A SQLite store whose writing runs on a thread of its own.
 *
 * The thread that answers requests hands every write to a writer thread and
 * goes on: the writer batches the writes, commits them, and answers. A commit
 * (the SQLite inserts and their pages written to the WAL) is a third of a
 * create's time on one thread; here it overlaps with the next requests' reading,
 * decoding and answering, on the machine's second core.
 *
 * The store the caller gets is a follower of the writer (the same as a worker
 * process of `kevents serve --workers`): it reads the file on its own connection
 * and learns of each commit before that commit's writes are acknowledged, so a
 * client that hears of a write can read and watch it at once. An acknowledged
 * write is committed to the file (WAL) first, as in one thread: it survives
 * kill -9. The writer thread runs the store's upkeep (expiry, compaction,
 * checkpoints) on the real clock.
 */

/** WriterThreadOptions are what the writer thread's store is opened with: plain data, the file and its tuning. */
export type WriterThreadOptions = Pick<SqliteEventStoreOptions, 'path' | 'synchronous' | 'cacheSizeMiB' | 'maxCountRemaining' | 'maxBatch' | 'searchIndexDelayMs'> &
  Pick<CommonStoreOptions, 'historyWindowSeconds' | 'compactIntervalMs' | 'expiryIntervalMs' | 'watchBufferSize'>;

/** WriterThreadCall is one write sent to the writer thread; calls go in batches, one message per turn of the event loop. */
export interface WriterThreadCall {
  id: number;
  op: FollowerWrite;
  args: unknown[];
}

/** WriterThreadReply is one write's outcome: its value, or its error. */
export interface WriterThreadReply {
  id: number;
  value?: unknown;
  error?: WireError;
}

/** WriterThreadMessage is what the writer thread tells the main thread (see writer-thread-main.ts). */
export type WriterThreadMessage =
  | { t: 'ready' }
  | { t: 'failed'; error: WireError }
  /** commit: the writer committed up to `rv`; the replies with it are of writes that commit (or one before it) holds. */
  | { t: 'commit'; rv: number; compacted: number; replies?: WriterThreadReply[] }
  | { t: 'replies'; replies: WriterThreadReply[] }
  | { t: 'log'; level: LogLevel; msg: string; fields?: LogFields }
  /** indexLag: the search index's lag histogram, after it changed (at most once a second). */
  | { t: 'indexLag'; lag: SearchIndexLag };

/** STOP_TIMEOUT_MS is how long closing waits for the writer thread to close its store before ending it. */
const STOP_TIMEOUT_MS = 10_000;
/**
 * SEND_AT is how many writes go to the writer thread at most in one message.
 * Writes go as they are read, SEND_AT at a time, so that the writer commits some
 * while this thread reads the next; what is left at the end of a turn of the
 * event loop goes at once if the writer has nothing of ours in hand, or else
 * when it answers (the writes gathered meanwhile then share its next commit).
 * Against one message per turn (7,800 creates/s under wrk: the 64 clients'
 * creates fell into one commit, and this thread waited for it) and against 8 at
 * a time without waiting (see docs/benchmarks.md).
 */
const SEND_AT = 24;

/** StartWriter starts the writer thread's module (writer-thread-main) with `data` as its workerData. */
export type StartWriter = (data: WriterThreadOptions) => Worker;

/**
 * startBuiltWriter starts the writer thread's module as built: the bundle's entry
 * beside this chunk (dist/bin), or the compiled module beside this one (dist/).
 * From the TypeScript sources there is neither: the caller passes its own StartWriter.
 */
export const startBuiltWriter: StartWriter = (data) => {
  for (const name of ['./sqlite-writer.js', './writer-thread-main.js']) {
    const url = new URL(name, import.meta.url);
    if (existsSync(fileURLToPath(url))) return new Worker(url, { workerData: data });
  }
  throw new StorageError('Unreachable', 'the SQLite writer thread runs from the built package (dist/), which is missing here: run "npm run build"');
};

/** WriterThread is the main thread's side of the writer thread: the follower's WriterLink, and the thread's life. */
class WriterThread implements WriterLink {
  private nextId = 1;
  private outbox: WriterThreadCall[] = [];
  /** inHand counts the writes sent to the thread and not answered yet. */
  private inHand = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  /** gone is why the thread can take no more writes (stopped, or it failed), once it cannot. */
  private gone: string | undefined;
  private stopped = false;
  private readonly exited: Promise<void>;
  /** opened settles once the thread has opened the file: it rejects with the file's error, or with the thread's end before that. */
  readonly opened: Promise<void>;
  private settleOpen!: (e?: StorageError) => void;
  follower: SqliteEventStore | undefined;
  /** indexLag is the last lag histogram of the search index the thread told. */
  indexLag: SearchIndexLag | undefined;

  constructor(
    private readonly worker: Worker,
    private readonly logger: Logger,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    this.opened = new Promise((resolve, reject) => {
      this.settleOpen = (e) => (e === undefined ? resolve() : reject(e));
    });
    // A store that never opens has no one waiting on it past its opening.
    this.opened.catch(() => {});
    worker.on('message', (m: WriterThreadMessage) => {
      switch (m.t) {
        case 'commit':
          // The commit first: a client that hears of its write can read and watch it at once.
          this.follower?.followCommit(m.rv, m.compacted);
          if (m.replies !== undefined) this.answer(m.replies);
          return;
        case 'replies':
          return this.answer(m.replies);
        case 'log':
          return this.logger[m.level](m.msg, m.fields);
        case 'indexLag':
          this.indexLag = m.lag;
          return;
        case 'ready':
          return this.settleOpen();
        case 'failed':
          return this.settleOpen(fromWireError(m.error));
      }
    });
    worker.on('error', (e) => this.fail(`the SQLite writer thread failed: ${e.message}`));
    worker.on('exit', (code) => this.fail(`the SQLite writer thread stopped (exit code ${code})`));
  }

  /** answer settles the writes the thread answered; with none left in its hands, the writes gathered meanwhile go. */
  private answer(replies: WriterThreadReply[]): void {
    this.inHand -= replies.length;
    if (this.inHand === 0) this.send();
    for (const r of replies) {
      const p = this.pending.get(r.id);
      if (p === undefined) continue;
      this.pending.delete(r.id);
      if (r.error === undefined) p.resolve(r.value);
      else p.reject(fromWireError(r.error));
    }
  }

  /** failure is why the thread failed (it takes no more writes), or undefined while it runs or once it was stopped. */
  failure(): string | undefined {
    return this.gone === undefined || this.stopped ? undefined : this.gone;
  }

  /** fail refuses every write from now on, and those waiting for an answer, with `why`. */
  private fail(why: string): void {
    if (this.gone !== undefined) return;
    this.gone = why;
    this.outbox = [];
    this.settleOpen(new StorageError('Unreachable', why));
    this.logger.error(why);
    for (const p of this.pending.values()) p.reject(new StorageError('Unreachable', why));
    this.pending.clear();
  }

  call(op: FollowerWrite, args: unknown[]): Promise<unknown> {
    if (this.gone !== undefined) return Promise.reject(new StorageError('Unreachable', this.gone));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.outbox.push({ id, op, args });
      if (this.outbox.length >= SEND_AT) this.send();
      else if (this.outbox.length === 1) setImmediate(() => this.inHand === 0 && this.send());
    });
  }

  /** send posts the queued writes to the thread in one message. */
  private send(): void {
    const calls = this.outbox;
    this.outbox = [];
    if (calls.length === 0 || this.gone !== undefined) return;
    try {
      this.worker.postMessage({ t: 'calls', calls });
      this.inHand += calls.length;
    } catch {
      // A write whose arguments cannot cross to the thread (a function, say) fails alone, not its neighbours.
      for (const c of calls) {
        try {
          this.worker.postMessage({ t: 'calls', calls: [c] });
          this.inHand++;
        } catch (e) {
          const p = this.pending.get(c.id);
          this.pending.delete(c.id);
          p?.reject(new StorageError('Internal', `cannot send ${c.op} to the SQLite writer thread: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`));
        }
      }
    }
  }

  createEncoded(json: string, options: WriteOptions): Promise<number> {
    return this.call('createEncoded', [json, options]) as Promise<number>;
  }

  /** stop has the thread close its store (its last commit and checkpoint) and waits for it to end. */
  async stop(): Promise<void> {
    if (this.gone === undefined) {
      // Writes still gathering go first, and the thread commits them before it closes (as a store in one thread flushes its queue).
      this.send();
      this.gone = 'the store is closed';
      this.stopped = true;
      // Waiting for the thread must keep the process alive, though the running thread does not.
      this.worker.ref();
      this.worker.postMessage({ t: 'stop' });
      const timer = setTimeout(() => void this.worker.terminate(), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
      // The thread commits what it was sent before it ends; a write it never answered is refused, not left waiting.
      for (const p of this.pending.values()) p.reject(new StorageError('Unreachable', 'the store is closed'));
      this.pending.clear();
    }
    await this.exited;
  }
}

/** ThreadedSqliteEventStore is the follower the caller uses; closing it closes the writer thread too. */
class ThreadedSqliteEventStore extends SqliteEventStore {
  constructor(
    options: SqliteEventStoreOptions,
    private readonly thread: WriterThread,
  ) {
    super({ ...options, writer: thread });
    thread.follower = this;
  }

  override async close(): Promise<void> {
    await super.close();
    await this.thread.stop();
  }

  override searchIndexLag(): SearchIndexLag | undefined {
    // Nothing indexed yet until the thread first tells.
    return this.thread.indexLag ?? { counts: LAG_BOUNDS.map(() => 0).concat(0), sum: 0, count: 0 };
  }

  /** writerFailure is why the writer thread failed, while it has. */
  writerFailure(): string | undefined {
    return this.thread.failure();
  }
}

/**
 * writerThreadReadiness is the readiness of a store's writer thread, for /readyz:
 * not ready once the thread has failed (every write is refused from then on).
 * A store without a writer thread is always ready here.
 */
export function writerThreadReadiness(store: unknown): { ready: boolean; message: string } {
  const why = store instanceof ThreadedSqliteEventStore ? store.writerFailure() : undefined;
  return why === undefined ? { ready: true, message: 'ok' } : { ready: false, message: why };
}

/** SEARCH_INDEX_LAG_BOUNDS are the upper bounds, in seconds, of the buckets of `searchIndexLagOf`. */
export const SEARCH_INDEX_LAG_BOUNDS = LAG_BOUNDS;

/**
 * searchIndexLagOf is the histogram of the time each version waited for its search index entry, from its commit
 * to the commit of the entry, of a SQLite store that writes its file (in its thread or its writer thread): for
 * /metrics. Undefined for any other store.
 */
export function searchIndexLagOf(store: unknown): SearchIndexLag | undefined {
  return store instanceof SqliteEventStore ? store.searchIndexLag() : undefined;
}

/**
 * openSqliteWithWriterThread opens the SQLite store at `options.path` with its
 * writing on a thread of its own, and resolves once both threads have the file
 * open. It rejects with the StorageError the file gives (as `ready` of a store
 * opened in one thread would). A memory database (`:memory:`) has no second
 * connection: it is opened in this thread. `start` starts the thread (tests
 * running from the sources start the TypeScript module their own way).
 */
export async function openSqliteWithWriterThread(options: SqliteEventStoreOptions, start: StartWriter = startBuiltWriter): Promise<SqliteEventStore> {
  if (options.path === ':memory:' || options.path === '') return new SqliteEventStore(options);
  if (options.writer !== undefined || options.onCommit !== undefined) throw new Error('a store with a writer thread is neither a follower nor the writer of other followers');
  // The writer's expiry and compaction run on the thread's own timers.
  if (options.clock !== undefined && options.clock !== realClock) throw new Error('a store with a writer thread keeps time by the real clock');
  const threadOptions: WriterThreadOptions = { path: options.path };
  for (const k of ['synchronous', 'cacheSizeMiB', 'maxCountRemaining', 'maxBatch', 'searchIndexDelayMs', 'historyWindowSeconds', 'compactIntervalMs', 'expiryIntervalMs', 'watchBufferSize'] as const) {
    if (options[k] !== undefined) (threadOptions as Record<string, unknown>)[k] = options[k];
  }
  const worker = start(threadOptions);
  worker.unref();
  const thread = new WriterThread(worker, options.logger ?? noopLogger);
  try {
    await thread.opened;
  } catch (e) {
    await thread.stop();
    throw e;
  }
  const store = new ThreadedSqliteEventStore(options, thread);
  try {
    await store.ready();
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}
