import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { startPostReview, unstartedReviews } from '../posts/afterCommit';

// The review workflow's rounds (docs/review.md) as the reconciler sees them; the workflow itself
// is started by lib/temporal/start/reviewPost.ts, after a commit through lib/posts/afterCommit.ts.

/** The reconciler's part (docs/review.md): pending rounds whose workflow start was lost. */
export async function reconcileReviews(client: Client, db: Knex): Promise<number> {
  const rows = await unstartedReviews(db, 500);
  for (const p of rows) await startPostReview(client, db, p);
  return rows.length;
}
