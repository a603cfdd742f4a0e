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
    if (this.counts.size >= MAX_REMAINDERS) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(keyOf(at, high, last), n);
  }
}

function keyOf(at: number, high: string | undefined, key: string): string {
  return `${at} ${high ?? ''} ${key}`;
}
