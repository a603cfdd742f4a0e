/**
 * abortable settles as `p` does, or rejects with `abortError()` as soon as `signal` aborts (at once when it has
 * already), so a caller's deadline holds even where the work it waits on cannot be cancelled: a late answer is
 * dropped. The listener is removed when `p` settles first.
 */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined, abortError: () => Error): Promise<T> {
  if (signal === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError());
    // A signal that aborted already fires no event: settle at once.
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
