/**
 * What a follower's watchers see: a follower (`SqliteEventStoreOptions.writer`)
 * never commits, so its watch hub is fed by reading the file past its revision,
 * when its writer reports a commit and before each of its reads. A writer's hub
 * is fed by its own commits (`SqliteConnection.flush`).
 */
import type { SqliteConnection } from './connection.js';
import { storageFailure } from './connection.js';

/** FOLLOW_BATCH is how many changes a follower reads from the file at a time while catching up. */
const FOLLOW_BATCH = 1_000;

/**
 * followCommit tells a follower that its writer committed up to revision `rv`
 * (compaction point `compacted`): the follower reads what it has not seen from
 * the file and hands it to its watchers, in order.
 */
export function followCommit(c: SqliteConnection, rv: number, compacted: number): void {
  if (c.writer === undefined || c.db === undefined || c.closed) return;
  try {
    catchUp(c, rv, compacted);
  } catch (e) {
    c.o.logger.error('sqlite follower could not read new commits', { error: storageFailure(e) });
  }
}

/** catchUp publishes every change committed to the file past this follower's revision. */
function catchUp(c: SqliteConnection, rv = 0, compacted?: number): void {
  if (c.hub.size === 0) {
    // No watcher to hand changes to: the revision alone moves (a watch that starts later reads its history from the file).
    c.rv = Math.max(c.rv, rv > 0 ? rv : (c.stmt.maxRv.get()?.rv ?? 0));
  } else {
    for (;;) {
      const changes = c.changesAfter(c.rv, FOLLOW_BATCH);
      if (changes.length > 0) {
        c.rv = changes[changes.length - 1]!.rv;
        c.hub.publish(changes);
      }
      if (changes.length < FOLLOW_BATCH) break;
    }
    // A revision with no version (an occurrence's) moves the follower too.
    c.rv = Math.max(c.rv, rv);
  }
  c.compacted = Math.max(c.compacted, compacted ?? c.stmt.getMeta.get('compacted')?.value ?? 0);
}

/** followerRead runs a read of a follower in one snapshot of the file, after publishing what that snapshot holds past the follower's revision. */
export function followerRead<T>(c: SqliteConnection, fn: () => T): T {
  if (c.writer === undefined) return fn();
  return c.db!.transaction(() => {
    catchUp(c);
    return fn();
  })();
}
