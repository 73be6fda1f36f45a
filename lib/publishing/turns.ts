import type { Knex } from 'knex';
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
 *
 * As a subquery over `post` (values, or column references of a statement's own row): the write
 * that schedules a post returns its turn with the row (lib/posts/write.ts), and a row without one
 * has it read by publishTurnMs. A post not scheduled has turn 0.
 */
export function turnSubquery(
  post: { workspaceId: Knex.Raw | string; scheduledAt: Knex.Raw | Date; id: Knex.Raw | string },
  spread = config.publish.turnSpreadMs,
): Knex.QueryBuilder {
  // A column reference stands where a value would (the workspace's condition is the model's).
  const before = Post.knexForWorkspace(post.workspaceId as string)
    .where('scheduled_at', post.scheduledAt)
    .where('status', 'scheduled')
    .whereNull('deleted_at')
    .where('id', '<', post.id)
    .select(db().raw('1'))
    .limit(Math.max(spread, 0));
  return db()
    .from(before.as('t'))
    .select(db().raw('least(count(*), ?)::int as turn', [Math.max(spread, 0)]));
}

/** The turn of a scheduled post, read (turnSubquery); 0 when it cannot be read. */
export async function publishTurnMs(post: { id: string; workspace_id: string; scheduled_at: Date | string }): Promise<number> {
  if (config.publish.turnSpreadMs <= 0) return 0;
  try {
    const row = (await turnSubquery({ workspaceId: post.workspace_id, scheduledAt: new Date(post.scheduled_at), id: post.id }).first()) as
      { turn: number } | undefined;
    return Number(row?.turn ?? 0);
  } catch (err) {
    // A turn is an order, not a promise: without it the post fires at its time, as before turns.
    log.warn('publish turn not read; the post goes without one', { postId: post.id, err });
    return 0;
  }
}
