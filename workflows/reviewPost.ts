import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ReviewActivities } from '../activities/review';
import { reviewDecidedSignal, reviewStatusQuery, type ReviewInput, type ReviewStatus } from '../lib/temporal/contracts/reviewPost';

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

// The signal and the query are the workflow's contract, shared with its starter
// (lib/temporal/start/reviewPost.ts).
export { reviewDecidedSignal, reviewStatusQuery, type ReviewStatus } from '../lib/temporal/contracts/reviewPost';

/** How often an open round re-reads the post when no signal comes (a lost signal, a deleted post). */
const RECHECK_MS = 24 * 3600_000;

export async function reviewPostWorkflow(input: ReviewInput): Promise<{ outcome: 'closed'; overdue: boolean }> {
  let decided = false;
  const status: ReviewStatus = { round: input.round, state: 'waiting', deadlineMs: input.deadlineMs };
  setHandler(reviewDecidedSignal, (round) => {
    if (round === input.round) decided = true;
  });
  setHandler(reviewStatusQuery, () => status);

  let overdue = false;
  if (input.deadlineMs !== null) {
    const waitMs = input.deadlineMs - Date.now();
    if (waitMs > 0) await condition(() => decided, waitMs, { summary: `Review deadline of round ${input.round}` });
    if (!decided) {
      overdue = await markReviewOverdue({ postId: input.postId, round: input.round });
      if (overdue) status.state = 'overdue';
    }
  }
  while (!decided) {
    if (await condition(() => decided, RECHECK_MS, { summary: `Daily re-check of open review round ${input.round}` })) break;
    if (!(await reviewRoundOpen({ postId: input.postId, round: input.round }))) break;
  }
  status.state = 'closed';
  return { outcome: 'closed', overdue };
}
