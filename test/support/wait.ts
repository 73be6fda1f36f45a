// Polling helpers shared by the suites that wait on workflows and processes.
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it yields a truthy value (returned) or `timeoutMs` passes (throws). */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  what = 'condition',
  everyMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
