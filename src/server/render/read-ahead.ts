import type { ListedVersion } from '../../storage/index.js';

/** READ_AHEAD_SLICE is how many versions a read-ahead renders before it lets requests in. */
const READ_AHEAD_SLICE = 50;
/** MAX_READ_TOKENS bounds the tokens of pages read ahead that are remembered until asked for. */
const MAX_READ_TOKENS = 64;
/** MAX_READS_AHEAD bounds the pages read ahead at once, whatever the number of clients paging cold. */
const MAX_READS_AHEAD = 2;

interface Pending {
  cancelled: boolean;
}

/**
 * ReadAhead renders the next page of a list whose page was read cold, while the
 * client reads that page. kubectl reads `get events -A` in pages of 500, one
 * after the other: without it, the server waits while the client receives and
 * decodes a page, then the client waits while the server reads and renders the
 * next one from storage. With it, the next page's rows are mostly kept
 * rendered when its request comes.
 *
 * A read-ahead yields to requests every READ_AHEAD_SLICE versions and stops as
 * soon as the page it prepares is asked for (the request renders what is left);
 * at most MAX_READS_AHEAD run at once. Its work is only ever the work the next
 * request would do: a client that stops paging costs one page rendered into the
 * bounded cache.
 */
export class ReadAhead {
  private readonly pending = new Map<string, Pending>();

  /** read are the tokens of recent pages read ahead, so that the read-ahead goes on to the page after them. */
  private readonly read = new Set<string>();

  /**
   * claim says that the page of `token` (a continue token) is being asked for: its read-ahead stops.
   * True if that page was read ahead (the list is being paged cold, whether or not the page now is).
   */
  claim(token: string | undefined): boolean {
    if (token === undefined) return false;
    const p = this.pending.get(token);
    if (p !== undefined) p.cancelled = true;
    return this.read.delete(token) || p !== undefined;
  }

  /**
   * start reads the page of `token` with `read` and renders it with `render`, a
   * slice at a time, once the current request is answered. A failed read is
   * dropped: the request for the page, if it comes, reads it again and answers
   * the error.
   */
  start(token: string, read: () => Promise<readonly ListedVersion[]>, render: (items: readonly ListedVersion[]) => void): void {
    if (this.pending.has(token) || this.pending.size >= MAX_READS_AHEAD) return;
    const state: Pending = { cancelled: false };
    this.pending.set(token, state);
    if (this.read.size >= MAX_READ_TOKENS) this.read.delete(this.read.values().next().value!);
    this.read.add(token);
    setImmediate(() => {
      void this.run(state, read, render).finally(() => this.pending.delete(token));
    });
  }

  /** inFlight is the number of pages being read ahead (for tests). */
  get inFlight(): number {
    return this.pending.size;
  }

  private async run(state: Pending, read: () => Promise<readonly ListedVersion[]>, render: (items: readonly ListedVersion[]) => void): Promise<void> {
    if (state.cancelled) return;
    let items: readonly ListedVersion[];
    try {
      items = await read();
    } catch {
      return;
    }
    for (let i = 0; i < items.length && !state.cancelled; i += READ_AHEAD_SLICE) {
      try {
        render(items.slice(i, i + READ_AHEAD_SLICE));
      } catch {
        return;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
