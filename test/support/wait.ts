/** sleep waits for real time to pass (the processes under test run on their own clocks). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** until polls a condition that real I/O will make true, failing with `what` after a generous bound. */
export async function until(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 60_000, pollMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(pollMs);
  }
}
