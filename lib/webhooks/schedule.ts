// The retry schedule of one delivery (spec 6 rule 6: "not shown"; documented in
// docs/webhooks.md). Pure, so the delivery workflow can use it deterministically.
//
// With the default base of 10 s and 8 attempts the waits are 10 s, 1 min, 5 min, 30 min, 2 h,
// 6 h and 12 h: a receiver that is down for most of a day still gets the event, and a short
// blip costs seconds. The waits grow roughly fivefold so that a dead receiver costs few requests.

export const RETRY_MULTIPLIERS = [1, 6, 30, 180, 720, 2160, 4320] as const;

/** Wait after failed attempt `attempt` (1-based) before the next one, without jitter. */
export function retryDelayMs(attempt: number, baseMs: number): number {
  const i = Math.min(Math.max(attempt, 1), RETRY_MULTIPLIERS.length) - 1;
  return baseMs * RETRY_MULTIPLIERS[i]!;
}

/** ±10 % spread so that deliveries that failed together do not retry in lockstep. */
export function withJitter(ms: number, random: number): number {
  return Math.round(ms * (0.9 + 0.2 * random));
}
