import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { reviewPostWorkflow } from '../../../workflows/reviewPost';
import { config } from '../../config';
import { log } from '../../logger';
import { reviewOf } from '../../posts/review';
import type { PostRow } from '../../posts/row';
import { SEARCH } from '../../searchAttributes';
import { REVIEW_POST, reviewDecidedSignal } from '../contracts/reviewPost';
import { startPriority } from './priority';

// The starter of the review workflow (lib/temporal/contracts/reviewPost.ts, docs/review.md): a
// round's start and its decision signal.

/**
 * Starts the round's deadline workflow (a second start for the same round is a no-op).
 * Recording the round as started is the caller's (lib/posts/afterCommit.ts startPostReview); a
 * round whose start was lost is started by the reconciler.
 */
export async function startReviewWorkflow(client: Client, post: PostRow): Promise<void> {
  const round = post.review_round ?? 0;
  const review = reviewOf(post);
  try {
    await client.workflow.start<typeof reviewPostWorkflow>(REVIEW_POST.type, {
      taskQueue: config.temporalTaskQueue,
      workflowId: REVIEW_POST.id(post.id, round),
      args: [{ postId: post.id, round, deadlineMs: review.deadline ? Date.parse(review.deadline) : null }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: post.workspace_id },
        { key: SEARCH.project, value: post.project_id ?? '' },
        { key: SEARCH.post, value: post.id },
      ],
      ...startPriority('review', post.workspace_id),
      staticSummary: `Review round ${round} of post ${post.id}`,
      staticDetails: `Reviewer ${review.reviewerUserId ?? 'any workspace admin'}; deadline ${review.deadline ?? 'none'}. Marks the round overdue at the deadline; never approves.`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Tells the round's workflow that it was decided (the decision is already committed). */
export async function signalReviewDecided(client: Client, postId: string, round: number): Promise<void> {
  try {
    await client.workflow.getHandle(REVIEW_POST.id(postId, round)).signal(reviewDecidedSignal, round);
  } catch (err) {
    // Already closed, or never started: the decision is in the row either way.
    if (err instanceof WorkflowNotFoundError) return;
    log.warn('review workflow signal failed; the workflow re-reads the post later', { postId, round, err });
  }
}
