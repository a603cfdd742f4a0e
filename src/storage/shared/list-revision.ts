import type { ListOptions } from '../event-store.js';
import { StorageError } from '../errors.js';

/**
 * listRevision is the revision a list reads at, as etcd3 answers it: the latest
 * unless an exact revision is asked for; a future revision is
 * TooLargeResourceVersion, a compacted exact one ResourceVersionExpired.
 */
export function listRevision(options: Pick<ListOptions, 'resourceVersion' | 'match'>, current: number, compacted: number): number {
  const want = options.resourceVersion;
  if (want === undefined || want === 0) return current;
  if (want > current) {
    throw new StorageError('TooLargeResourceVersion', `Too large resource version: ${want}, current: ${current}`, {
      resourceVersion: want,
      currentResourceVersion: current,
    });
  }
  if (options.match !== 'Exact') return current;
  if (want < compacted) {
    throw new StorageError('ResourceVersionExpired', `resourceVersion ${want} is older than the oldest kept revision ${compacted}`, {
      resourceVersion: want,
      currentResourceVersion: current,
    });
  }
  return want;
}
