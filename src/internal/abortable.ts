/**
 * abortable settles as `p` does, or rejects as soon as `signal` aborts (at once if it already
 * has), so a caller's deadline holds over work that takes no signal of its own; a late answer of
 * `p` is then dropped. The rejection is `message` when given, else the signal's reason.
 */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined, message?: string): Promise<T> {
  if (signal === undefined) return p;
  const reason = (): Error => (message !== undefined ? new Error(message) : signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reason());
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
