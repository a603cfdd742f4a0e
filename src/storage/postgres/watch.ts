/**
 * A store's watches: each is served by the replica's change feed (`ChangeFeed`,
 * history replayed from SQL by `ReplayWatch`); a watch asked for before the
 * store has started waits for the feed.
 */
import type { EventWatch, StoreWatchEvent, WatchOptions } from '../event-store.js';
import type { PostgresConnection } from './connection.js';

/** watchFeed starts a watch on the connection's change feed, at once if the store has started. */
export function watchFeed(c: PostgresConnection, options: WatchOptions): EventWatch {
  if (c.state !== undefined && !c.closed) return c.state.feed.watch(options);
  return deferredWatch(c.open().then((s) => s.feed.watch(options)));
}

/** deferredWatch is a watch whose start waits for the store to open. */
function deferredWatch(started: Promise<EventWatch>): EventWatch {
  let inner: EventWatch | undefined;
  let stopped = false;
  const ready = started.then((w) => {
    inner = w;
    if (stopped) w.stop();
    return w;
  });
  ready.catch(() => undefined);
  const it: AsyncIterator<StoreWatchEvent> = {
    async next() {
      const w = await ready;
      if (stopped) return { done: true, value: undefined };
      return w[Symbol.asyncIterator]().next();
    },
    return() {
      stopped = true;
      inner?.stop();
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return {
    [Symbol.asyncIterator]: () => it,
    stop() {
      stopped = true;
      inner?.stop();
    },
  };
}
