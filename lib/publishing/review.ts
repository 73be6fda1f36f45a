import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { startPostReview } from '../posts/afterCommit';
import type { PostRow } from '../posts/present';

// The review workflow's rounds (docs/review.md) as the reconciler sees them; the workflow itself
// is started by lib/temporal/start/reviewPost.ts, after a commit through lib/posts/afterCommit.ts.

/** The reconciler's part (docs/review.md): pending rounds whose workflow start was lost. */
export async function reconcileReviews(client: Client, db: Knex): Promise<number> {
  const rows = (await db('posts')
    .whereRaw('review_synced_round < review_round')
    .whereRaw(`review->>'state' = 'pending'`)
    .whereNull('deleted_at')
    .limit(500)) as PostRow[];
  for (const p of rows) await startPostReview(client, db, p);
  return rows.length;
}
