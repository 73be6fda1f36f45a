import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ReviewActivities } from '../activities/review';

// One workflow per review round (id `review-<postId>-<round>`, docs/review.md): a durable
// deadline timer. Past the deadline the round turns `overdue` and a reminder event fires;
// nothing is ever approved by the clock. The decision itself is committed by the API (under the
// post's row lock, with its event) and then signalled here, so the post row is the truth and a
// lost signal only delays the end of this workflow until its next re-check.

const { markReviewOverdue, reviewRoundOpen } = proxyActivities<ReviewActivities>({
  // Both are idempotent by (post, round): the overdue mark and its event are written once.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export const reviewDecidedSignal = defineSignal<[round: number]>('reviewDecided');

export interface ReviewStatus {
  round: number;
  state: 'waiting' | 'overdue' | 'closed';
  deadlineMs: number | null;
}
export const reviewStatusQuery = defineQuery<ReviewStatus>('status');

/** How often an open round re-reads the post when no signal comes (a lost signal, a deleted post). */
const RECHECK_MS = 24 * 3600_000;

export async function reviewPostWorkflow(input: {
  postId: string;
  round: number;
  deadlineMs: number | null;
}): Promise<{ outcome: 'closed'; overdue: boolean }> {
  let decided = false;
  const status: ReviewStatus = { round: input.round, state: 'waiting', deadlineMs: input.deadlineMs };
  setHandler(reviewDecidedSignal, (round) => {
    if (round === input.round) decided = true;
  });
  setHandler(reviewStatusQuery, () => status);

  let overdue = false;
  if (input.deadlineMs !== null) {
    const waitMs = input.deadlineMs - Date.now();
    if (waitMs > 0) await condition(() => decided, waitMs);
    if (!decided) {
      overdue = await markReviewOverdue({ postId: input.postId, round: input.round });
      if (overdue) status.state = 'overdue';
    }
  }
  while (!decided) {
    if (await condition(() => decided, RECHECK_MS)) break;
    if (!(await reviewRoundOpen({ postId: input.postId, round: input.round }))) break;
  }
  status.state = 'closed';
  return { outcome: 'closed', overdue };
}
