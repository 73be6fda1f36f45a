import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { db } from '../db';
import { log } from '../logger';
import type { PostRow } from '../posts/present';
import { temporalClient } from '../temporal';
import { startReviewWorkflow } from '../temporal/start/reviewPost';

// The review workflow's rounds (docs/review.md) as the API and the reconciler see them; the
// workflow itself is started by lib/temporal/start/reviewPost.ts.

/** The reconciler's part (docs/review.md): pending rounds whose workflow start was lost. */
export async function reconcileReviews(client: Client, db: Knex): Promise<number> {
  const rows = (await db('posts')
    .whereRaw('review_synced_round < review_round')
    .whereRaw(`review->>'state' = 'pending'`)
    .whereNull('deleted_at')
    .limit(500)) as PostRow[];
  for (const p of rows) await startReviewWorkflow(client, p, db);
  return rows.length;
}

/**
 * After the commit of a change that opened a round (a review request, a PATCH): start its
 * workflow. The round is already durable; a Temporal outage only delays its deadline timer.
 */
export async function afterReviewStarted(post: PostRow): Promise<void> {
  try {
    await startReviewWorkflow(await temporalClient(), post, db());
  } catch (err) {
    log.warn('review workflow start failed', { postId: post.id, err });
  }
}
