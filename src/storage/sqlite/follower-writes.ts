import { StorageError, isStorageError } from '../errors.js';
import type { FailedPrecondition, StorageErrorCode } from '../errors.js';
import type { FollowerWrite } from './options.js';
import type { SqliteEventStore } from './sqlite-event-store.js';

/**
 * What a follower's writer runs for it, wherever the writer is (the primary
 * process of `kevents serve --workers`, or the writer thread of one process),
 * and how a write's StorageError crosses to the follower as plain data.
 */

/** WireError is a StorageError as plain data: what crosses a process's or a thread's channel. */
export interface WireError {
  code: StorageErrorCode;
  message: string;
  key?: string;
  resourceVersion?: number;
  currentResourceVersion?: number;
  precondition?: FailedPrecondition;
}

/** toWireError is the plain form of a write's failure: a StorageError keeps its code and details, anything else is Internal. */
export function toWireError(e: unknown): WireError {
  if (isStorageError(e)) {
    const w: WireError = { code: e.code, message: e.message };
    if (e.key !== undefined) w.key = e.key;
    if (e.resourceVersion !== undefined) w.resourceVersion = e.resourceVersion;
    if (e.currentResourceVersion !== undefined) w.currentResourceVersion = e.currentResourceVersion;
    if (e.precondition !== undefined) w.precondition = { ...e.precondition };
    return w;
  }
  return { code: 'Internal', message: e instanceof Error ? e.message : String(e) };
}

/** fromWireError is the StorageError a follower rejects with, as the writer threw it. */
export function fromWireError(w: WireError): StorageError {
  return new StorageError(w.code, w.message, w);
}

/** runFollowerWrite runs a follower's write on the writer's store: the store's method of that name, with the follower's arguments. */
export function runFollowerWrite(store: SqliteEventStore, op: FollowerWrite, args: unknown[]): Promise<unknown> {
  try {
    const a = args as [never, never, never, never, never];
    switch (op) {
      case 'create':
        return store.create(a[0], a[1]);
      case 'createEncoded':
        return store.createEncoded(a[0], a[1]);
      case 'delete':
        return store.delete(a[0], a[1], a[2]);
      case 'writeIfAt':
        return store.writeIfAt(a[0], a[1], a[2], a[3], a[4]);
      case 'applyArchiveBatch':
        return store.applyArchiveBatch(a[0]);
      case 'bindCluster':
        return store.bindCluster(a[0]);
      case 'enforceRetention':
        return store.enforceRetention(a[0]);
      default:
        return Promise.reject(new StorageError('Internal', `unknown write ${JSON.stringify(op)}`));
    }
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}
