/** HeldKey is a row that a read chose once for all its pages (a window's failures): its revision and key. */
export interface HeldKey {
  rv: number;
  key: string;
}

/**
 * pageOfHeld is what a page from `start` reads of the rows a read holds (`keys`, in key order): up to `limit` of
 * those after it, and whether they are its last (the read then lets go of them).
 */
export function pageOfHeld<K extends HeldKey>(keys: readonly K[], start: string, limit: number): { page: K[]; last: boolean } {
  let from = 0;
  for (let to = keys.length; from < to; ) {
    const mid = (from + to) >>> 1;
    if (keys[mid]!.key <= start) from = mid + 1;
    else to = mid;
  }
  const end = Math.min(keys.length, from + limit);
  return { page: keys.slice(from, end), last: end === keys.length };
}
