import { config } from '../config';
import { log } from '../logger';
import { redis } from '../redis';

// Turns within a due instant (docs/publishing.md "Turns"). Temporal fires the start delays and
// timers due at one instant in the order they were created, so a workspace that scheduled
// 10,000 posts for Monday 9:00 before another scheduled its one would have all of its posts
// handed to the workers first, and task-queue fairness (which orders what waits in matching)
// only reaches the other post once it has been fired. The n-th post a workspace schedules for
// an instant is therefore held (n − 1) ms past it, at most PUBLISH_TURN_SPREAD_MS: every
// workspace's first post is fired first, then every workspace's second, and so on, and a small
// workspace's posts are all out before a large one's tail. The burst loses nothing it would not
// have waited anyway: its tail is fired within the spread, far faster than workers publish it.

/** How long Redis may take to hand out a turn before the post goes without one (a turn is an order, not a promise). */
const TURN_TIMEOUT_MS = 100;

/**
 * The turn of one more post of `workspaceId` due at `fireAtMs`: 0 for the first, then 1 ms more
 * for each, up to PUBLISH_TURN_SPREAD_MS. Counted in Redis per workspace and instant (kept an
 * hour past the instant); a reschedule to the same instant takes a new turn. Without Redis the
 * post has turn 0, as before turns existed.
 */
export async function publishTurnMs(workspaceId: string, fireAtMs: number): Promise<number> {
  const spread = config.publish.turnSpreadMs;
  if (spread <= 0) return 0;
  const key = `publish-turn:${workspaceId}:${fireAtMs}`;
  let timer: NodeJS.Timeout | undefined;
  try {
    const counted = redis()
      .multi()
      .incr(key)
      .pexpireat(key, fireAtMs + 3_600_000)
      .exec();
    const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), TURN_TIMEOUT_MS)));
    const replies = await Promise.race([counted, timedOut]);
    const n = Number(replies?.[0]?.[1] ?? 1);
    return Math.min(Math.max(n - 1, 0), spread);
  } catch (err) {
    log.warn('publish turn not counted; the post goes without one', { workspaceId, err });
    return 0;
  } finally {
    clearTimeout(timer);
  }
}
