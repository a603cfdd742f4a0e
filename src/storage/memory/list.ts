/**
 * A memory store's reads: a get, and lists that walk the keys in order through
 * the B+ tree, take each key's version visible at the list's revision, and page
 * and count what remains as the persistent backends do.
 */
import type { CoreEvent } from '../../api/index.js';
import type { ListOptions, ListResult } from '../event-store.js';
import { StorageError } from '../errors.js';
import { DEFAULT_MAX_COUNT_REMAINING, decodeEvent, eventKey, listRevision, matchesFilter, namespaceRange } from '../shared/index.js';
import type { MemoryVersions } from './versions.js';

/** getAt is the live version of one event, or KeyNotFound. */
export function getAt(v: MemoryVersions, namespace: string, name: string): CoreEvent {
  const key = eventKey(namespace, name);
  const live = v.live(key);
  if (live === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: v.rv });
  return decodeEvent(live.json, live.rv);
}

/** listAt answers a list over the versions `v` holds. */
export function listAt(v: MemoryVersions, options: ListOptions): ListResult {
  const at = listRevision(options, v.rv, v.compacted);
  const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
  const from = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
  const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
  const items: CoreEvent[] = [];
  const keys = v.keys.keys(from);
  const maxExamined = options.maxExamined !== undefined && options.maxExamined > 0 ? options.maxExamined : Infinity;
  let examined = 0;
  let lastExamined: string | undefined;
  while (items.length < limit) {
    if (examined >= maxExamined) {
      // Stopped early: the caller reads on from here, in another turn of the loop.
      return { items, resourceVersion: at, ...(lastExamined !== undefined ? { lastKey: lastExamined } : {}) };
    }
    const next = keys.next();
    if (next.done === true) break;
    const key = next.value;
    if (key === from) continue;
    if (high !== undefined && key >= high) break;
    const version = v.visible(key, at);
    if (version === undefined) continue;
    examined++;
    lastExamined = key;
    const event = decodeEvent(version.json, version.rv);
    if (matchesFilter(event, options)) items.push(event);
  }
  const result: ListResult = { items, resourceVersion: at };
  if (items.length >= limit) {
    let remaining = 0;
    // Counting stops past the cap, as in the persistent backends: beyond it the count is left out.
    for (const key of keys) {
      if (high !== undefined && key >= high) break;
      if (v.visible(key, at) === undefined) continue;
      remaining++;
      if (options.countRemaining !== true || remaining > DEFAULT_MAX_COUNT_REMAINING) break;
    }
    if (remaining > 0) {
      const last = items[items.length - 1]!;
      result.lastKey = eventKey(last.metadata.namespace!, last.metadata.name!);
      if (options.countRemaining === true && remaining <= DEFAULT_MAX_COUNT_REMAINING) result.remainingItemCount = remaining;
    }
  }
  return result;
}
