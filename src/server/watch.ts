import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStatusError, newInternalError, newTooLargeResourceVersion } from '../api/index.js';
import type { CoreEvent, EventApi, Status } from '../api/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { EventFilter, EventStore, StoreWatchEvent } from '../storage/index.js';
import type { OutputFormat } from './http-io.js';
import { parseResourceVersion } from './query.js';
import type { ListQuery } from './query.js';
import { toStatusError } from './storage-errors.js';

/** WATCH_BUFFER_LIMIT is how many bytes may wait unsent for one watcher before it is ended as too slow. */
export const WATCH_BUFFER_LIMIT = 8 * 1024 * 1024;
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

const encodedFrames = new WeakMap<CoreEvent, Map<string, string>>();

function objectJson(deps: WatchDeps, event: CoreEvent, format: OutputFormat, api: EventApi): string {
  if (format.kind === 'table') return deps.renderObject(event, format);
  let byFormat = encodedFrames.get(event);
  if (byFormat === undefined) {
    byFormat = new Map();
    encodedFrames.set(event, byFormat);
  }
  const key = api;
  let json = byFormat.get(key);
  if (json === undefined) {
    json = deps.renderObject(event, format);
    byFormat.set(key, json);
  }
  return json;
}

/**
 * serveWatch streams a watch as kube-apiserver does for events (etcd3 semantics):
 * an initial replay of the current state as ADDED when no resourceVersion (or
 * "0") is given or `sendInitialEvents=true`, the initial-events-end bookmark when
 * asked for, then every change in resourceVersion order; a compacted start or a
 * consumer that cannot keep up gets one ERROR frame and the stream ends.
 */
export async function serveWatch(req: IncomingMessage, res: ServerResponse, deps: WatchDeps, w: WatchRequest): Promise<void> {
  const { query, api, format } = w;
  const rvText = query.resourceVersion;
  const replay = query.sendInitialEvents ?? (rvText === undefined || rvText === '0');
  const bookmarkAtEnd = replay && query.allowWatchBookmarks && query.sendInitialEvents !== false;
  const requestedRv = rvText === undefined || rvText === '0' ? undefined : parseResourceVersion(rvText);

  const matches = (e: CoreEvent): boolean =>
    (w.name === undefined || e.metadata.name === w.name) && (w.filter.predicate === undefined || w.filter.predicate(e));

  res.writeHead(200, {
    'Content-Type': format.kind === 'table' ? `application/json;as=Table;v=${format.version};g=meta.k8s.io` : 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

  let closed = false;
  let storeWatch: { stop(): void } | undefined;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    storeWatch?.stop();
    clearTimeout(timer);
    deps.onClose?.();
    if (!res.writableEnded) res.end();
  };
  const timeoutSeconds =
    query.timeoutSeconds !== undefined && query.timeoutSeconds > 0
      ? query.timeoutSeconds
      : MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random());
  const timer = setTimeout(finish, timeoutSeconds * 1000);
  res.on('close', finish);
  deps.onOpen?.();

  const writeFrame = (type: string, objectText: string): boolean => {
    if (closed) return false;
    res.write(`{"type":"${type}","object":${objectText}}\n`);
    deps.onFrame?.(type);
    if (res.writableLength > WATCH_BUFFER_LIMIT) {
      deps.logger.warn('ending a watch whose client does not keep up', { buffered: res.writableLength });
      const status = toStatusError({ name: 'StorageError', code: 'WatcherTooSlow', message: `${res.writableLength} bytes unsent` }, 'watch');
      if (isStatusError(status)) res.write(`{"type":"ERROR","object":${JSON.stringify(status.status)}}\n`);
      finish();
      return false;
    }
    return true;
  };
  const writeError = (status: Status): void => {
    if (closed) return;
    res.write(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    finish();
  };
  const statusOf = (e: unknown): Status => {
    const mapped = toStatusError(e, 'watch');
    if (isStatusError(mapped)) return mapped.status;
    deps.logger.error('unexpected error in a watch (bug)', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return newInternalError(e).status;
  };

  try {
    let startRv: number;
    if (replay) {
      const current = await deps.store.currentResourceVersion();
      if (requestedRv !== undefined && requestedRv > current) {
        writeError(newTooLargeResourceVersion(requestedRv, current).status);
        return;
      }
      startRv = await replayCurrentState(deps, w, matches, (e) => writeFrame('ADDED', objectJson(deps, e, format, api)));
      if (closed) return;
      if (bookmarkAtEnd) {
        const bookmark = {
          kind: 'Event',
          apiVersion: api,
          metadata: { resourceVersion: String(startRv), annotations: { 'k8s.io/initial-events-end': 'true' } },
        };
        writeFrame('BOOKMARK', JSON.stringify(bookmark));
      }
    } else {
      startRv = requestedRv ?? (await deps.store.currentResourceVersion());
    }
    if (closed) return;
    const watchOpts: { resourceVersion: number; namespace?: string } = { resourceVersion: startRv };
    if (w.filter.namespace !== undefined) watchOpts.namespace = w.filter.namespace;
    const sw = deps.store.watch(watchOpts);
    storeWatch = sw;
    if (closed) {
      sw.stop();
      return;
    }
    for await (const change of sw) {
      const frame = transition(change, matches);
      if (frame === undefined) continue;
      if (!writeFrame(frame.type, objectJson(deps, frame.object, format, api))) break;
    }
    finish();
  } catch (e) {
    writeError(statusOf(e));
  }
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
      ...(startKey !== undefined ? { startKey } : {}),
      ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
    });
    rv ??= page.resourceVersion;
    for (const e of page.items) if (!emit(e)) return rv;
    if (page.lastKey === undefined) return rv;
    startKey = page.lastKey;
  }
}
