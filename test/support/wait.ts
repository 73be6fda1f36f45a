// The poller the suites share to wait on workflows, rows and processes (a fixed pause is
// node:timers/promises setTimeout).
import { setTimeout as sleep } from 'node:timers/promises';

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
