import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { config } from '../config';
import { db } from '../db';
import { log } from '../logger';
import { reviewOf } from '../posts/review';
import type { PostRow } from '../posts/present';
import { reviewDecidedSignal, reviewPostWorkflow } from '../../workflows/reviewPost';
import { SEARCH, temporalClient, workflowIds } from '../temporal';

// Client side of the review workflow (workflows/reviewPost.ts, docs/review.md), for the API.

/**
 * Starts the round's deadline workflow (a second start for the same round is a no-op), then
 * records the round as started; a round whose start was lost is started by the reconciler.
 */
export async function startReviewWorkflow(client: Client, post: PostRow, db?: Knex): Promise<void> {
  const round = post.review_round ?? 0;
  const review = reviewOf(post);
  try {
    await client.workflow.start(reviewPostWorkflow, {
      taskQueue: config.temporalTaskQueue,
      workflowId: workflowIds.review(post.id, round),
      args: [{ postId: post.id, round, deadlineMs: review.deadline ? Date.parse(review.deadline) : null }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: post.workspace_id },
        { key: SEARCH.project, value: post.project_id ?? '' },
        { key: SEARCH.post, value: post.id },
      ],
      staticSummary: `Review round ${round} of post ${post.id}`,
      staticDetails: `Reviewer ${review.reviewerUserId ?? 'any workspace admin'}; deadline ${review.deadline ?? 'none'}. Marks the round overdue at the deadline; never approves.`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  if (db) await db('posts').where({ id: post.id }).andWhere('review_synced_round', '<', round).update({ review_synced_round: round });
}

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

/** Tells the round's workflow that it was decided (the decision is already committed). */
export async function signalReviewDecided(client: Client, postId: string, round: number): Promise<void> {
  try {
    await client.workflow.getHandle(workflowIds.review(postId, round)).signal(reviewDecidedSignal, round);
  } catch (err) {
    // Already closed, or never started: the decision is in the row either way.
    if (err instanceof WorkflowNotFoundError) return;
    log.warn('review workflow signal failed; the workflow re-reads the post later', { postId, round, err });
  }
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
