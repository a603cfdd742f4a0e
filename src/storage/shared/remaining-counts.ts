/** MAX_REMAINDERS bounds the counts kept for the next page of a list (one per list being paged). */
const MAX_REMAINDERS = 256;

/**
 * RemainingCounts carries `remainingItemCount` from one page of a list to the
 * next. A continued page of `taken` items that were every key after `from` (no
 * filter) at revision `at` leaves the count after `from` less `taken`: paging
 * through N events counts them once rather than scanning the rest of the index
 * for each page. Counts are kept by revision and key range, so a write between
 * the pages (which the pages, read at the list's revision, do not see) changes nothing.
 */
export class RemainingCounts {
  private readonly counts = new Map<string, number>();
  /** floors are counts known only to be at least so much (a count stopped at its cap), by the same keys. */
  private readonly floors = new Map<string, number>();

  /** carried is the count after the page that began after `from`, if the page before it left one; `taken` undefined: the page was filtered. */
  carried(at: number, high: string | undefined, from: string, taken: number | undefined): number | undefined {
    if (taken === undefined) return undefined;
    const before = this.counts.get(keyOf(at, high, from));
    return before === undefined ? undefined : before - taken;
  }

  /**
   * remember keeps `n`, the count of every key after `last` in the range at `at`, for the page after it.
   * The count ignores the list's filter, so a filtered page's is kept too.
   */
  remember(at: number, high: string | undefined, last: string, n: number | undefined): void {
    if (n === undefined) return;
    keep(this.counts, keyOf(at, high, last), n);
  }

  /** carriedFloor is how many keys at least follow the page that began after `from`, if the page before it left a floor (`rememberFloor`). */
  carriedFloor(at: number, high: string | undefined, from: string, taken: number | undefined): number | undefined {
    if (taken === undefined) return undefined;
    const before = this.floors.get(keyOf(at, high, from));
    return before === undefined ? undefined : before - taken;
  }

  /** rememberFloor keeps that at least `n` keys follow `last` in the range at `at` (a count that stopped at its cap), for the page after it. */
  rememberFloor(at: number, high: string | undefined, last: string, n: number): void {
    keep(this.floors, keyOf(at, high, last), n);
  }
}

function keep(map: Map<string, number>, key: string, n: number): void {
  if (map.size >= MAX_REMAINDERS) map.delete(map.keys().next().value!);
  map.set(key, n);
}

function keyOf(at: number, high: string | undefined, key: string): string {
  return `${at} ${high ?? ''} ${key}`;
}
