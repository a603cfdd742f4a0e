/**
 * TIME_SLICE_MS is how long a read may keep the event loop before it lets other requests (a probe's /healthz
 * among them) run: decoding a stranger's megabyte-long events hundreds at a time takes seconds.
 */
export const TIME_SLICE_MS = 4;

/** yieldLoop lets every other request (and timer) run before the caller goes on. */
export function yieldLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * mapSliced maps `items` as `Array.map` does, letting the event loop go whenever it has held it for
 * `sliceMs`: one read's decoding never holds the server for longer than that at a time.
 */
export async function mapSliced<T, U>(items: readonly T[], fn: (item: T, index: number) => U, sliceMs = TIME_SLICE_MS): Promise<U[]> {
  const out: U[] = new Array<U>(items.length);
  let started = performance.now();
  for (let i = 0; i < items.length; i++) {
    out[i] = fn(items[i]!, i);
    if (performance.now() - started > sliceMs && i + 1 < items.length) {
      await yieldLoop();
      started = performance.now();
    }
  }
  return out;
}
