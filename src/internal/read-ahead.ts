/** ReadAhead hands out, in order, the pages a background reader fetched ahead of the caller. */
export interface ReadAhead<P> {
  /** next is the next page, undefined after the last; a failed read is thrown once the pages before it are taken. */
  next(): Promise<P | undefined>;
  /** stop ends the reading: no page is fetched after it (a fetch under way completes). */
  stop(): void;
}

/**
 * readAhead reads a chain of pages (each names the next with a token) up to
 * `depth` pages ahead of the reader. A failed read is thrown by `next` once the
 * pages before it are taken; `stop` ends the reading.
 */
export function readAhead<P>(
  fetch: (token: string | undefined) => Promise<P>,
  tokenOf: (page: P) => string | undefined,
  depth: number,
): ReadAhead<P> {
  const ready: P[] = [];
  let finished = false;
  let stopped = false;
  let failure: { error: unknown } | undefined;
  let wakeReader: (() => void) | undefined;
  let wakeFetcher: (() => void) | undefined;
  const wake = (): void => {
    wakeReader?.();
    wakeReader = undefined;
  };
  void (async () => {
    try {
      let token: string | undefined;
      do {
        while (ready.length >= depth && !stopped) await new Promise<void>((r) => (wakeFetcher = r));
        if (stopped) return;
        const page = await fetch(token);
        ready.push(page);
        wake();
        token = tokenOf(page);
      } while (token !== undefined);
    } catch (e) {
      failure = { error: e };
    } finally {
      finished = true;
      wake();
    }
  })();
  return {
    async next(): Promise<P | undefined> {
      while (ready.length === 0 && !finished) await new Promise<void>((r) => (wakeReader = r));
      const page = ready.shift();
      wakeFetcher?.();
      wakeFetcher = undefined;
      if (page !== undefined) return page;
      if (failure !== undefined) throw failure.error;
      return undefined;
    },
    stop(): void {
      stopped = true;
      wakeFetcher?.();
      wakeFetcher = undefined;
    },
  };
}
