import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStatusError, newInternalError, newStatusError, newTooLargeResourceVersion } from '../../api/index.js';
import type { CoreEvent, EventApi, Status } from '../../api/index.js';
import type { Clock, Logger } from '../../internal/index.js';
import type { EventFilter, EventStore, StoreWatchEvent } from '../../storage/index.js';
import { StoreFanout } from './watch-feed.js';
import type { FeedMember, SharedChange } from './watch-feed.js';
import type { OutputFormat } from '../http/http-io.js';
import { yieldLoop } from '../../internal/index.js';
import { SCAN_CHUNK } from './list.js';
import { parseResourceVersion } from './query.js';
import type { ListQuery } from './query.js';
import { toStatusError } from './storage-errors.js';

/** WATCH_BUFFER_LIMIT is how many bytes may wait unsent for one watcher before it is ended as too slow. */
export const WATCH_BUFFER_LIMIT = 8 * 1024 * 1024;
/** WATCH_TOTAL_BUFFER_LIMIT is how many bytes may wait unsent for all watchers together: many slow readers, each under its own limit, must not fill the heap. */
export const WATCH_TOTAL_BUFFER_LIMIT = 128 * 1024 * 1024;
/** MIN_REQUEST_TIMEOUT_SECONDS is upstream's --min-request-timeout default; watches last 1–2× this. */
export const MIN_REQUEST_TIMEOUT_SECONDS = 1800;
const INITIAL_PAGE = 500;

/** WatchDeps are what a watch request needs from the server. */
export interface WatchDeps {
  store: EventStore;
  clock: Clock;
  logger: Logger;
  /** renderObject turns a stored event into the wire object (or Table) of the request. */
  renderObject: (event: CoreEvent, format: OutputFormat) => string;
  onOpen?: () => void;
  onClose?: () => void;
  onFrame?: (type: string) => void;
}

/** WatchRequest describes one watch. */
export interface WatchRequest {
  api: EventApi;
  query: ListQuery;
  filter: EventFilter & { hasSelectors: boolean };
  format: OutputFormat;
  /** name limits the watch to one object (`/watch/namespaces/x/events/name` or a metadata.name selector). */
  name?: string;
}

/** fanouts holds the one StoreFanout of each store, made by its first watch. */
const fanouts = new WeakMap<EventStore, StoreFanout>();

function fanoutOf(store: EventStore): StoreFanout {
  let fanout = fanouts.get(store);
  if (fanout === undefined) fanouts.set(store, (fanout = new StoreFanout(store)));
  return fanout;
}

/** encodingOf names what a frame's object looks like for a request, so watchers that would encode alike share one encoding. */
function encodingOf(w: WatchRequest): string {
  return w.format.kind === 'table' ? `${w.api}|Table|${w.format.version}|${w.query.includeObject ?? ''}` : w.api;
}

/**
 * WATCH_FLUSH_MS is how long a frame may wait for others to share its socket write:
 * with many watchers each write is a system call on both ends, and 20 ms of
 * batching (a fifth of the 100 ms delivery target) cuts them several times at 200 changes/s.
 */
export const WATCH_FLUSH_MS = 20;

/** behind holds the watchers with bytes waiting unsent, so the total is summed over them alone. */
const behind = new Set<HttpWatcher>();

/** dirty holds the watchers with frames waiting for the next flush, when all of them are written, each watcher's in one socket write. */
const dirty = new Set<HttpWatcher>();
let flushScheduled = false;

function flushAll(): void {
  flushScheduled = false;
  const watchers = [...dirty];
  dirty.clear();
  const joined = new Joined();
  for (const w of watchers) w.flush(joined);
}

const CRLF = Buffer.from('\r\n', 'latin1');

/** Batch is the frames of one flush for one or more watchers: joined once, and framed as one HTTP/1.1 chunk once. */
class Batch {
  private framed: Buffer | undefined;

  constructor(
    readonly frames: Buffer[],
    readonly data: Buffer,
  ) {}

  /** chunk is `data` as one chunk of a chunked response body. */
  chunk(): Buffer {
    this.framed ??= Buffer.concat([Buffer.from(`${this.data.length.toString(16)}\r\n`, 'latin1'), this.data, CRLF]);
    return this.framed;
  }
}

/** Joined finds the Batch of a watcher's frames in one flush, shared by all watchers that got the same frames (the usual case). */
class Joined {
  private readonly byFirst = new Map<Buffer, Batch[]>();

  of(frames: Buffer[]): Batch {
    const first = frames[0]!;
    let seen = this.byFirst.get(first);
    if (seen === undefined) this.byFirst.set(first, (seen = []));
    for (const b of seen) {
      if (b.frames.length === frames.length && b.frames.every((f, i) => f === frames[i])) return b;
    }
    const batch = new Batch(frames, frames.length === 1 ? first : Buffer.concat(frames));
    seen.push(batch);
    return batch;
  }
}

/** HttpWatcher is one watch response: it takes shared changes, applies its own selectors and writes the frames. */
class HttpWatcher implements FeedMember {
  readonly namespace: string | undefined;
  /** cursor is the revision of the last change taken (written or filtered out). */
  cursor = 0;
  closed = false;
  readonly done: Promise<void>;
  private out: Buffer[] = [];
  private readonly encoding: string;
  private readonly render: (e: CoreEvent) => string;
  private readonly timer: NodeJS.Timeout;
  private resolveDone!: () => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly deps: WatchDeps,
    private readonly w: WatchRequest,
    private readonly onEnd: (w: HttpWatcher) => void,
  ) {
    this.namespace = w.filter.namespace;
    this.encoding = encodingOf(w);
    this.render = (e) => deps.renderObject(e, w.format);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const q = w.query;
    const timeoutSeconds = q.timeoutSeconds !== undefined && q.timeoutSeconds > 0 ? q.timeoutSeconds : MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random());
    this.timer = setTimeout(() => this.end(), timeoutSeconds * 1000);
    res.on('close', () => this.finish());
  }

  matches(e: CoreEvent): boolean {
    return (this.w.name === undefined || e.metadata.name === this.w.name) && (this.w.filter.predicate === undefined || this.w.filter.predicate(e));
  }

  /** writeNow writes one frame of the replay or a bookmark; false when the watch is over. */
  writeNow(type: string, frame: string | Buffer): boolean {
    if (this.closed) return false;
    this.res.write(frame);
    this.deps.onFrame?.(type);
    return this.checkBuffered();
  }

  offer(c: SharedChange): void {
    if (this.closed || c.rv <= this.cursor) return;
    this.cursor = c.rv;
    const t = transition(c.change, (e) => this.matches(e));
    if (t === undefined) return;
    this.out.push(c.frame(this.encoding, t.type, t.object, this.render));
    this.deps.onFrame?.(t.type);
    dirty.add(this);
    if (!flushScheduled) {
      flushScheduled = true;
      setTimeout(flushAll, WATCH_FLUSH_MS);
    }
  }

  flush(joined: Joined): void {
    const frames = this.out;
    this.out = [];
    if (this.closed || frames.length === 0) return;
    const batch = joined.of(frames);
    // A chunked body after its headers: one pre-framed chunk per flush, shared by every watcher
    // that got the same frames, goes straight to the socket (one write, no per-response framing);
    // the response's own writes (replay, ERROR, the final chunk) share that socket in order.
    const socket = this.res.socket;
    if (this.res.chunkedEncoding && this.res.headersSent && socket !== null && !socket.destroyed) socket.write(batch.chunk());
    else this.res.write(batch.data);
    this.checkBuffered();
  }

  /** end closes the watch (its source ended, or timeoutSeconds passed): its frames so far are written, then the ERROR frame of `error`, if any. */
  end(error?: unknown): void {
    dirty.delete(this);
    this.flush(new Joined());
    if (error === undefined) this.finish();
    else this.fail(statusOf(this.deps, error));
  }

  fail(status: Status): void {
    if (this.closed) return;
    this.res.write(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.finish();
  }

  finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.out = [];
    dirty.delete(this);
    behind.delete(this);
    clearTimeout(this.timer);
    this.onEnd(this);
    this.deps.onClose?.();
    if (!this.res.writableEnded) this.res.end();
    this.resolveDone();
  }

  /** buffered is how many bytes of this watch wait unsent (in the response and its socket). */
  buffered(): number {
    return this.closed ? 0 : this.res.writableLength;
  }

  private checkBuffered(): boolean {
    const buffered = this.buffered();
    if (buffered === 0) {
      behind.delete(this);
      return true;
    }
    behind.add(this);
    let total = 0;
    for (const w of behind) total += w.buffered();
    if (buffered <= WATCH_BUFFER_LIMIT && total <= WATCH_TOTAL_BUFFER_LIMIT) return true;
    this.deps.logger.warn('ending a watch whose client does not keep up', { buffered, allWatches: total });
    this.fail(statusOf(this.deps, { name: 'StorageError', code: 'WatcherTooSlow', message: `${buffered} bytes unsent` }));
    // The ERROR frame queues behind what the client does not read: the connection is reset, so its
    // buffers (ours and the kernel's) are freed now rather than whenever (if ever) the client reads them.
    resetConnection(this.res);
    return false;
  }
}

/** resetConnection drops a response's connection with a TCP reset (a plain close would wait for the unread bytes to be sent); TLS is closed. */
function resetConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return void res.destroy();
  try {
    socket.resetAndDestroy();
  } catch {
    // A TLS socket has no TCP handle of its own to reset.
    socket.destroy();
  }
}

function statusOf(deps: WatchDeps, e: unknown): Status {
  const mapped = toStatusError(e, 'watch');
  if (isStatusError(mapped)) return mapped.status;
  deps.logger.error('unexpected error in a watch (bug)', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  return newInternalError(e).status;
}

/**
 * initialEventsEndBookmark is the object of the bookmark that ends the initial events, as kube-apiserver
 * writes it: an empty Event of the request's API (Go's zero values included) whose annotations mark the end
 * and carry the blueprint of the list a watch-list client builds (an empty EventList, base64 of its JSON line).
 */
export function initialEventsEndBookmark(api: EventApi, resourceVersion: number): Record<string, unknown> {
  const blueprint = Buffer.from(`${JSON.stringify({ kind: 'EventList', apiVersion: api, metadata: {}, items: null })}\n`).toString('base64');
  const metadata = {
    resourceVersion: String(resourceVersion),
    creationTimestamp: null,
    annotations: { 'k8s.io/initial-events-end': 'true', 'kubernetes.io/initial-events-list-blueprint': blueprint },
  };
  return api === 'v1'
    ? { kind: 'Event', apiVersion: api, metadata, involvedObject: {}, source: {}, firstTimestamp: null, lastTimestamp: null, eventTime: null, reportingComponent: '', reportingInstance: '' }
    : { kind: 'Event', apiVersion: api, metadata, eventTime: null, regarding: {}, deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null };
}

/**
 * serveWatch streams a watch as kube-apiserver does for events (etcd3 semantics):
 * an initial replay of the current state as ADDED when no resourceVersion (or
 * "0") is given or `sendInitialEvents=true`, the initial-events-end bookmark when
 * asked for, then every change in resourceVersion order; a compacted start or a
 * consumer that cannot keep up gets one ERROR frame and the stream ends. Changes
 * come from the store's StoreFanout, decoded and encoded once for all watchers.
 */
export async function serveWatch(_req: IncomingMessage, res: ServerResponse, deps: WatchDeps, w: WatchRequest): Promise<void> {
  const { query, api, format } = w;
  const rvText = query.resourceVersion;
  const replay = query.sendInitialEvents ?? (rvText === undefined || rvText === '0');
  const bookmarkAtEnd = replay && query.allowWatchBookmarks && query.sendInitialEvents !== false;
  let requestedRv: number | undefined;
  try {
    requestedRv = rvText === undefined || rvText === '0' ? undefined : parseResourceVersion(rvText);
  } catch (e) {
    // kube-apiserver's watch reports a resourceVersion it cannot parse as a 500 without a reason.
    throw isStatusError(e) ? newStatusError(500, undefined, e.status.message ?? '') : e;
  }

  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

  const fanout = fanoutOf(deps.store);
  const watcher = new HttpWatcher(res, deps, w, (x) => fanout.leave(x));
  deps.onOpen?.();
  try {
    let startRv: number;
    if (replay) {
      const current = await deps.store.currentResourceVersion();
      if (requestedRv !== undefined && requestedRv > current) {
        watcher.fail(newTooLargeResourceVersion(requestedRv, current).status);
        return;
      }
      startRv = await replayCurrentState(deps, w, (e) => watcher.matches(e), (e) => watcher.writeNow('ADDED', `{"type":"ADDED","object":${deps.renderObject(e, format)}}\n`));
      if (watcher.closed) return;
      if (bookmarkAtEnd) {
        watcher.writeNow('BOOKMARK', `{"type":"BOOKMARK","object":${JSON.stringify(initialEventsEndBookmark(api, startRv))}}\n`);
      }
    } else {
      startRv = requestedRv ?? (await deps.store.currentResourceVersion());
    }
    if (watcher.closed) return;
    watcher.cursor = startRv;
    await fanout.join(watcher, startRv);
    if (watcher.closed) fanout.leave(watcher);
  } catch (e) {
    watcher.fail(statusOf(deps, e));
  }
  await watcher.done;
}

/** transition applies a selector to a change: starting to match is ADDED, stopping is DELETED. */
export function transition(change: StoreWatchEvent, matches: (e: CoreEvent) => boolean): { type: string; object: CoreEvent } | undefined {
  const now = matches(change.object);
  if (change.type !== 'MODIFIED' || change.prevObject === undefined) {
    return now ? { type: change.type, object: change.object } : undefined;
  }
  const before = matches(change.prevObject);
  if (now && before) return { type: 'MODIFIED', object: change.object };
  if (now) return { type: 'ADDED', object: change.object };
  if (before) {
    // Upstream sends the old object with the new resourceVersion.
    const old = { ...change.prevObject, metadata: { ...change.prevObject.metadata, resourceVersion: change.object.metadata.resourceVersion } };
    return { type: 'DELETED', object: old };
  }
  return undefined;
}

async function replayCurrentState(
  deps: WatchDeps,
  w: WatchRequest,
  matches: (e: CoreEvent) => boolean,
  emit: (e: CoreEvent) => boolean,
): Promise<number> {
  let startKey: string | undefined;
  let rv: number | undefined;
  for (;;) {
    const page = await deps.store.list({
      ...w.filter,
      predicate: matches,
      limit: INITIAL_PAGE,
      // A selector that keeps few events must not hold the loop for the whole store.
      maxExamined: SCAN_CHUNK,
      ...(startKey !== undefined ? { startKey } : {}),
      ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
    });
    rv ??= page.resourceVersion;
    for (const e of page.items) if (!emit(e)) return rv;
    if (page.lastKey === undefined) return rv;
    startKey = page.lastKey;
    await yieldLoop();
  }
}
