import { config } from '../config';
import { db } from '../db';
import { log } from '../logger';
import { Post } from '../models';

// Turns within a due instant (docs/publishing.md "Turns"). Temporal fires the start delays and
// timers due at one instant in the order they were created, so a workspace that scheduled
// 10,000 posts for Monday 9:00 before another scheduled its one would have all of its posts
// handed to the workers first, and task-queue fairness (which orders what waits in matching)
// only reaches the other post once it has been fired. A workspace's posts of one instant are
// therefore held 0, 1, 2 … ms past it, at most PUBLISH_TURN_SPREAD_MS: every workspace's first
// post is fired first, then every workspace's second, and so on, and a small workspace's posts
// are all out before a large one's tail. The burst loses nothing it would not have waited
// anyway: its tail is fired within the spread, far faster than workers publish it.

/**
 * The turn of a scheduled post: how many of its workspace's posts scheduled for the same time
 * have a smaller id, in milliseconds, up to PUBLISH_TURN_SPREAD_MS. Read from the posts
 * themselves (the partial index posts_turns, migration 20261202100400, a range bounded at the
 * spread), so it needs no state of its own and a post keeps its turn however often its workflow
 * is told of it (a retry, the reconciler). The ids are random: the turns of one workspace's posts
 * follow no order of theirs, only the spread matters.
 */
export async function publishTurnMs(post: { id: string; workspace_id: string; scheduled_at: Date | string }): Promise<number> {
  const spread = config.publish.turnSpreadMs;
  if (spread <= 0) return 0;
  const before = Post.knexForWorkspace(post.workspace_id)
    .where({ scheduled_at: new Date(post.scheduled_at), status: 'scheduled' })
    .whereNull('deleted_at')
    .where('id', '<', post.id)
    .select(db().raw('1'))
    .limit(spread);
  try {
    const row = (await db().from(before.as('t')).count({ n: '*' }).first()) as { n: string | number } | undefined;
    return Math.min(Number(row?.n ?? 0), spread);
  } catch (err) {
    // A turn is an order, not a promise: without it the post fires at its time, as before turns.
    log.warn('publish turn not read; the post goes without one', { postId: post.id, err });
    return 0;
  }
}
